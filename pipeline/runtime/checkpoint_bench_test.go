//go:build unix

package runtime

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

var benchAggs = []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt}}

// BenchmarkCheckpointState: what a checkpoint of a GROUP BY with N keys
// (COUNT(*), SUM, MAX over BIGINT keys) costs: the operator's Snapshot
// plus the store's write (temp file, fsync, rename, dir fsync), the file's
// size, and the restore. 100k keys by default; ETLD_BENCH_KEYS=1000000
// for 1M.
//
//	go test -run '^$' -bench CheckpointState -benchtime 3x ./pipeline/runtime/
func BenchmarkCheckpointState(b *testing.B) {
	nkeys := benchEnv("ETLD_BENCH_KEYS", 100_000)
	g := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
	for _, in := range optest.BenchPool((nkeys+1023)/1024, 1024, nkeys, 1) {
		if err := g.Process(in, &optest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
	store, err := checkpoint.Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	var snap, write time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		state, err := g.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		cp := &checkpoint.Checkpoint{ID: int64(i + 1), Pipeline: "bench", Time: t1,
			Components: []checkpoint.Component{{ID: "transform/agg/0", Runtime: state}}}
		if size, err = store.Write(cp); err != nil {
			b.Fatal(err)
		}
		snap += t1.Sub(t0)
		write += time.Since(t1)
	}
	b.StopTimer()
	cp, err := store.Latest()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	r := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
	if err := r.Restore(cp.Components[0].Runtime); err != nil {
		b.Fatal(err)
	}
	restore := time.Since(t0)
	if r.Groups() != nkeys {
		b.Fatalf("restored %d groups, want %d", r.Groups(), nkeys)
	}
	b.ReportMetric(float64(nkeys), "keys")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(float64(size)/float64(nkeys), "B/key")
	b.ReportMetric(float64(snap.Milliseconds())/float64(b.N), "snapshot-ms")
	b.ReportMetric(float64(write.Milliseconds())/float64(b.N), "write-ms")
	b.ReportMetric(float64(restore.Milliseconds()), "restore-ms")
}

// poolSource replays a pool of batches n times over, then ends.
type poolSource struct {
	pool []*row.Batch
	i, n int
}

func (s *poolSource) Bounded() bool               { return true }
func (s *poolSource) Open(context.Context) error  { return nil }
func (s *poolSource) Close(context.Context) error { return nil }
func (s *poolSource) Position() ([]byte, error)   { return strconv.AppendInt(nil, int64(s.i), 10), nil }
func (s *poolSource) Restore([]byte) error        { return nil }
func (s *poolSource) Read(context.Context, int) (*row.Batch, error) {
	if s.i >= s.n {
		return nil, io.EOF
	}
	b := s.pool[s.i%len(s.pool)]
	s.i++
	return b, nil
}

type nullSink struct{}

func (nullSink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Upsert: true, Retract: true}
}
func (nullSink) Bind(connector.SinkInput) error           { return nil }
func (nullSink) Open(context.Context) error               { return nil }
func (nullSink) Write(context.Context, *row.Batch) error  { return nil }
func (nullSink) Flush(context.Context) error              { return nil }
func (nullSink) Close(context.Context) error              { return nil }
func (nullSink) Snapshot(context.Context) ([]byte, error) { return []byte{}, nil }
func (nullSink) Restore([]byte) error                     { return nil }
func (nullSink) Commit(context.Context, []byte) error     { return nil }

// BenchmarkCheckpointThroughput: a GROUP BY over 100k keys run through
// the whole runtime (source, operator, upsert sink), with a checkpoint
// every second stored on disk against the same run with no checkpoint
// but the final one and no store; both in this benchmark, so the ratio
// compares like with like. ETLD_BENCH_ROWS sets the rows (default 1M).
//
//	go test -run '^$' -bench CheckpointThroughput -benchtime 1x ./pipeline/runtime/
func BenchmarkCheckpointThroughput(b *testing.B) {
	rows := benchEnv("ETLD_BENCH_ROWS", 1_000_000)
	nkeys := benchEnv("ETLD_BENCH_KEYS", 100_000)
	pool := optest.BenchPool(256, 1024, nkeys, 1)
	run := func(opt CheckpointOptions) (time.Duration, int64) {
		src := &poolSource{pool: pool, n: rows / 1024}
		sn := &SourceNode{Node: Node{Name: "src", Kind: "source"}, Source: src}
		op := &OpNode{Node: Node{Name: "agg", Kind: "transform"}, Input: &sn.Node,
			Op: optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))}
		g := &Graph{Name: "bench", Sources: []*SourceNode{sn}, Ops: []*OpNode{op},
			Sinks: []*SinkNode{{Node: Node{Name: "out", Kind: "sink"}, Input: &op.Node, Sink: nullSink{}, Mode: connector.Upsert, Key: []int{0}, Compact: true}}}
		t0 := time.Now()
		if err := Run(context.Background(), g, Options{Checkpoint: opt}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0), g.Checkpoints.Count.Load()
	}
	var with, without time.Duration
	var count int64
	for range b.N {
		store, err := checkpoint.Open(b.TempDir(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		d, _ := run(CheckpointOptions{Interval: time.Hour})
		without += d
		d, n := run(CheckpointOptions{Interval: time.Second, Store: store})
		with += d
		count += n
	}
	n := float64(rows / 1024 * 1024 * b.N)
	b.ReportMetric(n/with.Seconds(), "rows/s-checkpointed")
	b.ReportMetric(n/without.Seconds(), "rows/s-none")
	b.ReportMetric(without.Seconds()/with.Seconds(), "ratio")
	b.ReportMetric(float64(count)/float64(b.N), "checkpoints")
}

// BenchmarkBarrierPause: how long a GROUP BY with N keys (1M by default,
// ETLD_BENCH_KEYS) stops processing at a barrier (its snapshot into a
// part of the store, the engine's OpNode.snapshot), how long its part
// then takes to become durable (fsync, rename, directory fsync: the
// barrier waited for that too before the fsync ran in the background),
// and how long until the checkpoint naming the part is stored.
//
//	go test -run '^$' -bench BarrierPause -benchtime 5x ./pipeline/runtime/
func BenchmarkBarrierPause(b *testing.B) {
	nkeys := benchEnv("ETLD_BENCH_KEYS", 1_000_000)
	g := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
	for _, in := range optest.BenchPool((nkeys+1023)/1024, 1024, nkeys, 1) {
		if err := g.Process(in, &optest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
	store, err := checkpoint.Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	co := &coordinator{opt: CheckpointOptions{Store: store}}
	n := &OpNode{Node: Node{Name: "agg", Kind: "transform", ID: "transform/agg/0"}, Op: g}
	var pause, sync, durable time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := int64(i + 1)
		t0 := time.Now()
		st, err := n.snapshot(co, id)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		pause += t1.Sub(t0)
		part, err := store.OpenPart(st.part) // once the part is durable
		if err != nil {
			b.Fatal(err)
		}
		part.Close()
		sync += time.Since(t1)
		if _, err := store.Write(&checkpoint.Checkpoint{ID: id, Pipeline: "bench", Time: time.Now(),
			Components: []checkpoint.Component{{ID: n.ID, RuntimePart: st.part}}}); err != nil {
			b.Fatal(err)
		}
		durable += time.Since(t0)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(float64(nkeys), "keys")
	b.ReportMetric(ms(pause), "barrier-pause-ms")
	b.ReportMetric(ms(sync), "part-sync-ms")
	b.ReportMetric(ms(durable), "durable-ms")
}
