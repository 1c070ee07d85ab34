package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/plan"
)

var updateExplain = flag.Bool("update-explain", false, "rewrite testdata/explain/*")

// explainIn runs `etld explain ARGS` in process, from the repository's
// root as the examples' paths expect, with loopback placeholders for the
// examples' ${VAR}s (explain connects to nothing).
func explainIn(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Chdir(repoRoot(t))
	for name, value := range map[string]string{
		"KAFKA_BROKERS":  "127.0.0.1:9092",
		"ES_HOSTS":       "http://127.0.0.1:9200",
		"ETLD_MYSQL_DSN": "etld:pw@tcp(127.0.0.1:3306)/etld_test",
		"ETLD_PG_DSN":    "postgres://etld:pw@127.0.0.1:5432/etld_test",
	} {
		t.Setenv(name, value)
	}
	var out, errOut bytes.Buffer
	code = run(append([]string{"explain"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestExplainFormatsOfTheExamples: each format over the examples'
// directory against its golden file (the plan package's golden files
// cover each example alone), and the text of one file unchanged by
// --format text.
func TestExplainFormatsOfTheExamples(t *testing.T) {
	for _, c := range []struct{ format, golden string }{
		{"text", "examples.txt"}, {"json", "examples.json"}, {"dot", "examples.dot"}, {"mermaid", "examples.mmd"},
	} {
		t.Run(c.format, func(t *testing.T) {
			out, errOut, code := explainIn(t, "--format", c.format, "configs/examples")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			// stderr holds the warnings of the text format (unbounded
			// state), and nothing else.
			for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if l != "" && (c.format != "text" || !strings.Contains(l, ": warning: ")) {
					t.Fatalf("stderr holds %q", l)
				}
			}
			path := filepath.Join(repoRoot(t), "cmd", "etld", "testdata", "explain", c.golden)
			if *updateExplain {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestExplainFormats -update-explain writes it)", err)
			}
			if out != string(want) {
				t.Errorf("etld explain --format %s configs/examples differs from %s; got:\n%s", c.format, path, out)
			}
		})
	}
	plain, _, code := explainIn(t, "configs/examples/sensor-stats.yaml")
	text, _, code2 := explainIn(t, "--format", "text", "configs/examples/sensor-stats.yaml")
	if code != 0 || code2 != 0 || plain != text || !strings.HasPrefix(plain, "pipeline sensor-stats (configs/examples/sensor-stats.yaml, streaming)\n") {
		t.Errorf("explain FILE (exit %d) and --format text (exit %d) differ or changed:\n%s\n---\n%s", code, code2, plain, text)
	}
}

// A file gives one JSON object, a directory an array of them.
func TestExplainJSONShape(t *testing.T) {
	out, errOut, code := explainIn(t, "--format", "json", "configs/examples/sensor-windows.yaml")
	var one plan.Description
	if err := json.Unmarshal([]byte(out), &one); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, errOut, out)
	}
	if one.Name != "sensor-windows" || len(one.Nodes) == 0 || len(one.Edges) == 0 {
		t.Errorf("description of sensor-windows: %+v", one)
	}
	out, errOut, code = explainIn(t, "--format", "json", "configs/examples")
	var all []plan.Description
	if err := json.Unmarshal([]byte(out), &all); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errOut)
	}
	files, _ := filepath.Glob("configs/examples/*.yaml")
	if len(all) != len(files) {
		t.Errorf("%d descriptions for %d example files", len(all), len(files))
	}
}

func TestExplainUnknownFormat(t *testing.T) {
	out, errOut, code := explainIn(t, "--format", "svg", "configs/examples/sensor-stats.yaml")
	if code != 2 || out != "" || !strings.Contains(errOut, `etld explain: unknown --format "svg": want text, json, dot, mermaid`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and the accepted formats", code, out, errOut)
	}
	if !strings.Contains(explainUsage, "--format text|json|dot|mermaid") {
		t.Errorf("the usage of explain does not list --format:\n%s", explainUsage)
	}
}

// A ${VAR} value that reached a SQL literal is hidden in every format,
// though each escapes the labels its own way.
func TestExplainHidesSecretsInEveryFormat(t *testing.T) {
	const secret = `s3cr"t<&>|#`
	t.Setenv("ETLD_EXPLAIN_SECRET", secret)
	file := filepath.Join(t.TempDir(), "secret.yaml")
	writeFile(t, file, "version: 1\nname: secret\nsources:\n  - name: gen\n    type: datagen\n    rows: 1\n    schema: [s STRING]\n"+
		"transforms:\n  - name: t\n    sql: \"SELECT s FROM gen WHERE s <> '${ETLD_EXPLAIN_SECRET}'\"\nsinks:\n  - name: out\n    from: t\n    type: blackhole\n")
	for _, format := range explainFormats {
		out, errOut, code := explainIn(t, "--format", format, file)
		if code != 0 || !strings.Contains(out, "Calc(") {
			t.Fatalf("--format %s: exit %d: %s%s", format, code, errOut, out)
		}
		for _, part := range []string{"s3cr", "#60;#38;#62;"} {
			if strings.Contains(out, part) {
				t.Errorf("--format %s shows the secret (%q):\n%s", format, part, out)
			}
		}
	}
}
