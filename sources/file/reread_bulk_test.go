package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/formats/avro"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// readUpTo reads n batches of up to max rows from s, or fewer at its
// end, and returns their rows and whether the end came.
func readUpTo(t *testing.T, s *Source, n, max int) (rows []string, ended bool) {
	t.Helper()
	for range n {
		b, err := s.Read(context.Background(), max)
		if b != nil {
			rows = append(rows, conntest.Printed(b.Changes)...)
		}
		if errors.Is(err, io.EOF) {
			return rows, true
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows, false
}

// rereadCuts reads the source opts names in batches of 13, takes a
// position after cut batches (p1) and another after cut more (p2), and
// checks, for each cut, that a reread up to p1 gives the rows before p1
// and a reread of the range p1..p2 the rows between, in batches of any
// size. before, if set, runs before each reread (another piece size).
func rereadCuts(t *testing.T, h *harness, opts, schema string, cuts int, before func()) {
	ctx := context.Background()
	for cut := 0; cut < cuts; cut++ {
		s := h.open(opts, schema)
		first, _ := readUpTo(t, s, cut, 13)
		p1, err := s.Position()
		if err != nil {
			t.Fatal(err)
		}
		second, _ := readUpTo(t, s, cut+1, 13)
		p2, err := s.Position()
		if err != nil {
			t.Fatal(err)
		}
		s.Close(ctx)
		if before != nil {
			before()
		}
		for _, max := range []int{1, 5, 1000} {
			r := h.mustBuild(opts, schema)
			if err := r.RereadTo(p1); err != nil {
				t.Fatalf("reread to %s: %v", p1, err)
			}
			if err := r.Open(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := readAll(r, max)
			r.Close(ctx)
			if err != nil || !slices.Equal(got, first) {
				t.Fatalf("cut %d, batches of %d: reread up to %s gives %d rows (%v), want %d", cut, max, p1, len(got), err, len(first))
			}
			r = h.mustBuild(opts, schema)
			if err := r.RereadRange(p1, p2); err != nil {
				t.Fatalf("reread %s..%s: %v", p1, p2, err)
			}
			if err := r.Open(ctx); err != nil {
				t.Fatal(err)
			}
			got, err = readAll(r, max)
			r.Close(ctx)
			if err != nil || !slices.Equal(got, second) {
				t.Fatalf("cut %d, batches of %d: reread of %s..%s gives %d rows (%v), want %d", cut, max, p1, p2, len(got), err, len(second))
			}
		}
	}
}

// TestRereadBulk: Parquet and Avro files, read again up to a position
// (its file and file_row) and over a range of two positions, give the
// rows before it and between them, exactly, wherever the positions fall
// (a row group's middle, its end, a file's end, the end of all); Avro
// also when the reread cuts the files into other pieces.
func TestRereadBulk(t *testing.T) {
	t.Run("parquet", func(t *testing.T) {
		h := newHarness(t)
		writeParquet(t, h.dir, 2, 100, 30)
		rereadCuts(t, h, "path: "+filepath.Join(h.dir, "*.parquet")+"\nformat: parquet", parquetSchema, 10, nil)
	})
	t.Run("avro", func(t *testing.T) {
		defer func(n int64) { avro.PieceBytes = n }(avro.PieceBytes)
		avro.PieceBytes = 700
		h := newHarness(t)
		writeAvro(t, h.dir, 2, 100, 200)
		rereadCuts(t, h, "path: "+filepath.Join(h.dir, "*.avro")+"\nformat: avro", parquetSchema, 10, func() { avro.PieceBytes = 1500 })
	})
	t.Run("refusals", func(t *testing.T) {
		h := newHarness(t)
		writeParquet(t, h.dir, 1, 10, 5)
		opts := "path: " + filepath.Join(h.dir, "*.parquet") + "\nformat: parquet"
		for pos, want := range map[string]string{
			`{"v":1,"file":"x","offset":0,"line":1}`:     "not taken by a read of format parquet",
			`{"v":3,"file":"x","group":1,"row":2}`:       "file_row",
			`{"v":3,"file":"gone.parquet","file_row":3}`: "no longer finds",
		} {
			s := h.mustBuild(opts, parquetSchema)
			err := s.RereadTo([]byte(pos))
			if err == nil {
				err = s.Open(context.Background())
				s.Close(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("reread to %s: %v, want %q", pos, err, want)
			}
		}
	})
}

// TestRereadS3 is TestRereadBulk over objects of the real S3 server, for
// Parquet objects and CSV ones; a followed s3:// path is refused with
// the reason.
func TestRereadS3(t *testing.T) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	h := newHarness(t)
	local := t.TempDir()
	writeParquet(t, local, 2, 100, 30)
	for f := range 2 {
		data, err := os.ReadFile(filepath.Join(local, fmt.Sprintf("part-%d.parquet", f)))
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(t, bucket, fmt.Sprintf("pq/part-%d.parquet", f), data)
	}
	rereadCuts(t, h, fmt.Sprintf("path: s3://%s/pq/*.parquet\nformat: parquet", bucket), parquetSchema, 6, nil)

	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "r%d,%d\n", i, i)
		if i == 29 {
			srv.Put(t, bucket, "csv/a.csv", []byte(b.String()))
			b.Reset()
		}
	}
	srv.Put(t, bucket, "csv/b.csv", []byte(b.String()))
	rereadCuts(t, h, fmt.Sprintf("path: s3://%s/csv/*.csv", bucket), "[id STRING, n BIGINT]", 6, nil)

	followed := h.mustBuild(fmt.Sprintf("path: s3://%s/csv/*.csv\nfollow: true", bucket), "[id STRING, n BIGINT]")
	if err := followed.RereadTo([]byte(`{"v":1,"line":1}`)); err == nil || !strings.Contains(err.Error(), "followed s3:// path") {
		t.Errorf("a followed s3:// path: %v", err)
	}
}
