package windowop

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// carvingOut is an optest.Out that lends the memory of the rows emitted
// (operator.RowCarver) from one slab, its old values garbage, as a
// reused slab's are.
type carvingOut struct {
	optest.Out
	slab   []row.Value
	used   int
	carved int
}

func (o *carvingOut) CarveRow(w int) row.Row {
	r := o.slab[o.used : o.used+w : o.used+w]
	o.used += w
	o.carved++
	return r
}

// inSlab reports whether r's values are in o's slab.
func (o *carvingOut) inSlab(r row.Row) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(r))), uintptr(unsafe.Pointer(unsafe.SliceData(o.slab)))
	return p >= lo && p < lo+uintptr(len(o.slab))*unsafe.Sizeof(row.Value{})
}

// TestWindowRowsCarved: a fired window's or session's row, or an OVER's,
// is built in the memory its emitter lends (RowArena.RowFrom), every value written over the
// slab's garbage: the rows are those emitted into a plain emitter.
func TestWindowRowsCarved(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	builds := map[string]func() operator.Operator{
		"tumble": func() operator.Operator {
			return optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, TimeCol: 0, Size: optest.Minute}, []int{1}, aggs, WindowOptions{}))
		},
		"session": func() operator.Operator {
			return optest.Must(NewSessionAgg(0, optest.Minute/2, []int{1}, aggs, WindowOptions{}))
		},
		"over": func() operator.Operator {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, TimeCol: 0, Rows: true, Preceding: 2, Aggs: aggs}, WindowOptions{}))
		},
		"over, columns picked": func() operator.Operator {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, TimeCol: 0, Rows: true, Preceding: 2, Aggs: aggs, Output: []int{1, 2, 4}}, WindowOptions{}))
		},
		"over, RANGE": func() operator.Operator {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, TimeCol: 0, Preceding: optest.Minute, Aggs: aggs}, WindowOptions{}))
		},
	}
	for name, build := range builds {
		run := func(out operator.Emitter) {
			op := build()
			if cv, ok := op.(operator.Carving); !ok || !cv.CarvesRows() {
				t.Fatalf("%s: CarvesRows is false", name)
			}
			for i := range 50 {
				c := optest.Change(row.Insert, row.TimestampValue(int64(i*i%97)*optest.Minute/8), []string{"a", "b", "c"}[i%3], i)
				if err := op.Process(optest.Batch(c), out); err != nil {
					t.Fatal(err)
				}
				if i%10 == 9 {
					if err := op.Watermark(int64(i*i%97)*optest.Minute/8-5*optest.Minute, out); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := op.Watermark(operator.MaxWatermark, out); err != nil {
				t.Fatal(err)
			}
		}
		plain := &optest.Out{}
		run(plain)
		carving := &carvingOut{slab: make([]row.Value, 50*8)}
		for i := range carving.slab {
			carving.slab[i] = row.StringValue("garbage")
		}
		run(carving)
		if !slices.Equal(carving.Lines, plain.Lines) || len(plain.Lines) < 5 {
			t.Fatalf("%s: carved rows\n%q\nwant\n%q", name, carving.Lines, plain.Lines)
		}
		if carving.carved != len(carving.Rows) {
			t.Fatalf("%s: %d rows carved for %d emitted", name, carving.carved, len(carving.Rows))
		}
		for _, c := range carving.Rows {
			if !carving.inSlab(c.Row) {
				t.Fatalf("%s: row %s is not in the emitter's memory", name, c)
			}
		}
	}
}
