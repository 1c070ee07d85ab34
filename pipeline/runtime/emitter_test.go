package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// fanOut emits rows rows for its one input change (a join of a key that
// matches that many rows). After each batch's worth it waits until the
// sink received the batch before the last few: the node's channel holds
// only a few batches, so what it emits must leave while it emits, not
// when Process returns.
type fanOut struct {
	rows, size, slack int
	received          <-chan struct{}
	got               int
}

func (f *fanOut) Process(in *row.Batch, out operator.Emitter) error {
	for j := range f.rows {
		out.Emit(row.Insert, row.Row{row.BigIntValue(int64(j))})
		full := (j + 1) / f.size
		for full-f.got > f.slack {
			select {
			case <-f.received:
				f.got++
			case <-time.After(10 * time.Second):
				return fmt.Errorf("after %d batches the sink has received %d: the emitted batches are held until Process returns", full, f.got)
			}
		}
	}
	return nil
}
func (f *fanOut) Watermark(int64, operator.Emitter) error { return nil }
func (f *fanOut) Finish(operator.Emitter) error           { return nil }

func TestEmittedBatchesLeaveWhileTheOperatorEmits(t *testing.T) {
	const size, rows = 7, 7 * 200
	// The sink signals each Write; a buffer as large as the whole output
	// keeps a slow reader from being the bound.
	sink := &memSink{received: make(chan struct{}, rows)}
	op := &fanOut{rows: rows, size: size, slack: 8, received: sink.received}
	g := &Graph{Name: "t", BatchSize: size, ChannelSize: 2}
	sn := &SourceNode{Node: Node{Name: "src", Kind: "source"}, Source: &seqSource{n: 1}}
	g.Sources = append(g.Sources, sn)
	on := &OpNode{Node: Node{Name: "fan-out", Kind: "transform"}, Input: &sn.Node, Op: op}
	g.Ops = append(g.Ops, on)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "sink", Kind: "sink"}, Input: &on.Node, Sink: sink, Mode: connector.Append})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(sink.changes) != rows {
		t.Fatalf("sink got %d rows, want %d", len(sink.changes), rows)
	}
	for i, c := range sink.changes {
		if c.Row[0].Int64() != int64(i) {
			t.Fatalf("row %d is %v: out of order", i, c.Row)
		}
	}
}

// TestEmitterFlowError keeps the first error of a batch that could not
// go on, drops what is emitted after it, and reports it once.
func TestEmitterFlowError(t *testing.T) {
	e := newBatchEmitter(2)
	sent := 0
	e.flow = func(*row.Batch) error {
		sent++
		return context.Canceled
	}
	e.begin(nil)
	for range 7 {
		e.Emit(row.Insert, row.Row{row.BigIntValue(1)})
	}
	if sent != 1 {
		t.Fatalf("flow called %d times after it failed once", sent)
	}
	if err := e.failed(); err != context.Canceled {
		t.Fatalf("failed() = %v", err)
	}
	if err := e.failed(); err != nil {
		t.Fatalf("failed() again = %v", err)
	}
}
