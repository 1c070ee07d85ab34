package avro

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

// fastavro runs testdata/avro.py with args, and returns what it prints.
func fastavro(t *testing.T, args ...string) []byte {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "avro.py"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(testenv.Python(t), append([]string{script}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fastavro %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// TestFastavro: fastavro, another library's reader, reads the files etld
// writes with each codec, every type, to the values written; and the
// files fastavro's writer makes of the same records, with each codec,
// etld reads back to the same rows.
func TestFastavro(t *testing.T) {
	schema := fileTypes(t)
	rows := fileRows(rand.New(rand.NewPCG(5, 6)), schema, 400)
	dir := t.TempDir()
	for _, codec := range []string{"snappy", "deflate", "zstandard", "null"} {
		t.Run(codec, func(t *testing.T) {
			enc, err := NewFileEncoder(FileOptions{Codec: codec, BlockSize: 2000}, schema)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, codec+".avro")
			if err := os.WriteFile(path, formattest.WriteFile(t, enc, rows, 0), 0o644); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(fastavro(t, "read", path)))
			n := 0
			for ; dec.More(); n++ {
				var got []any
				if err := dec.Decode(&got); err != nil {
					t.Fatal(err)
				}
				if n >= len(rows) {
					break
				}
				for i, f := range schema.Fields {
					want := formattest.Render(rows[n][i], f.Type)
					if !reflect.DeepEqual(jsonOf(t, got[i]), jsonOf(t, want)) {
						t.Fatalf("row %d column %s: fastavro read %v, etld wrote %v", n+1, f.Name, got[i], want)
					}
				}
			}
			if n != len(rows) {
				t.Fatalf("fastavro read %d rows of %d", n, len(rows))
			}

			copied := filepath.Join(dir, codec+"-fastavro.avro")
			fastavro(t, "copy", path, copied, codec)
			data, err := os.ReadFile(copied)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewFileDecoder(FileOptions{}, schema)
			if err != nil {
				t.Fatal(err)
			}
			back := formattest.ReadFile(t, d, data)
			if len(back) != len(rows) {
				t.Fatalf("etld read %d rows of fastavro's file, want %d", len(back), len(rows))
			}
			for k := range rows {
				for i, f := range schema.Fields {
					if !row.Equal(back[k][i], rows[k][i]) {
						t.Fatalf("fastavro's file, row %d column %s: read %v, want %v", k+1, f.Name, back[k][i], rows[k][i])
					}
				}
			}
		})
	}
}

// jsonOf is v as JSON decodes it, so that values built in Go compare
// with decoded ones.
func jsonOf(t *testing.T, v any) any {
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
