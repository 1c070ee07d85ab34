package parquet

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// ReadWithPython reads the Parquet files path names (a glob) with reader
// (pyarrow or duckdb) through testdata/read.py, hive partitions too when
// hive: the column names and each row as Render gives values.
func ReadWithPython(t testing.TB, reader, path string, hive bool) ([]string, [][]any) {
	t.Helper()
	py := testenv.Python(t)
	script, err := filepath.Abs(filepath.Join(testdataDir(), "read.py"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{script, reader, path}
	if hive {
		args = append(args, "hive")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s reading %s: %v\n%s", reader, path, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var names []string
	if err := dec.Decode(&names); err != nil {
		t.Fatalf("%s: %v", reader, err)
	}
	var rows [][]any
	for dec.More() {
		var r []any
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s: %v", reader, err)
		}
		rows = append(rows, r)
	}
	return names, rows
}

// testdataDir is this package's testdata, wherever the test runs from.
func testdataDir() string {
	if _, err := os.Stat("testdata/read.py"); err == nil {
		return "testdata"
	}
	return filepath.Join(os.Getenv("ETLD_ROOT"), "formats", "parquet", "testdata")
}

// normalize turns rendered values into what JSON gives back.
func normalize(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadByOthers writes every type with etld and reads the file with
// pyarrow and with DuckDB: the same columns, in order, and the same
// values in every row.
func TestReadByOthers(t *testing.T) {
	schema := allTypes(t)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, schema, 300)
	enc, err := NewEncoder(Options{RowGroupSize: 64, Compression: "zstd"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "all.parquet")
	if err := os.WriteFile(path, formattest.WriteFile(t, enc, rows, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, reader := range []string{"pyarrow", "duckdb"} {
		t.Run(reader, func(t *testing.T) {
			names, got := ReadWithPython(t, reader, path, false)
			if !reflect.DeepEqual(names, schema.Names()) {
				t.Fatalf("columns %v, want %v", names, schema.Names())
			}
			if len(got) != len(rows) {
				t.Fatalf("%d rows, want %d", len(got), len(rows))
			}
			for k, r := range rows {
				for i, f := range schema.Fields {
					want := normalize(t, formattest.Render(r[i], f.Type))
					if !reflect.DeepEqual(got[k][i], want) {
						t.Fatalf("row %d column %s (%s): %s read %#v, etld wrote %#v", k+1, f.Name, f.Type, reader, got[k][i], want)
					}
				}
			}
		})
	}
}

// TestReadOthers has pyarrow and DuckDB copy a file etld wrote of every
// type with their own Parquet writers (DuckDB's TIMESTAMP_NS column, its
// choice of physical types, pyarrow's layout): etld reads back the rows
// it wrote.
func TestReadOthers(t *testing.T) {
	py := testenv.Python(t)
	schema := allTypes(t)
	rng := rand.New(rand.NewPCG(5, 6))
	rows := randomRows(rng, schema, 200)
	c := bulk(t, schema, Options{RowGroupSize: 50})
	dir := t.TempDir()
	src := filepath.Join(dir, "etld.parquet")
	if err := os.WriteFile(src, formattest.WriteFile(t, c.Encoder, rows, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join(testdataDir(), "read.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, writer := range []string{"pyarrow", "duckdb"} {
		t.Run(writer, func(t *testing.T) {
			dst := filepath.Join(dir, writer+".parquet")
			if out, err := exec.Command(py, script, "copy-"+writer, src, dst).CombinedOutput(); err != nil {
				t.Fatalf("%s copying: %v\n%s", writer, err, out)
			}
			file, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			got := formattest.ReadFile(t, c.Decoder(), file)
			if len(got) != len(rows) {
				t.Fatalf("%d rows, want %d", len(got), len(rows))
			}
			for k, r := range rows {
				for i, f := range schema.Fields {
					if !row.Equal(got[k][i], r[i]) {
						t.Fatalf("row %d column %s (%s): etld read %v from %s's file, wrote %v", k+1, f.Name, f.Type, got[k][i], writer, r[i])
					}
				}
			}
		})
	}
}
