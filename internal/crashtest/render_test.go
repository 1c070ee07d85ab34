package crashtest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write testdata/rendered/*.yaml from the pipeline templates")

// renderedTemplates is every pipeline template of the harness by a name
// of its own.
func renderedTemplates() map[string]string {
	m := map[string]string{"full-disk": fullDiskPipeline}
	for _, sc := range []scenario{
		fileToFile, fileGroupByToFile, fileTopNToFile, fileGroupByToMySQL,
		kafkaGroupByToES, kafkaToKafka, fileToKafka,
		fileKafkaJoinToMySQL, fileTopNToMySQL, fileOverToFile,
		fileUnionToFile, unionToKafka,
	} {
		m[sc.name] = sc.pipeline
	}
	for _, lc := range lateCases {
		m["late-"+strings.ReplaceAll(lc.name, " ", "-")] = lc.pipeline
	}
	return m
}

// renderedVars holds every variable the templates use, with fixed values.
var renderedVars = map[string]string{
	"kafka":  "127.0.0.1:9092",
	"topic":  "crash_topic",
	"group":  "crash_group",
	"es":     "http://127.0.0.1:9200",
	"index":  "crash_index",
	"dsn":    "etld:pw@tcp(127.0.0.1:3306)/etld",
	"table":  "crash_table",
	"outdir": "/disk",
	"proxy":  "127.0.0.1:4000",
}

// renderBoth renders tmpl for the reference run and for the third life of
// the second round of crashing runs, as two YAML documents.
func renderBoth(t *testing.T, tmpl string) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, e := range []*env{
		{Dir: "/crash", Out: "ref", Vars: renderedVars},
		{Dir: "/crash", Out: "out", Round: 2, Life: 3, Vars: renderedVars},
	} {
		yaml, err := e.yaml(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(yaml)
	}
	return b.Bytes()
}

// TestPipelinesRender renders every pipeline template with fixed
// variables and compares the YAML with testdata/rendered/NAME.yaml, byte
// for byte: however the templates are written, the pipelines they give
// stay the same unless a golden changes with them. The Kafka switches
// (ETLD_CRASH_KAFKA_GROUP_PER_LIFE=1 and ETLD_CRASH_KAFKA_EXACTLY_ONCE=off
// together) give NAME.switched.yaml where they change the YAML. -update
// writes the goldens of the switches set.
func TestPipelinesRender(t *testing.T) {
	suffix := ".yaml"
	switch {
	case sameGroup && exactlyOnce == "auto":
	case !sameGroup && exactlyOnce == "off":
		suffix = ".switched.yaml"
	default:
		t.Skip("the goldens hold the Kafka switches both unset or both set")
	}
	dir := filepath.Join("testdata", "rendered")
	templates := renderedTemplates()
	for name, tmpl := range templates {
		got := renderBoth(t, tmpl)
		def, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
		if suffix != ".yaml" && err == nil && bytes.Equal(got, def) {
			continue // the switches change nothing here
		}
		path := filepath.Join(dir, name+suffix)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (go test -run TestPipelinesRender -update writes it)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(want) && i < len(got) && want[i] == got[i] {
				i++
			}
			t.Errorf("%s renders other than %s, first at byte %d (line %d):\nwant %q\ngot  %q",
				name, path, i, bytes.Count(want[:i], []byte("\n"))+1, excerpt(want, i), excerpt(got, i))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		base := filepath.Base(f)
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".switched")
		if _, ok := templates[base]; !ok {
			t.Errorf("%s is the golden of no template", f)
		}
	}
}
