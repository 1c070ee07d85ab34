package export_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/export"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources"
)

var update = flag.Bool("update", false, "rewrite the expected scripts of testdata/")

// env is what the golden tests' ${VAR}s stand for. The secrets are
// values that must never show in a script.
var env = map[string]string{
	"ES_HOSTS":       "http://127.0.0.1:9200",
	"ES_PASSWORD":    "es-Secr3t-pw",
	"KAFKA_BROKERS":  "127.0.0.1:9092",
	"KAFKA_PASSWORD": "kafka-Secr3t-pw",
	"ETLD_MYSQL_DSN": "etld:my-Secr3t-pw@tcp(127.0.0.1:3306)/metrics",
	"ETLD_PG_DSN":    "postgres://etld:pg-Secr3t-pw@127.0.0.1:5432/metrics",
	"DB_PASSWORD":    "db-Secr3t-pw",
	// A token in SQL and in options, a directory in paths: every
	// ${VAR} stays a placeholder, secret or not.
	"API_TOKEN": "tok-Secr3t-8f3a2c",
	"DATA_DIR":  "/srv/Secr3t-data",
	"MIN_V":     "7",
}

var secrets = []string{"Secr3t"}

func lookup(name string) (string, bool) {
	v, ok := env[name]
	return v, ok
}

func registry() *connector.Registry {
	r := connector.NewRegistry()
	sources.Register(r)
	sinks.Register(r)
	formats.Register(r)
	return r
}

// exportFile plans and exports one pipeline file; the error text when
// either fails.
func exportFile(t *testing.T, file string, data []byte) (*export.Script, string) {
	t.Helper()
	sp, err := spec.Parse(file, data, lookup)
	if sp == nil {
		return nil, err.Error()
	}
	p, err := plan.Build(sp, plan.Env{Registry: registry()})
	if err != nil {
		return nil, err.Error()
	}
	t.Cleanup(func() { p.Close() })
	s, err := export.Flink(p)
	if err != nil {
		return nil, err.Error()
	}
	return s, ""
}

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("the output holds a secret value (%s):\n%s", s, got)
		}
	}
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: the output differs (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", golden, got, want)
	}
}

// TestExamples exports every example of configs/examples and compares
// the script, the differences in its header included, with
// testdata/examples/NAME.sql; an example that cannot be exported has
// its error there instead.
func TestExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "configs", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, msg := exportFile(t, "configs/examples/"+name+".yaml", data)
			got := msg
			if s != nil {
				got = s.SQL
			}
			checkGolden(t, filepath.Join("testdata", "examples", name+".sql"), got)
		})
	}
}

// TestCases runs testdata/*.flinktest: a pipeline file, a line ----,
// then the script or the errors export gives, and after a second ----
// line, when there is one, the sample Kubernetes manifest.
func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.flinktest"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".flinktest"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			yaml, rest, ok := strings.Cut(string(data), "\n----\n")
			if !ok {
				t.Fatalf("%s: no ---- line", f)
			}
			withK8s := strings.HasPrefix(rest, "----\n") || strings.Contains(rest, "\n----\n")
			s, msg := exportFile(t, filepath.Base(f), []byte(yaml))
			got := msg + "\n"
			if s != nil {
				got = s.SQL
				if withK8s {
					got += "\n----\n" + export.K8s(s)
				}
			}
			checkGolden(t, f, yaml+"\n----\n"+got)
		})
	}
}
