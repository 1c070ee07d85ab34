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
		fileKafkaJoinToMySQL, fileTopNToMySQL, fileOverToFile, fileMatchToFile,
		fileUnionToFile, unionToKafka, fileLateRowsToFile, fileWindowRescale, binlogGroupByToMySQL, binlogToPostgres, fileToParquet, fileToParquetS3, fileToAvroS3,
		fileUDAFToFile, fileGroupByRescale, fileGroupByBackfilled, fileKeyedRescale,
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
	"kafka":   "127.0.0.1:9092",
	"topic":   "crash_topic",
	"group":   "crash_group",
	"es":      "http://127.0.0.1:9200",
	"index":   "crash_index",
	"dsn":     "etld:pw@tcp(127.0.0.1:3306)/etld",
	"table":   "crash_table",
	"outdir":  "/disk",
	"proxy":   "127.0.0.1:4000",
	"src":     "crash_src",
	"stop":    "latest",
	"bucket":  "crash-bucket",
	"s3":      "http://127.0.0.1:7070",
	"pgdsn":   "postgres://etld:pw@127.0.0.1:5432/etld",
	"pgtable": "crash_pg_table",
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
// stay the same unless a golden changes with them. Rendered with the
// Kafka switches set (ETLD_CRASH_KAFKA_GROUP_PER_LIFE=1 and
// ETLD_CRASH_KAFKA_EXACTLY_ONCE=off), a template gives
// NAME.switched.yaml where there is one, NAME.yaml where they change
// nothing. -update writes the goldens.
func TestPipelinesRender(t *testing.T) {
	defer func(same bool, once string) { sameGroup, exactlyOnce = same, once }(sameGroup, exactlyOnce)
	render := func(tmpl string, same bool, once string) []byte {
		sameGroup, exactlyOnce = same, once
		return renderBoth(t, tmpl)
	}
	dir := filepath.Join("testdata", "rendered")
	templates := renderedTemplates()
	for name, tmpl := range templates {
		def, switched := render(tmpl, true, "auto"), render(tmpl, false, "off")
		path, switchedPath := filepath.Join(dir, name+".yaml"), filepath.Join(dir, name+".switched.yaml")
		if *update {
			writeGolden(t, path, def)
			if !bytes.Equal(switched, def) {
				writeGolden(t, switchedPath, switched)
			} else if err := os.Remove(switchedPath); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		}
		sameGolden(t, path, def)
		if _, err := os.Stat(switchedPath); err != nil {
			switchedPath = path
		}
		sameGolden(t, switchedPath, switched)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".yaml"), ".switched")
		if _, ok := templates[base]; !ok {
			t.Errorf("%s is the golden of no template", f)
		}
	}
}

func writeGolden(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameGolden fails t unless got is the golden at path.
func sameGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -run TestPipelinesRender -update writes it)", err)
		return
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		t.Errorf("the template renders other than %s, first at byte %d (line %d):\nwant %q\ngot  %q",
			path, i, bytes.Count(want[:i], []byte("\n"))+1, excerpt(want, i), excerpt(got, i))
	}
}
