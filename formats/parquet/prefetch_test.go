package parquet

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// countingReaderAt counts the reads made through it: each is a request
// when the file is an object of object storage.
type countingReaderAt struct {
	r     *bytes.Reader
	reads atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(p, off)
}

// TestRowGroupReadIsOneReadPerColumnChunk: reading a row group reads
// each column chunk the query needs with one ReadAt, whatever its pages.
// An object store answers each ReadAt with a ranged GET, so reads of a
// few hundred bytes (page headers walked through a small buffer) made a
// 24 MB object take two minutes to read.
func TestRowGroupReadIsOneReadPerColumnChunk(t *testing.T) {
	schema := allTypes(t)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, schema, 3000)
	c := bulk(t, schema, Options{Compression: "snappy", RowGroupSize: 1000})
	file := formattest.WriteFile(t, c.Encoder, rows, 0)
	for _, cols := range [][]int{nil, {0, 3}} {
		d := c.Decoder()
		if cols != nil {
			needed := make([]bool, schema.Len())
			for _, i := range cols {
				needed[i] = true
			}
			d.(*Decoder).SetColumns(needed)
		}
		cr := &countingReaderAt{r: bytes.NewReader(file)}
		fr, err := d.OpenFile(cr, int64(len(file)), "test.parquet")
		if err != nil {
			t.Fatal(err)
		}
		leaves := len(fr.(*fileReader).leaves)
		var got []row.Row
		for g := range fr.Groups() {
			before := cr.reads.Load()
			err := fr.ReadGroup(context.Background(), g, 0, 100, func(b *row.Batch) error {
				for _, ch := range b.Changes {
					got = append(got, slices.Clone(ch.Row))
				}
				return nil
			})
			if err != nil {
				t.Fatalf("group %d: %v", g, err)
			}
			if n := cr.reads.Load() - before; n != int64(leaves) {
				t.Errorf("columns %v, row group %d: %d reads for %d column chunks", cols, g, n, leaves)
			}
		}
		if len(got) != len(rows) {
			t.Fatalf("columns %v: read %d rows of %d", cols, len(got), len(rows))
		}
		for i := range rows {
			for j := range schema.Fields {
				if cols != nil && !slices.Contains(cols, j) {
					continue
				}
				if !row.Equal(got[i][j], rows[i][j]) {
					t.Fatalf("columns %v: row %d column %d: %v, wrote %v", cols, i+1, j+1, got[i][j], rows[i][j])
				}
			}
		}
	}
}
