package formattest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Columns describes a format whose decoder is a connector.ColumnDecoder
// (and a ParallelDecoder, whose Clone keeps the selection) to
// PickedColumns.
type Columns struct {
	// Types are the column types of the random schemas.
	Types []string
	// Decoders builds two decoders over schema with the same options,
	// drawn from r.
	Decoders func(t testing.TB, r *rand.Rand, schema row.Schema) (full, picked connector.Decoder)
	// Record makes a record for a schema of n columns c0, c1, ...: good
	// and bad values for any type, now and then malformed.
	Record func(r *rand.Rand, n int) []byte
	// SameShapeError: a record of the wrong shape fails the picked
	// decoder with the very error of the full one (CSV), not only with
	// an error (JSON, whose picked decoder skips members unread).
	SameShapeError bool
	// MinCompared is how many records both decoders must read for the
	// property to have proved something.
	MinCompared int
}

// PickedColumns decodes random records of 300 random schemas with every
// column and with a random selection (reordered, some twice, some left
// out), and with the selection's Clone: the picked row is the full row's
// columns.
func PickedColumns(t *testing.T, c Columns) {
	r := rand.New(rand.NewPCG(5, 6))
	compared := 0
	for range 300 {
		sch := RandomSchema(t, r, c.Types)
		n := sch.Len()
		if r.IntN(3) == 0 {
			sch.Fields[r.IntN(n)].Type.NotNull = true
		}
		cols := make([]int, 1+r.IntN(n+1))
		for j := range cols {
			cols[j] = r.IntN(n)
		}
		full, picked := c.Decoders(t, r, sch)
		if !picked.(connector.ColumnDecoder).DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		clone := picked.(connector.ParallelDecoder).Clone()
		for range 20 {
			rec := c.Record(r, n)
			if CheckColumns(t, full, picked, sch, cols, rec, c.SameShapeError) {
				compared++
			}
			CheckColumns(t, full, clone, sch, cols, rec, c.SameShapeError)
		}
	}
	if compared < c.MinCompared {
		t.Fatalf("only %d records decoded on both sides, want %d", compared, c.MinCompared)
	}
	t.Logf("%d records compared", compared)
}

// CheckColumns decodes rec with full (every column) and with picked
// (cols of sch) into a batch reused after other rows, and compares: the
// same values in the picked places when the full decoder read the
// record; when it failed on the record's shape or in a picked column,
// picked fails too, with the same error for a picked column (and for
// the shape when sameShapeError). A picked decoder fails on nothing the
// full one reads. It reports whether values were compared.
func CheckColumns(t testing.TB, full, picked connector.Decoder, sch row.Schema, cols []int, rec []byte, sameShapeError bool) bool {
	t.Helper()
	fb := row.NewBatch(1, sch.Len())
	ferr := full.Decode(rec, fb)
	pb := row.NewBatch(4, len(cols))
	for range 3 {
		r := pb.NewRow()
		for i := range r {
			r[i] = row.StringValue("stale")
		}
		pb.Append(row.Insert, r)
	}
	pb.Reuse() // reused unzeroed: every value of a picked row must be written
	perr := picked.Decode(rec, pb)
	var de *connector.DecodeError
	switch {
	case ferr == nil:
		if perr != nil {
			t.Fatalf("%v %q: picked %v, full read it", cols, rec, perr)
		}
	case !errors.As(ferr, &de) || de.Column == "":
		if perr == nil || (sameShapeError && perr.Error() != ferr.Error()) {
			t.Fatalf("%v %q: picked %v, full %v", cols, rec, perr, ferr)
		}
		return false
	case slices.Contains(cols, slices.IndexFunc(sch.Fields, func(f row.Field) bool { return f.Name == de.Column })):
		// Every column before it read well in full: the picked decoder
		// fails at the same one.
		if perr == nil || perr.Error() != ferr.Error() {
			t.Fatalf("%v %q: picked %v, full %v in a picked column", cols, rec, perr, ferr)
		}
		return false
	default:
		return false // failed in a column not picked: nothing to compare
	}
	if fb.Len() != pb.Len() {
		t.Fatalf("%q: %d rows full, %d picked", rec, fb.Len(), pb.Len())
	}
	for k := range fb.Changes {
		got := pb.Changes[k].Row
		if len(got) != len(cols) {
			t.Fatalf("%v %q: a row of %d columns", cols, rec, len(got))
		}
		for j, i := range cols {
			if want := fb.Changes[k].Row[i]; !row.Equal(got[j], want) {
				t.Fatalf("%v %q: column %d (schema's %d) is %v, want %v", cols, rec, j, i, got[j], want)
			}
		}
	}
	return fb.Len() > 0
}

// FuzzColumns is a fuzz target that checks a decoder of some columns
// against one of every column (both from newDecoder, over the columns s
// STRING, n BIGINT, d DOUBLE, s2 STRING) on any record and selection,
// from records seeds.
func FuzzColumns(f *testing.F, seeds []string, newDecoder func(row.Schema) connector.Decoder, sameShapeError bool) {
	for _, seed := range seeds {
		f.Add([]byte(seed), []byte{1, 2, 2})
		f.Add([]byte(seed), []byte{3, 0})
	}
	sch := testenv.Schema(f, "s STRING", "n BIGINT", "d DOUBLE", "s2 STRING")
	f.Fuzz(func(t *testing.T, rec []byte, sel []byte) {
		if len(sel) == 0 || len(sel) > 8 {
			return
		}
		cols := make([]int, len(sel))
		for j, c := range sel {
			cols[j] = int(c) % sch.Len()
		}
		full, picked := newDecoder(sch), newDecoder(sch)
		if !picked.(connector.ColumnDecoder).DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		CheckColumns(t, full, picked, sch, cols, rec, sameShapeError)
	})
}
