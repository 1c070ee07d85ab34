package csv

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestDecodeColumnsRefuses: a selection naming a column the schema lacks
// is refused, and the decoder stays as it was.
func TestDecodeColumnsRefuses(t *testing.T) {
	sch := schemaOf(t, "a BIGINT", "b STRING")
	d, _ := NewDecoder(Options{}, sch)
	for _, cols := range [][]int{nil, {}, {2}, {-1}, {0, 5}} {
		if d.DecodeColumns(cols) {
			t.Errorf("DecodeColumns(%v) = true", cols)
		}
	}
	b := row.NewBatch(1, 2)
	if err := d.Decode([]byte("1,x"), b); err != nil || len(b.Changes[0].Row) != 2 {
		t.Fatalf("after refused selections: %v, %v", err, b)
	}
}

// checkColumns decodes line with full (every column) and with picked
// (cols of the schema) into a batch reused after other rows, and
// compares: the same values in the picked places, the same error when
// the full decoder failed on the record's shape or in a picked column.
// It reports whether values were compared.
func checkColumns(t *testing.T, full, picked *Decoder, sch row.Schema, cols []int, line []byte) bool {
	t.Helper()
	fb := row.NewBatch(1, sch.Len())
	ferr := full.Decode(line, fb)
	// A batch that held other rows, reused unzeroed: every value of a
	// picked row must be written.
	pb := row.NewBatch(4, len(cols))
	for range 3 {
		r := pb.NewRow()
		for i := range r {
			r[i] = row.StringValue("stale")
		}
		pb.Append(row.Insert, r)
	}
	pb.Reuse()
	perr := picked.Decode(line, pb)
	var de *connector.DecodeError
	switch {
	case ferr == nil:
		if perr != nil {
			t.Fatalf("%v %q: picked %v, full read it", cols, line, perr)
		}
	case !errors.As(ferr, &de) || de.Column == "":
		if perr == nil || perr.Error() != ferr.Error() {
			t.Fatalf("%v %q: picked %v, full %v", cols, line, perr, ferr)
		}
		return false
	case slices.Contains(cols, slices.IndexFunc(sch.Fields, func(f row.Field) bool { return f.Name == de.Column })):
		// Every column before it read well in full: the picked decoder
		// fails at the same one.
		if perr == nil || perr.Error() != ferr.Error() {
			t.Fatalf("%v %q: picked %v, full %v in a picked column", cols, line, perr, ferr)
		}
		return false
	default:
		return false // failed in a column not picked: nothing to compare
	}
	if fb.Len() != pb.Len() {
		t.Fatalf("%q: %d rows full, %d picked", line, fb.Len(), pb.Len())
	}
	for k := range fb.Changes {
		got := pb.Changes[k].Row
		if len(got) != len(cols) {
			t.Fatalf("%v %q: a row of %d columns", cols, line, len(got))
		}
		for j, i := range cols {
			if want := fb.Changes[k].Row[i]; !row.Equal(got[j], want) {
				t.Fatalf("%v %q: column %d (schema's %d) is %v, want %v", cols, line, j, i, got[j], want)
			}
		}
	}
	return fb.Len() > 0
}

// TestDecodeColumnsProperty decodes random records of random schemas
// with every column and with a random selection (reordered, some twice,
// some left out): the picked row is the full row's columns.
func TestDecodeColumnsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	compared := 0
	for iter := 0; iter < 300; iter++ {
		sch := randomSchema(t, r)
		n := sch.Len()
		if r.IntN(3) == 0 {
			sch.Fields[r.IntN(n)].Type.NotNull = true
		}
		cols := make([]int, 1+r.IntN(n+1))
		for j := range cols {
			cols[j] = r.IntN(n)
		}
		opts := Options{IgnoreParseErrors: r.IntN(4) == 0}
		full, _ := NewDecoder(opts, sch)
		picked, _ := NewDecoder(opts, sch)
		if !picked.DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		clone := picked.Clone().(*Decoder)
		for range 20 {
			line := randomRecord(r, n)
			if checkColumns(t, full, picked, sch, cols, line) {
				compared++
			}
			checkColumns(t, full, clone, sch, cols, line) // Clone keeps the selection
		}
	}
	if compared < 200 {
		t.Fatalf("only %d records decoded on both sides", compared)
	}
	t.Logf("%d records compared", compared)
}

// FuzzDecodeColumns checks a decoder of some columns against one of
// every column on any record and selection.
func FuzzDecodeColumns(f *testing.F) {
	for _, seed := range []string{"a,1,2.5,x", `"a,b","2","3.5","say ""hi"""`, ",,,", "a,1", "a,1,2,3,4", `"abc,1,2,3`} {
		f.Add([]byte(seed), []byte{1, 2, 2})
		f.Add([]byte(seed), []byte{3, 0})
	}
	sch := schemaOf(f, "s STRING", "n BIGINT", "d DOUBLE", "s2 STRING")
	f.Fuzz(func(t *testing.T, rec []byte, sel []byte) {
		if len(sel) == 0 || len(sel) > 8 {
			return
		}
		cols := make([]int, len(sel))
		for j, c := range sel {
			cols[j] = int(c) % sch.Len()
		}
		full, _ := NewDecoder(Options{}, sch)
		picked, _ := NewDecoder(Options{}, sch)
		if !picked.DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		checkColumns(t, full, picked, sch, cols, rec)
	})
}
