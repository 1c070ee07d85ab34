package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// The secrets of the end-to-end tests hold every character that quoting,
// JSON, YAML or URL escaping changes, and a newline.
const (
	e2ePassword = "p@ss\"w\\rd%2F:/x\nend"
	// The DSN case: with a '/' in the password the driver's parse error
	// quotes the part before it ("etl:Tr0ub4dor").
	e2eMyPW = "Tr0ub4dor/&3:x"
	// A source named from a variable: /metrics puts names in labels.
	e2eNameToken = "q7x9k2_src"
)

var e2eSecrets = map[string]string{
	"ETLD_E2E_PASSWORD":   e2ePassword,
	"ETLD_E2E_MYPW":       e2eMyPW,
	"ETLD_E2E_NAME_TOKEN": e2eNameToken,
}

// secretPipelines writes a pipelines dir whose files get their secrets
// wrong in every way an error can repeat them: a decode error (rows), a
// driver's DSN parse error (mysql), a runtime error with a path (file
// sink), a name in metric labels, and a SQL literal for explain.
func secretPipelines(t *testing.T) (work, dir string) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	writeFile(t, blocker, "")
	files := map[string]string{
		"leaky.yaml": strings.Replace(fmt.Sprintf(endlessDatagen, "leaky"), "rate: 20", "rows: ${ETLD_E2E_PASSWORD}", 1),
		"dsn.yaml": strings.Replace(fmt.Sprintf(endlessDatagen, "dsn"), "type: blackhole",
			"type: mysql\n    dsn: etl:${ETLD_E2E_MYPW}@tcp(127.0.0.1:1)db\n    table: t", 1),
		"fileout.yaml": strings.Replace(fmt.Sprintf(endlessDatagen, "fileout"), "type: blackhole",
			"type: file\n    path: \""+blocker+"/${ETLD_E2E_PASSWORD}/out.csv\"", 1),
		"named.yaml": strings.NewReplacer("name: gen", "name: ${ETLD_E2E_NAME_TOKEN}", "from: gen", "from: ${ETLD_E2E_NAME_TOKEN}").Replace(fmt.Sprintf(endlessDatagen, "named")),
	}
	return pipelinesDir(t, files)
}

// secretEnv is the secrets, after an admin address for the daemon.
func secretEnv() []string {
	env := []string{"ETLD_ADMIN_ADDRESS=127.0.0.1:0"}
	for k, v := range e2eSecrets {
		env = append(env, k+"="+v)
	}
	return env
}

// etldWith runs etld in dir with env added and returns its combined
// output and exit code.
func etldWith(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(etldBin, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running etld: %v", err)
	}
	return string(out), code
}

// assertNoSecret fails for every form of every secret in text, and when
// text does not name each variable in names.
func assertNoSecret(t *testing.T, what, text string, names ...string) {
	t.Helper()
	for name, secret := range e2eSecrets {
		if leaks := testenv.SecretLeaks(text, secret); len(leaks) > 0 {
			t.Errorf("%s shows the value of %s (%v):\n%s", what, name, leaks, text)
		}
	}
	for _, name := range names {
		if !strings.Contains(text, "${"+name+"}") {
			t.Errorf("%s does not name ${%s}:\n%s", what, name, text)
		}
	}
}

func TestSecretNeverPrintedByTheCLI(t *testing.T) {
	work, dir := secretPipelines(t)
	env := secretEnv()
	file := func(name string) string { return filepath.Join(dir, name) }

	out, code := etldWith(t, work, env, "validate", dir)
	if code != 1 || !strings.Contains(out, "rows: the value of ${ETLD_E2E_PASSWORD} is not an integer") ||
		!strings.Contains(out, "sinks[0].dsn: default addr for network 'etl:${ETLD_E2E_MYPW}' unknown") {
		t.Errorf("etld validate: exit %d, want both errors naming their variable:\n%s", code, out)
	}
	assertNoSecret(t, "etld validate", out, "ETLD_E2E_PASSWORD", "ETLD_E2E_MYPW")

	out, _ = etldWith(t, work, env, "explain", file("leaky.yaml"))
	assertNoSecret(t, "etld explain leaky.yaml", out, "ETLD_E2E_PASSWORD")
	out, _ = etldWith(t, work, env, "explain", file("dsn.yaml"))
	assertNoSecret(t, "etld explain dsn.yaml", out, "ETLD_E2E_MYPW")
	out, code = etldWith(t, work, env, "explain", file("named.yaml"))
	if code != 0 {
		t.Errorf("etld explain named.yaml: exit %d\n%s", code, out)
	}
	assertNoSecret(t, "etld explain named.yaml", out, "ETLD_E2E_NAME_TOKEN")

	// A valid pipeline whose SQL holds the secret as a literal: explain
	// prints the plan's expressions.
	sqlFile := filepath.Join(t.TempDir(), "sqlsecret.yaml")
	writeFile(t, sqlFile, "version: 1\nname: sqlsecret\nsources:\n  - name: gen\n    type: datagen\n    rows: 1\n    schema: [s STRING]\n"+
		"transforms:\n  - name: t\n    sql: \"SELECT s FROM gen WHERE s <> '${ETLD_E2E_MYPW}'\"\nsinks:\n  - name: out\n    from: t\n    type: blackhole\n")
	out, code = etldWith(t, work, env, "explain", sqlFile)
	if code != 0 || !strings.Contains(out, "Calc(") {
		t.Fatalf("explain of a valid pipeline: exit %d\n%s", code, out)
	}
	assertNoSecret(t, "etld explain (SQL literal)", out, "ETLD_E2E_MYPW")

	out, code = etldWith(t, work, env, "run", file("leaky.yaml"))
	if code != 1 {
		t.Errorf("etld run leaky.yaml: exit %d\n%s", code, out)
	}
	assertNoSecret(t, "etld run leaky.yaml", out, "ETLD_E2E_PASSWORD")
	// The file sink fails at Open with the path in its error; every log
	// line at debug level goes through the same redactor.
	for _, format := range []string{"text", "json"} {
		out, code = etldWith(t, work, env, "run", "--quiet", "--log-level", "debug", "--log-format", format, file("fileout.yaml"))
		if code != 1 || !strings.Contains(out, "not-a-dir/${ETLD_E2E_PASSWORD}") {
			t.Errorf("etld run fileout.yaml (%s logs): exit %d, want the open error naming the variable:\n%s", format, code, out)
		}
		assertNoSecret(t, "etld run --log-format "+format, out, "ETLD_E2E_PASSWORD")
	}

	// etld healthcheck reads etld.yaml as the daemon does (and the admin
	// address from the environment over the file's: not here).
	env = env[1:]
	for name, content := range map[string]string{
		"decode error":  "checkpoint_interval: ${ETLD_E2E_PASSWORD}\n",
		"address error": "admin:\n  address: \"${ETLD_E2E_PASSWORD}\"\n",
	} {
		cfg := filepath.Join(t.TempDir(), "etld.yaml")
		writeFile(t, cfg, content)
		out, code := etldWith(t, work, env, "healthcheck", "--config", cfg)
		if code != 1 {
			t.Errorf("etld healthcheck (%s): exit %d\n%s", name, code, out)
		}
		assertNoSecret(t, "etld healthcheck ("+name+")", out, "ETLD_E2E_PASSWORD")
	}
}

func TestSecretNeverPrintedByTheDaemon(t *testing.T) {
	work, dir := secretPipelines(t)
	d := startDaemon(t, work, secretEnv(), "--daemon", "--pipelines", dir, "--log-level", "debug")
	base := d.adminURL()
	var body string
	testenv.Eventually(t, 30*time.Second, "every pipeline failed or running", func() error {
		_, body = httpGet(t, base+"/pipelines")
		ps := pipelines(t, base)
		if st := ps["leaky.yaml"]; st.State != "failed" || !strings.Contains(st.Error, "is not an integer") {
			return fmt.Errorf("leaky: %+v", st)
		}
		if st := ps["dsn.yaml"]; st.State != "failed" || !strings.Contains(st.Error, "default addr") {
			return fmt.Errorf("dsn: %+v", st)
		}
		if st := ps["fileout.yaml"]; !strings.Contains(st.Error, "not-a-dir") {
			return fmt.Errorf("fileout: %+v", st)
		}
		if st := ps["named.yaml"]; st.State != "running" || len(st.Sources) != 1 || st.Sources[0].In == 0 {
			return fmt.Errorf("named: %+v", st)
		}
		return nil
	})
	_, ready := httpGet(t, base+"/readyz")
	_, metrics := httpGet(t, base+"/metrics")
	if !strings.Contains(metrics, `etld_source_rows_read_total{pipeline="named",source="${ETLD_E2E_NAME_TOKEN}"}`) {
		t.Errorf("/metrics lacks the source named by its variable:\n%s", metrics)
	}
	d.signal(syscall.SIGTERM)
	d.exitCode()
	assertNoSecret(t, "/pipelines", body, "ETLD_E2E_PASSWORD", "ETLD_E2E_MYPW", "ETLD_E2E_NAME_TOKEN")
	assertNoSecret(t, "/readyz", ready, "ETLD_E2E_PASSWORD", "ETLD_E2E_MYPW")
	assertNoSecret(t, "/metrics", metrics, "ETLD_E2E_NAME_TOKEN")
	assertNoSecret(t, "the daemon's log", d.logs(), "ETLD_E2E_PASSWORD", "ETLD_E2E_MYPW", "ETLD_E2E_NAME_TOKEN")
}

// A variable that holds no secret (a path, by its name and its option)
// is shown in the errors and logs about it: an error that names only
// ${ETLD_E2E_OUT} hides which file failed. The secret beside it in the
// same file stays hidden.
func TestPlainVariableShownInErrors(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	writeFile(t, blocker, "")
	outPath := blocker + "/faults/out.csv"
	file := filepath.Join(t.TempDir(), "plainvar.yaml")
	writeFile(t, file, strings.Replace(fmt.Sprintf(endlessDatagen, "plainvar"), "type: blackhole",
		"type: file\n    path: ${ETLD_E2E_OUT}\n  - name: db\n    from: gen\n    type: mysql\n    dsn: etl:${ETLD_E2E_MYPW}@tcp(127.0.0.1:1)/db\n    table: t", 1))
	env := append(secretEnv(), "ETLD_E2E_OUT="+outPath)
	for _, format := range []string{"text", "json"} {
		out, code := etldWith(t, t.TempDir(), env, "run", "--quiet", "--log-format", format, file)
		if code != 1 || !strings.Contains(out, "not-a-dir/faults/out.csv") {
			t.Errorf("etld run (%s logs): exit %d, want the error to show the output path %s:\n%s", format, code, outPath, out)
		}
		if strings.Contains(out, "${ETLD_E2E_OUT}") {
			t.Errorf("etld run (%s logs) hides a path that is no secret:\n%s", format, out)
		}
		assertNoSecret(t, "etld run plainvar.yaml --log-format "+format, out)
	}
}
