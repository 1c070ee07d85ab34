package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFlinkCommand checks the command's contract: the script on
// stdout or in -o, the manifest in --k8s, exit 1 when Flink would run
// the pipeline otherwise unless --allow-differences, and no secret value
// anywhere.
func TestExportFlinkCommand(t *testing.T) {
	const secret = "Pw-n0t-in-any-0utput"
	t.Setenv("ETLD_MYSQL_DSN", "etld:"+secret+"@tcp(127.0.0.1:3306)/etld")
	dir := workdir(t)
	// sensor-stats with a pipeline-wide state_ttl, and with its transform
	// keeping its state forever under it: Flink has one TTL per job.
	stats := readFile(t, filepath.Join(dir, "configs/examples/sensor-stats.yaml"))
	ttl := strings.Replace(stats, "\nname: sensor-stats\n", "\nname: sensor-stats\nstate_ttl: 1h\n", 1)
	writeFile(t, filepath.Join(dir, "ttl.yaml"), ttl)
	writeFile(t, filepath.Join(dir, "ttl-own.yaml"), strings.Replace(ttl, "  - name: per_sensor\n", "  - name: per_sensor\n    state_ttl: 0\n", 1))
	for _, tc := range []struct {
		name string
		args []string
		code int
		// inStdout must be in stdout, inStderr in stderr.
		inStdout, inStderr string
	}{
		{"no differences", []string{"configs/examples/sensor-stats.yaml"}, 0, "CREATE TEMPORARY VIEW `per_sensor` AS", ""},
		{"differences refused", []string{"configs/examples/mysql-sensor-stats.yaml"}, 1, "'password' = '${ETLD_MYSQL_DSN_PASSWORD}'", "pass --allow-differences to accept them"},
		{"differences allowed", []string{"--allow-differences", "configs/examples/mysql-sensor-stats.yaml"}, 0, "PRIMARY KEY (`id`) NOT ENFORCED", "sinks[0].create_table"},
		{"flags after the file", []string{"configs/examples/mysql-sensor-stats.yaml", "--allow-differences"}, 0, "'connector' = 'jdbc'", ""},
		{"state_ttl", []string{"ttl.yaml"}, 0, "SET 'table.exec.state.ttl' = '60 min';", ""},
		{"a transform's own state_ttl refused", []string{"ttl-own.yaml"}, 1, "SET 'table.exec.state.ttl' = '60 min';", "transforms[0].state_ttl"},
		{"a transform's own state_ttl allowed", []string{"--allow-differences", "ttl-own.yaml"}, 0, "-- Differences: 1", "Flink has one state TTL per job"},
		{"no engine", []string{}, 2, "", "name the target engine"},
		{"no file", []string{"flink"}, 2, "", "name at least one pipeline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"export"}, tc.args...)
			if len(tc.args) > 0 && tc.args[0] != "flink" {
				args = append([]string{"export", "flink"}, tc.args...)
			}
			stdout, stderr, code := etld(t, dir, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stdout, tc.inStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.inStdout, stdout)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.inStderr, stderr)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("the secret shows:\n%s\n%s", stdout, stderr)
			}
		})
	}
	t.Run("files", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "job.sql")
		k8s := filepath.Join(t.TempDir(), "job.yaml")
		stdout, stderr, code := etld(t, dir, "export", "flink", "--allow-differences", "-o", out, "--k8s", k8s, "configs/examples/mysql-sensor-stats.yaml")
		if code != 0 || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
		}
		script, manifest := readFile(t, out), readFile(t, k8s)
		if !strings.Contains(script, "EXECUTE STATEMENT SET") {
			t.Errorf("the script lacks its statement set:\n%s", script)
		}
		for _, want := range []string{"kind: FlinkDeployment", "kind: ConfigMap", "    EXECUTE STATEMENT SET", "jarURI: local:///opt/flink/usrlib/sql-runner.jar"} {
			if !strings.Contains(manifest, want) {
				t.Errorf("the manifest lacks %q:\n%s", want, manifest)
			}
		}
		if strings.Contains(script+manifest, secret) {
			t.Error("a file holds the secret")
		}
	})
	t.Run("a directory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "scripts")
		_, stderr, code := etld(t, dir, "export", "flink", "--allow-differences", "-o", out, "configs/examples")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		entries, err := os.ReadDir(out)
		if err != nil || len(entries) < 10 {
			t.Fatalf("want a script per example in %s, got %d (%v)", out, len(entries), err)
		}
	})
}

// The script, the differences on stderr, the -o file and the --k8s
// manifest keep the file's ${VAR} references wherever the values would
// show: a token in a WHERE literal and in an option, a directory in a
// path and in a dead-letter path.
func TestExportFlinkKeepsReferences(t *testing.T) {
	const token, dataDir = "tok-8f3a2c-n0t-0ut", "/srv/d1r-n0t-0ut"
	t.Setenv("ETLD_TEST_EXPORT_TOKEN", token)
	t.Setenv("ETLD_TEST_EXPORT_DIR", dataDir)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.yaml"), `version: 1
name: refs
sources:
  - name: events
    type: file
    path: ${ETLD_TEST_EXPORT_DIR}/in/*.csv
    on_error: dead-letter
    dead_letter: ${ETLD_TEST_EXPORT_DIR}/bad.jsonl
    schema: [k STRING, v BIGINT]
transforms:
  - name: kept
    sql: SELECT k, v FROM events WHERE k <> '${ETLD_TEST_EXPORT_TOKEN}'
sinks:
  - name: out
    from: kept
    type: kafka
    brokers: 127.0.0.1:9092
    topic: out-${ETLD_TEST_EXPORT_TOKEN}
    format: json
`)
	out, k8s := filepath.Join(dir, "refs.sql"), filepath.Join(dir, "refs.yaml")
	stdout, stderr, code := etld(t, dir, "export", "flink", "p.yaml", "--allow-differences", "-o", out, "--k8s", k8s)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script, manifest := readFile(t, out), readFile(t, k8s)
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr, "the script": script, "the manifest": manifest} {
		if strings.Contains(text, token) || strings.Contains(text, dataDir) {
			t.Errorf("%s holds a value of a ${VAR}:\n%s", name, text)
		}
	}
	for _, want := range []string{
		"k <> '${ETLD_TEST_EXPORT_TOKEN}'",
		"'topic' = 'out-${ETLD_TEST_EXPORT_TOKEN}'",
		"nothing is written to ${ETLD_TEST_EXPORT_DIR}/bad.jsonl",
	} {
		if !strings.Contains(script, want) || !strings.Contains(manifest, want) {
			t.Errorf("the script or the manifest lacks %q:\n%s", want, script)
		}
	}
	if !strings.Contains(stderr, "${ETLD_TEST_EXPORT_DIR}/in") {
		t.Errorf("the differences on stderr do not name the path by its reference:\n%s", stderr)
	}
}
