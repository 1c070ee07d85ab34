package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestTextHold: a made batch goes back once, only after the node it was
// given to (which takes its share before the operator sees it, as
// opRun.holdInput does) and the one reader of each batch made of it
// gave their shares up, whatever the order; a share taken by another
// node, or twice, counts nothing; a node that passes no text (textBy
// unset) gives its batches no share.
func TestTextHold(t *testing.T) {
	for _, sinkFirst := range []bool{false, true} {
		var calc, sink, stranger Node
		var back []*row.Batch
		made := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.StringValue("a")}}}}
		made.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{hold: newTextHold(func(b *row.Batch) { back = append(back, b) }, made), holdBy: &calc}}

		if takeHold(made, &stranger) != nil {
			t.Fatal("a node the batch was not given to took its share")
		}
		// The Calc's node emits two batches of it (one full, one taken).
		em := newBatchEmitter(1)
		em.textBy = &sink
		var outs []*row.Batch
		em.flow = func(b *row.Batch) error { outs = append(outs, b); return nil }
		em.begin(made)
		em.inHold = takeHold(made, &calc)
		if em.inHold == nil || takeHold(made, &calc) != nil {
			t.Fatal("the share is not taken once")
		}
		em.Emit(row.Insert, made.Changes[0].Row)
		em.size = 2
		em.Emit(row.Insert, made.Changes[0].Row)
		outs = append(outs, em.take()...)
		if len(outs) != 2 {
			t.Fatalf("%d batches emitted, want 2", len(outs))
		}
		textDone(outs[0], &calc) // not the batch's reader
		if sinkFirst {
			textDone(outs[0], &sink)
			textDone(outs[0], &sink)
			textDone(outs[1], &sink)
			if len(back) != 0 {
				t.Fatal("given back while the Calc's node held its input")
			}
			em.inHold.done()
		} else {
			em.inHold.done()
			textDone(outs[0], &sink)
			if len(back) != 0 {
				t.Fatal("given back while a batch made of it was unwritten")
			}
			textDone(outs[1], &sink)
		}
		if len(back) != 1 || back[0] != made {
			t.Fatalf("sink first %v: given back %d times, want the made batch once", sinkFirst, len(back))
		}
	}

	// No share through a node that passes no text.
	made := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.StringValue("a")}}}}
	var calc Node
	n := 0
	made.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{hold: newTextHold(func(*row.Batch) { n++ }, made), holdBy: &calc}}
	em := newBatchEmitter(8)
	em.begin(made)
	em.inHold = takeHold(made, &calc)
	em.Emit(row.Insert, made.Changes[0].Row)
	out := em.take()
	if d := derivedOf(out[0].Origin); d == nil || d.hold != nil {
		t.Fatal("a batch of a node that passes no text took a share")
	}
	em.inHold.done()
	if n != 1 {
		t.Fatalf("given back %d times, want 1", n)
	}
}
