package runtime

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// unionHarness runs one UnionNode over n input channels the test feeds,
// with a coordinator that only collects reports.
type unionHarness struct {
	t    *testing.T
	ins  []chan message
	out  chan message
	co   *coordinator
	done chan error
}

func newUnionHarness(t *testing.T, n int) *unionHarness {
	t.Helper()
	h := &unionHarness{t: t, out: make(chan message, 64), co: &coordinator{reports: make(chan report, 64)}, done: make(chan error, 1)}
	u := &UnionNode{Node: Node{Name: "Union", Kind: "transform"}}
	u.outs = []chan message{h.out}
	for range n {
		h.ins = append(h.ins, make(chan message, 16))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { h.done <- runUnion(ctx, u, h.ins, h.co) }()
	return h
}

func oneRow(v int64) message {
	return message{batch: &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(v)}}}}}
}

// next returns the union's next output as text, failing after a deadline.
func (h *unionHarness) next() string {
	h.t.Helper()
	select {
	case m, open := <-h.out:
		if !open {
			return "closed"
		}
		switch m.kind {
		case msgBatch:
			return fmt.Sprintf("row %d", m.batch.Changes[0].Row[0].Int64())
		case msgWatermark:
			return fmt.Sprintf("wm %d", m.watermark)
		case msgBarrier:
			return fmt.Sprintf("barrier %d", m.barrier)
		case msgEnd:
			return fmt.Sprintf("end stop=%v", m.stop)
		}
	case <-time.After(5 * time.Second):
		h.t.Fatal("no output from the union within 5s")
	}
	return ""
}

// quiet asserts that the union sends nothing more for a while: what it
// holds back stays held.
func (h *unionHarness) quiet() {
	h.t.Helper()
	select {
	case m := <-h.out:
		h.t.Fatalf("union sent %+v while it should hold its inputs back", m)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestUnionAlignsBarriers(t *testing.T) {
	h := newUnionHarness(t, 2)
	h.ins[0] <- oneRow(1)
	h.ins[0] <- message{kind: msgBarrier, barrier: 1}
	h.ins[0] <- oneRow(2) // after the barrier: must wait for it
	if got := h.next(); got != "row 1" {
		t.Fatalf("first output %q, want row 1", got)
	}
	h.quiet()
	h.ins[1] <- oneRow(10)
	h.ins[1] <- message{kind: msgBarrier, barrier: 1}
	h.ins[1] <- oneRow(11)
	var got []string
	for range 4 {
		got = append(got, h.next())
	}
	if got[0] != "row 10" || got[1] != "barrier 1" {
		t.Fatalf("outputs %q: want row 10, then barrier 1 before any row sent after it", got)
	}
	rest := got[2:]
	slices.Sort(rest)
	if !slices.Equal(rest, []string{"row 11", "row 2"}) {
		t.Fatalf("after the barrier got %q, want rows 2 and 11", rest)
	}
	select {
	case r := <-h.co.reports:
		if r.id != 1 || r.ended {
			t.Fatalf("report %+v, want barrier 1", r)
		}
	default:
		t.Fatal("the union did not report barrier 1")
	}
	// An input that ends while a barrier waits on it no longer holds it.
	h.ins[0] <- message{kind: msgBarrier, barrier: 2}
	h.quiet()
	close(h.ins[1])
	if got := h.next(); got != "barrier 2" {
		t.Fatalf("got %q, want barrier 2 once the other input ended", got)
	}
	h.ins[0] <- message{kind: msgEnd}
	close(h.ins[0])
	for _, want := range []string{"end stop=false", "closed"} {
		if got := h.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
}

func TestUnionWatermarkIsMinimum(t *testing.T) {
	h := newUnionHarness(t, 3)
	wm := func(i int, v int64) { h.ins[i] <- message{kind: msgWatermark, watermark: v} }
	wm(0, 10)
	wm(1, 5)
	h.quiet() // input 2 has no watermark yet
	wm(2, 7)
	if got := h.next(); got != "wm 5" {
		t.Fatalf("got %q, want wm 5", got)
	}
	wm(0, 20)
	wm(1, 4) // a watermark never goes back
	h.quiet()
	wm(1, 30)
	if got := h.next(); got != "wm 7" {
		t.Fatalf("got %q, want wm 7 (input 2 holds it)", got)
	}
	h.ins[2] <- message{kind: msgEnd, stop: true}
	close(h.ins[2])
	if got := h.next(); got != "wm 20" {
		t.Fatalf("got %q, want wm 20 once input 2 ended", got)
	}
	close(h.ins[0])
	close(h.ins[1])
	for _, want := range []string{"wm 30", "end stop=true", "closed"} {
		if got := h.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
	var last report
	for len(h.co.reports) > 0 {
		last = <-h.co.reports
	}
	if !last.ended || last.finished {
		t.Fatalf("final report %+v: want ended, not finished (an input stopped)", last)
	}
}
