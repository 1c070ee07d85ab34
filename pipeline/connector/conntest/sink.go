package conntest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Sink describes a sink connector to the kit.
type Sink struct {
	// Mode is the mode the kit binds the sink in, Append or Upsert (key:
	// id), and the one Landed reads its target in.
	Mode connector.Mode
	// Target makes a fresh place for one definition to write to.
	Target func(t *testing.T) Target
	// Server is the host:port the sink's client dials, for the
	// definitions that put a testenv.Proxy in front of it; "" for a sink
	// without a server (print, file).
	Server string
	// AtLeastOnce: a write cut by an outage may land twice (a produce
	// sent again after the broker took it), so after one the kit accepts
	// a row more than once.
	AtLeastOnce bool
	// Broken builds a sink whose Open fails, for a sink without a
	// Server (a path that is a directory); nil when it has a Server, whose
	// Open the kit makes fail through a proxy that is down, or when
	// nothing makes its Open fail.
	Broken func(t *testing.T) connector.Sink
	// Crash drops a sink as a killed process would: nothing it prepared
	// is published, and what it holds open is let go. Nil for a sink
	// without state in checkpoints.
	Crash func(t *testing.T, s connector.Sink)
}

// Target is one fresh place a sink writes to: a topic, a table, an
// index, a file.
type Target struct {
	// Sink builds a sink, not yet bound, that writes to the target
	// through addr: the Sink's Server, or a proxy in front of it ("" for
	// a sink without a Server).
	Sink func(t *testing.T, addr string) connector.Sink
	// Landed reads the rows the target holds, in any order: every row
	// written in append mode, the last row of each key in upsert mode.
	Landed func(t *testing.T) []row.Row
}

type sinkDef struct {
	name string
	// skip says why the definition does not apply to k, whose sink s is
	// one built but never opened; "" when it applies.
	skip func(k Sink, s connector.Sink) string
	run  func(t *testing.T, k Sink)
}

var sinkDefs = []sinkDef{
	{"open-write-close", func(Sink, connector.Sink) string { return "" }, openWriteClose},
	{"close-after-failed-open", func(k Sink, _ connector.Sink) string {
		if k.Server == "" && k.Broken == nil {
			return "nothing makes its Open fail"
		}
		return ""
	}, closeAfterFailedOpen},
	{"rows-not-kept", func(_ Sink, s connector.Sink) string {
		if c, ok := s.(connector.RowCopier); !ok || !c.CopiesRows() {
			return "not a connector.RowCopier"
		}
		return ""
	}, rowsNotKept},
	{"recovery-after-outage", func(k Sink, _ connector.Sink) string {
		if k.Server == "" {
			return "no server"
		}
		return ""
	}, recoveryAfterOutage},
	{"exactly-once-after-crash", func(k Sink, s connector.Sink) string {
		if _, ok := s.(connector.SinkSnapshotter); !ok || k.Crash == nil {
			return "no state in checkpoints"
		}
		return ""
	}, exactlyOnceAfterCrash},
}

// RunSink runs every definition that applies to the sink k describes,
// each as a subtest of t.
func RunSink(t *testing.T, k Sink) {
	t.Helper()
	if k.Mode != connector.Append && k.Mode != connector.Upsert {
		t.Fatalf("conntest.Sink.Mode is %v: want append or upsert", k.Mode)
	}
	probe := k.Target(t).Sink(t, k.Server)
	t.Cleanup(func() { _ = probe.Close(context.Background()) })
	for _, d := range sinkDefs {
		if why := d.skip(k, probe); why != "" {
			t.Logf("%s does not apply: %s", d.name, why)
			continue
		}
		t.Run(d.name, func(t *testing.T) { d.run(t, k) })
	}
}

// life is one sink of a definition, closed when the test ends unless
// the definition closed it or crashed it.
type life struct {
	connector.Sink
	done bool
}

// open binds s as the kit does, restores state when it is not nil, tells
// a RunAware sink run, opens it and returns it.
func (k Sink) open(t *testing.T, s connector.Sink, replay bool, state []byte, run *connector.RunInfo) *life {
	t.Helper()
	k.bind(t, s, replay)
	l := &life{Sink: s}
	t.Cleanup(func() {
		if !l.done {
			_ = l.Close(context.Background())
		}
	})
	if state != nil {
		if err := s.(connector.SinkSnapshotter).Restore(state); err != nil {
			t.Fatalf("Restore: %v", err)
		}
	}
	if ra, ok := s.(connector.RunAware); ok && run != nil {
		ra.SetRun(*run)
	}
	if err := s.Open(ctx(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func (k Sink) bind(t *testing.T, s connector.Sink, replay bool) {
	t.Helper()
	in := connector.SinkInput{Schema: Schema, Mode: k.Mode}
	if k.Mode == connector.Upsert {
		in.Key = []int{0}
	}
	if replay {
		in.Replay = connector.Replay{ByRecord: true}
	}
	if err := s.Bind(in); err != nil {
		t.Fatalf("Bind: %v", err)
	}
}

// close closes l and fails t on an error.
func (l *life) close(t *testing.T) {
	t.Helper()
	l.done = true
	if err := l.Close(ctx(t)); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// batchOf copies changes into a batch whose change i is record first+i
// of the input "in", as a source marks them.
func batchOf(changes []row.Change, first int64) *row.Batch {
	b := &row.Batch{}
	pos := row.NewPositions(len(changes), "/")
	for i, c := range changes {
		b.Append(c.Kind, slices.Clone(c.Row))
		pos.Mark(b.Len(), "in", first+int64(i))
	}
	b.Origin = pos
	return b
}

func (l *life) write(t *testing.T, changes []row.Change, first int64) *row.Batch {
	t.Helper()
	b := batchOf(changes, first)
	if err := l.Write(ctx(t), b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b
}

func (l *life) flush(t *testing.T) {
	t.Helper()
	if err := l.Flush(ctx(t)); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// changes is what the kit writes in k's mode: an upsert changelog, or
// inserts.
func (k Sink) changes(n int) []row.Change {
	if k.Mode == connector.Upsert {
		return upsertChanges(5, n, n/4)
	}
	return inserts(n)
}

// upsertChanges is an upsert changelog of n steps over keys ids of
// Schema, as an upsert sink receives one: inserts, updates (+U alone),
// deletes and inserts of deleted keys again, a key often changing
// several times within a few changes.
func upsertChanges(seed uint64, n, keys int) []row.Change {
	rng := rand.New(rand.NewPCG(seed, 7))
	live := map[int64]bool{}
	out := make([]row.Change, 0, n)
	for i := range n {
		k := rng.Int64N(int64(keys))
		v := fmt.Sprintf("v%d", i)
		switch {
		case !live[k]:
			out = append(out, row.Change{Kind: row.Insert, Row: Row(k, v)})
			live[k] = true
		case rng.IntN(3) == 0:
			out = append(out, row.Change{Kind: row.Delete, Row: Row(k, "old")})
			live[k] = false
		default:
			out = append(out, row.Change{Kind: row.UpdateAfter, Row: Row(k, v)})
		}
	}
	return out
}

// inserts is n inserts of Schema, ids 0 to n-1.
func inserts(n int) []row.Change {
	out := make([]row.Change, n)
	for i := range out {
		id := int64(i)
		out[i] = row.Change{Kind: row.Insert, Row: Row(id, fmt.Sprintf("v%d", id))}
	}
	return out
}

// table is what a target holds in mode after changes, as printedRows
// gives it.
func table(mode connector.Mode, changes []row.Change) []string {
	var rows []row.Row
	if mode != connector.Upsert {
		for _, c := range changes {
			rows = append(rows, c.Row)
		}
		return printedRows(rows)
	}
	last := map[int64]row.Row{}
	for _, c := range changes {
		if k := c.Row[0].Int64(); c.Kind == row.Delete {
			delete(last, k)
		} else {
			last[k] = c.Row
		}
	}
	for _, r := range last {
		rows = append(rows, r)
	}
	return printedRows(rows)
}

// checkLanded compares what tg holds with want; with dups, a row may be
// there more than once, but every row there is one of want.
func checkLanded(t *testing.T, tg Target, want []string, dups bool) {
	t.Helper()
	got := printedRows(tg.Landed(t))
	n := len(got)
	if dups {
		got = slices.Compact(got)
	}
	if slices.Equal(got, want) {
		return
	}
	missing, extra := difference(want, got), difference(got, want)
	t.Errorf("the target holds %d rows, want %d\nmissing %d: %s\nnot written or twice %d: %s",
		n, len(want), len(missing), excerpt(missing), len(extra), excerpt(extra))
}

// difference lists the elements of sorted a not matched in sorted b.
func difference(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a); i++ {
		for j < len(b) && b[j] < a[i] {
			j++
		}
		if j < len(b) && b[j] == a[i] {
			j++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

func excerpt(s []string) string {
	if len(s) > 8 {
		return strings.Join(s[:8], " ") + " ..."
	}
	return strings.Join(s, " ")
}

// openWriteClose: Close of a sink never opened returns nil; a sink
// opened, written and flushed twice, and closed, delivers every row.
func openWriteClose(t *testing.T, k Sink) {
	tg := k.Target(t)
	never := tg.Sink(t, k.Server)
	k.bind(t, never, false)
	if err := never.Close(ctx(t)); err != nil {
		t.Errorf("Close of a sink never opened: %v", err)
	}
	s := k.open(t, tg.Sink(t, k.Server), false, nil, nil)
	changes := k.changes(120)
	s.write(t, changes[:60], 0)
	s.flush(t)
	s.write(t, changes[60:], 60)
	s.flush(t)
	s.close(t)
	checkLanded(t, tg, table(k.Mode, changes), false)
}

// closeAfterFailedOpen: an Open that cannot reach its server (or target)
// fails by its deadline, and Close then returns nil, twice.
func closeAfterFailedOpen(t *testing.T, k Sink) {
	var s connector.Sink
	if k.Server != "" {
		down := testenv.NewProxy(t, k.Server) // never up
		s = k.Target(t).Sink(t, down.Addr())
	} else {
		s = k.Broken(t)
	}
	k.bind(t, s, false)
	octx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Open(octx); err == nil {
		t.Fatal("Open succeeded without a way to its target")
	}
	for i := range 2 {
		if err := s.Close(ctx(t)); err != nil {
			t.Errorf("Close %d after a failed Open: %v", i+1, err)
		}
	}
}

// rowsNotKept: every value of a batch is overwritten once Write
// returned, as a batch given back to its source is; what lands is the
// rows as they were written.
func rowsNotKept(t *testing.T, k Sink) {
	tg := k.Target(t)
	s := k.open(t, tg.Sink(t, k.Server), false, nil, nil)
	changes := k.changes(300)
	for i := 0; i < len(changes); i += 100 {
		b := s.write(t, changes[i:i+100], int64(i))
		for _, c := range b.Changes {
			for j := range c.Row {
				c.Row[j] = row.StringValue("recycled")
			}
		}
		if i > 0 {
			s.flush(t)
		}
	}
	s.close(t)
	checkLanded(t, tg, table(k.Mode, changes), false)
}

// recoveryAfterOutage keeps the server away long enough for the sink's
// backoff to reach its cap (ETLD_OUTAGE_SECONDS, default 8), then brings
// it back: the pending write and flush must succeed within
// testenv.RecoveryBound of the return, and the target then holds every
// change.
func recoveryAfterOutage(t *testing.T, k Sink) {
	tg := k.Target(t)
	px := testenv.NewProxy(t, k.Server)
	px.Up()
	s := k.open(t, tg.Sink(t, px.Addr()), false, nil, nil)
	c := ctx(t)
	changes := k.changes(200)
	s.write(t, changes[:100], 0)
	s.flush(t)
	outage := testenv.OutageDuration(8 * time.Second)
	took := testenv.MeasureRecovery(t, px, outage, func() error {
		if err := s.Write(c, batchOf(changes[100:], 100)); err != nil {
			return err
		}
		return s.Flush(c)
	})
	t.Logf("first write %s after the server's return from a %s outage", took.Round(time.Millisecond), outage)
	if took > testenv.RecoveryBound {
		t.Errorf("writes resumed %s after the server's return, want within %s", took.Round(time.Millisecond), testenv.RecoveryBound)
	}
	s.close(t)
	checkLanded(t, tg, table(k.Mode, changes), k.AtLeastOnce)
}

// exactlyOnceAfterCrash runs a sink as a resumable run does: it
// checkpoints (Flush, Snapshot, Commit, and Commit again: Commit is
// idempotent), writes past the checkpoint and crashes; the next life
// restores the checkpoint, is given what came after it again and
// checkpoints. The target holds every change once.
func exactlyOnceAfterCrash(t *testing.T, k Sink) {
	tg := k.Target(t)
	run := connector.RunInfo{Resumable: true, Pipeline: "conntest", Instance: "i1", Since: time.Now()}
	changes := k.changes(300)

	first := k.open(t, tg.Sink(t, k.Server), true, nil, &run)
	first.write(t, changes[:100], 0)
	state := checkpoint(t, first)
	commit(t, first, state)
	commit(t, first, state)
	first.write(t, changes[100:200], 100)
	first.flush(t)
	first.done = true
	k.Crash(t, first.Sink)

	run.Restored = true
	second := k.open(t, tg.Sink(t, k.Server), true, state, &run)
	second.write(t, changes[100:200], 100)
	second.write(t, changes[200:], 200)
	commit(t, second, checkpoint(t, second))
	second.close(t)
	checkLanded(t, tg, table(k.Mode, changes), false)
}

// checkpoint does what the runtime does at a barrier: Flush, Snapshot.
func checkpoint(t *testing.T, l *life) []byte {
	t.Helper()
	l.flush(t)
	state, err := l.Sink.(connector.SinkSnapshotter).Snapshot(ctx(t))
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return state
}

// commit finishes a checkpoint for a Committer, as the runtime does once
// the checkpoint is stored.
func commit(t *testing.T, l *life, state []byte) {
	t.Helper()
	if c, ok := l.Sink.(connector.Committer); ok {
		if err := c.Commit(ctx(t), state); err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
}
