package runtime

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// growingOp keeps every key it sees, 64 bytes each, as a GROUP BY over
// a unique key without a TTL does.
type growingOp struct{ state []byte }

func (g *growingOp) Process(in *row.Batch, out operator.Emitter) error {
	for _, c := range in.Changes {
		g.state = append(g.state, make([]byte, 64)...)
		out.Emit(c.Kind, c.Row)
	}
	return nil
}
func (g *growingOp) Watermark(int64, operator.Emitter) error { return nil }
func (g *growingOp) Finish(operator.Emitter) error           { return nil }
func (g *growingOp) StateEntries() int64                     { return int64(len(g.state) / 64) }
func (g *growingOp) StateBytes() int64                       { return int64(cap(g.state)) }

func TestStateBudgetFailsOnlyItsPipeline(t *testing.T) {
	// Two pipelines in one process: the one whose state passes its
	// budget fails with a permanent error naming the operator and the
	// sizes; the other runs on and stops cleanly.
	bad := graph(&seqSource{n: 1 << 30, block: true}, nil, &memSink{})
	bad.Name = "runaway"
	bad.Ops = []*OpNode{{Node: Node{Name: "grow", Kind: "transform"}, Input: &bad.Sources[0].Node, Op: &growingOp{}}}
	bad.Sinks[0].Input = &bad.Ops[0].Node
	good := &memSink{received: make(chan struct{}, 1)}
	stop := make(chan struct{})
	g := graph(&seqSource{n: 100, block: true}, &Calc{}, good)
	goodDone := make(chan error, 1)
	go func() { goodDone <- Run(context.Background(), g, Options{Stop: stop, MaxStateBytes: 1 << 20}) }()

	badDone := make(chan error, 1)
	go func() { badDone <- Run(context.Background(), bad, Options{MaxStateBytes: 1 << 20}) }()
	var err error
	select {
	case err = <-badDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the pipeline over its state budget kept running")
	}
	for _, want := range []string{`transform "grow"`, "max_state_bytes of 1.0 MiB", "entries holds"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to name %q", err, want)
		}
	}
	if !retry.IsPermanent(err) {
		t.Errorf("err = %v is not permanent: a restart meets the same keys", err)
	}
	if n := bad.Ops[0].Op.(*growingOp).StateBytes(); n > 4<<20 {
		t.Errorf("state reached %d bytes before the run failed, want it stopped near 1 MiB", n)
	}
	<-good.received
	select {
	case err := <-goodDone:
		t.Fatalf("the other pipeline ended with %v", err)
	default:
	}
	close(stop)
	if err := <-goodDone; err != nil {
		t.Fatalf("the other pipeline: %v", err)
	}
	if len(good.changes) != 100 {
		t.Errorf("the other pipeline delivered %d rows, want 100", len(good.changes))
	}
}

func TestStateBudgetOff(t *testing.T) {
	g := graph(&seqSource{n: 20000}, nil, &memSink{})
	g.Ops = []*OpNode{{Node: Node{Name: "grow", Kind: "transform"}, Input: &g.Sources[0].Node, Op: &growingOp{}}}
	g.Sinks[0].Input = &g.Ops[0].Node
	if err := Run(context.Background(), g, Options{MaxStateBytes: -1}); err != nil {
		t.Fatalf("no budget: %v", err)
	}
}

func TestDefaultMaxStateBytesFollowsGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	old := setMemoryLimit(3 << 30)
	defer setMemoryLimit(old)
	if got := DefaultMaxStateBytes(); got != 3<<29 {
		t.Errorf("with GOMEMLIMIT 3 GiB the default is %d, want half", got)
	}
	setMemoryLimit(old)
	if got := DefaultMaxStateBytes(); got <= 0 {
		t.Errorf("without GOMEMLIMIT the default is %d", got)
	}
}

func setMemoryLimit(n int64) int64 { return debug.SetMemoryLimit(n) }
