package joinop

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// carvingCollector is a joinCollector that lends the memory of the rows
// emitted (operator.RowCarver) from one slab whose values are garbage, as
// a reused slab's are, and checks the carver's rule: a carved row is the
// next one emitted.
type carvingCollector struct {
	joinCollector
	t       *testing.T
	slab    []row.Value
	used    int
	pending row.Row
	carved  int
}

func (c *carvingCollector) CarveRow(w int) row.Row {
	if c.pending != nil {
		c.t.Fatal("a row carved before the last carved one was emitted")
	}
	if c.used+w > len(c.slab) {
		c.used = 0 // the slab comes back, its values garbage
	}
	r := c.slab[c.used : c.used+w : c.used+w]
	c.used += w
	c.pending = r
	c.carved++
	return r
}

func (c *carvingCollector) Emit(k row.Kind, r row.Row) {
	if c.pending != nil && (len(r) == 0 || unsafe.SliceData(r) != unsafe.SliceData(c.pending)) {
		c.t.Fatalf("%v emitted between a carve and its row", r)
	}
	c.pending = nil
	c.joinCollector.Emit(k, r)
}

// A streaming join that emits some columns (JoinSpec.Output, no
// residual) builds its joined rows in the memory its emitter lends, for
// every kind, with retractions and updates on both sides: the changes are
// those emitted into a plain emitter, the padded rows of an outer side
// never between a carve and its row.
func TestJoinStreamRowsCarved(t *testing.T) {
	stream := outputStream(4, 600, true)
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		for _, typed := range []bool{false, true} {
			spec := JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
				Output: []int{5, 0, 1, -1, 3}}
			if typed {
				types := []row.TypeID{row.BigInt, row.BigInt, row.String}
				spec.LeftTypes, spec.RightTypes = types, types
			}
			if cv := operator.Carving(NewJoin(spec)); !cv.CarvesRows() {
				t.Fatalf("%s: CarvesRows is false", kind)
			}
			run := func(out operator.Emitter) {
				j := NewJoin(spec)
				for at := 0; at < len(stream); {
					end := at
					var b row.Batch
					for end < len(stream) && end-at < 50 && stream[end].side == stream[at].side {
						b.Changes = append(b.Changes, stream[end].c)
						end++
					}
					if err := j.ProcessInput(stream[at].side, &b, out); err != nil {
						t.Fatal(err)
					}
					at = end
				}
			}
			var plain joinCollector
			run(&plain)
			carving := &carvingCollector{t: t, slab: make([]row.Value, 64)}
			for i := range carving.slab {
				carving.slab[i] = row.StringValue("garbage")
			}
			run(carving)
			if !slices.Equal(carving.got, plain.got) {
				t.Fatalf("%s (typed %v): carved rows differ: %s", kind, typed, firstDiff(carving.got, plain.got))
			}
			if carving.carved == 0 || carving.carved > len(plain.got) {
				t.Errorf("%s: %d rows carved of %d emitted", kind, carving.carved, len(plain.got))
			}
		}
	}
}
