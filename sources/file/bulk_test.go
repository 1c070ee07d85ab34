package file

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/formats/avro"
	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/formats/parquet"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
)

// writeParquet writes files part-0.parquet ... of n rows each (id, name,
// score, tags), in row groups of groupRows, and returns every row in
// print form in file order.
func writeParquet(t *testing.T, dir string, files, n, groupRows int) []string {
	t.Helper()
	enc, err := parquet.NewEncoder(parquet.Options{RowGroupSize: groupRows}, bulkSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	return writeBulk(t, dir, enc, files, n)
}

// writeAvro writes files part-0.avro ... as writeParquet does, Avro
// object container files in blocks of about blockSize bytes.
func writeAvro(t *testing.T, dir string, files, n, blockSize int) []string {
	t.Helper()
	enc, err := avro.NewFileEncoder(avro.FileOptions{BlockSize: blockSize}, bulkSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	return writeBulk(t, dir, enc, files, n)
}

func bulkSchema(t *testing.T) row.Schema {
	return testenv.Schema(t, "id BIGINT", "name STRING", "score DECIMAL(10,2)", "tags ARRAY<STRING>")
}

func writeBulk(t *testing.T, dir string, enc connector.BulkEncoder, files, n int) []string {
	var all []string
	for f := range files {
		rows := make([]row.Row, n)
		for i := range rows {
			id := int64(f*n + i)
			rows[i] = row.Row{row.BigIntValue(id), row.StringValue(fmt.Sprintf("n%d", id)), row.DecimalValue(id*7, 2),
				row.ArrayValue([]row.Value{row.StringValue("a"), row.StringValue(fmt.Sprint(id % 3))})}
			if id%5 == 0 {
				rows[i][1] = row.NullValue
			}
			all = append(all, row.Change{Kind: row.Insert, Row: rows[i]}.String())
		}
		data := formattest.WriteFile(t, enc, rows, 0)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d%s", f, enc.Ext())), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

const parquetSchema = `[id BIGINT, name STRING, "score DECIMAL(10,2)", tags ARRAY<STRING>]`

// TestParquetRead reads a glob of Parquet files of several row groups, in
// parallel and serially, in batches of any size: every row once, in
// file order, each batch naming its rows' file and number.
func TestParquetRead(t *testing.T) {
	h := newHarness(t)
	want := writeParquet(t, h.dir, 3, 250, 40)
	readBulk(t, h, "parquet", want)
}

// TestAvroRead is TestParquetRead for Avro object container files of
// several pieces each.
func TestAvroRead(t *testing.T) {
	defer func(n int64) { avro.PieceBytes = n }(avro.PieceBytes)
	avro.PieceBytes = 1500
	h := newHarness(t)
	want := writeAvro(t, h.dir, 3, 250, 300)
	readBulk(t, h, "avro", want)
}

func readBulk(t *testing.T, h *harness, format string, want []string) {
	for _, workers := range []int{1, 4} {
		for _, max := range []int{1, 7, 1000} {
			t.Run(fmt.Sprintf("workers=%d,max=%d", workers, max), func(t *testing.T) {
				defer func(w int) { parallelWorkers = w }(parallelWorkers)
				parallelWorkers = workers
				s := h.open("path: "+filepath.Join(h.dir, "*."+format)+"\nformat: "+format, parquetSchema)
				ctx := context.Background()
				var got []string
				for {
					b, err := s.Read(ctx, max)
					if b != nil {
						if b.Len() > max {
							t.Fatalf("a batch of %d rows, max %d", b.Len(), max)
						}
						first := b.Changes[0].Row[0].Int64()
						wantAt := fmt.Sprintf("part-%d.%s row %d", first/250, format, first%250+1)
						if pos := b.Origin.Position(0); !strings.HasSuffix(pos, wantAt) {
							t.Fatalf("the batch's first row is at %q, want %s", pos, wantAt)
						}
						got = append(got, conntest.Printed(b.Changes)...)
					}
					if err != nil {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("read %d rows, want %d; first %v", len(got), len(want), got[:min(3, len(got))])
				}
			})
		}
	}
}

// TestParquetResume stops the reading after each batch, restores a new
// source from the position and reads on: the rows after the position,
// exactly, whatever the batch that ended where (a row group's middle,
// its end, a file's end).
func TestParquetResume(t *testing.T) {
	h := newHarness(t)
	want := writeParquet(t, h.dir, 2, 100, 30)
	resumeBulk(t, h, "parquet", want)
}

// TestAvroResume is TestParquetResume for Avro object container files of
// several pieces each.
func TestAvroResume(t *testing.T) {
	defer func(n int64) { avro.PieceBytes = n }(avro.PieceBytes)
	avro.PieceBytes = 700
	h := newHarness(t)
	want := writeAvro(t, h.dir, 2, 100, 200)
	resumeBulk(t, h, "avro", want)
}

func resumeBulk(t *testing.T, h *harness, format string, want []string) {
	opts := "path: " + filepath.Join(h.dir, "*."+format) + "\nformat: " + format
	ctx := context.Background()
	for cut := 1; cut < 12; cut++ {
		s := h.open(opts, parquetSchema)
		got := readBatches(t, s, cut)
		pos, err := s.Position()
		if err != nil {
			t.Fatal(err)
		}
		s.Close(ctx)
		r := h.mustBuild(opts, parquetSchema)
		if err := r.Restore(pos); err != nil {
			t.Fatal(err)
		}
		if err := r.Open(ctx); err != nil {
			t.Fatalf("restore at %s: %v", pos, err)
		}
		rest, err := readAll(r, 17)
		r.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, rest...); !slices.Equal(got, want) {
			t.Fatalf("cut after %d batches at %s: %d rows, want %d", cut, pos, len(got), len(want))
		}
	}
}

// TestAvroResumeOtherPieces saves positions while Avro files are read in
// pieces of one size and restores them in a reader that cuts the files
// into pieces of another, as a later etld with another avro.PieceBytes
// would: the rows after the position, exactly. A position saved without
// its file row (before positions had one) restores by its piece and row,
// with the pieces it was saved with.
func TestAvroResumeOtherPieces(t *testing.T) {
	defer func(n int64) { avro.PieceBytes = n }(avro.PieceBytes)
	h := newHarness(t)
	want := writeAvro(t, h.dir, 2, 100, 200)
	opts := "path: " + filepath.Join(h.dir, "*.avro") + "\nformat: avro"
	ctx := context.Background()
	for _, c := range []struct {
		saved, restored int64
		legacy          bool
	}{{700, 1500, false}, {1500, 300, false}, {300, 4 << 20, false}, {700, 700, true}} {
		for cut := 1; cut < 13; cut += 2 {
			avro.PieceBytes = c.saved
			s := h.open(opts, parquetSchema)
			got := readBatches(t, s, cut)
			pos, err := s.Position()
			if err != nil {
				t.Fatal(err)
			}
			s.Close(ctx)
			if c.legacy {
				var p map[string]any
				if err := json.Unmarshal(pos, &p); err != nil {
					t.Fatal(err)
				}
				delete(p, "file_row")
				if pos, err = json.Marshal(p); err != nil {
					t.Fatal(err)
				}
			}
			avro.PieceBytes = c.restored
			r := h.mustBuild(opts, parquetSchema)
			if err := r.Restore(pos); err != nil {
				t.Fatal(err)
			}
			if err := r.Open(ctx); err != nil {
				t.Fatalf("restore at %s: %v", pos, err)
			}
			rest, err := readAll(r, 17)
			r.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got = append(got, rest...); !slices.Equal(got, want) {
				t.Fatalf("pieces of %d bytes, then %d: cut after %d batches at %s: %d rows, want %d", c.saved, c.restored, cut, pos, len(got), len(want))
			}
		}
	}
}

// TestParquetProjection: the columns the plan does not read are NULL and
// are not decoded; a column the file lacks is NULL; one of another type
// is refused at open, naming the file and the column.
func TestParquetProjection(t *testing.T) {
	h := newHarness(t)
	writeParquet(t, h.dir, 1, 10, 4)
	path := "path: " + filepath.Join(h.dir, "part-0.parquet") + "\nformat: parquet"
	s := h.mustBuild(path, `[id BIGINT, name STRING, "score DECIMAL(10,2)", tags ARRAY<STRING>, missing INT]`)
	s.SetColumns([]bool{false, true, false, true, true})
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(s, 100)
	s.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got[1] != "+I[null, n1, null, [a, 1], null]" || len(got) != 10 {
		t.Fatalf("projected rows %v", got)
	}
	bad := h.open(path, "[id BIGINT, name INT]")
	_, err = readAll(bad, 100)
	if err == nil || !strings.Contains(err.Error(), "part-0.parquet: column name: BYTE_ARRAY STRING in the file, INT in the schema") {
		t.Fatalf("reading a STRING column as INT: %v", err)
	}
}

// TestParquetNotAFile: a file that is not Parquet fails the read with an
// error naming it.
func TestParquetNotAFile(t *testing.T) {
	h := newHarness(t)
	path := h.write("bad.parquet", "id,name\n1,a\n")
	s := h.open("path: "+path+"\nformat: parquet", parquetSchema)
	_, err := readAll(s, 10)
	if err == nil || !strings.Contains(err.Error(), path+": not a valid Parquet file") {
		t.Fatalf("err %v", err)
	}
}

// readBatches reads n batches of up to 17 rows from s, printed.
func readBatches(t *testing.T, s *Source, n int) []string {
	t.Helper()
	var got []string
	for range n {
		b, err := s.Read(context.Background(), 17)
		if b != nil {
			got = append(got, conntest.Printed(b.Changes)...)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}
