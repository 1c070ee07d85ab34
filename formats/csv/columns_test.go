package csv

import (
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestDecodeColumnsRefuses: a selection naming a column the schema lacks
// is refused, and the decoder stays as it was.
func TestDecodeColumnsRefuses(t *testing.T) {
	sch := testenv.Schema(t, "a BIGINT", "b STRING")
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

// TestDecodeColumnsProperty: the picked row is the full row's columns,
// on random schemas, selections and records, with ignore_parse_errors
// now and then.
func TestDecodeColumnsProperty(t *testing.T) {
	formattest.PickedColumns(t, formattest.Columns{
		Types: columnTypes,
		Decoders: func(t testing.TB, r *rand.Rand, sch row.Schema) (connector.Decoder, connector.Decoder) {
			opts := Options{IgnoreParseErrors: r.IntN(4) == 0}
			full, _ := NewDecoder(opts, sch)
			picked, _ := NewDecoder(opts, sch)
			return full, picked
		},
		Record:         randomRecord,
		SameShapeError: true,
		MinCompared:    200,
	})
}

// FuzzDecodeColumns checks a decoder of some columns against one of
// every column on any record and selection.
func FuzzDecodeColumns(f *testing.F) {
	formattest.FuzzColumns(f, []string{"a,1,2.5,x", `"a,b","2","3.5","say ""hi"""`, ",,,", "a,1", "a,1,2,3,4", `"abc,1,2,3`},
		func(sch row.Schema) connector.Decoder { d, _ := NewDecoder(Options{}, sch); return d }, true)
}
