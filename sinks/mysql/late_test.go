package mysql_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// openLife opens a sink as one life of pipeline p whose state directory
// is store's, as the runtime does: told about its run when it wants to
// know.
func openLife(ctx context.Context, cfg mysql.Config, store *checkpoint.Store) (*mysql.Sink, error) {
	s, err := newBound(cfg, connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	if err != nil {
		return nil, err
	}
	if ra, ok := any(s).(connector.RunAware); ok {
		ra.SetRun(connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i",
			Fence: func() (uint64, error) { return store.Fence(time.Now()) }})
	}
	return s, s.Open(ctx)
}

func closeAtEnd(t *testing.T, s *mysql.Sink) {
	t.Cleanup(func() { _ = s.Close(context.Background()) })
}

func upsert(k int64, v string) row.Change {
	return ch(row.UpdateAfter, row.BigIntValue(k), row.StringValue(v))
}

func del(k int64) row.Change {
	return ch(row.Delete, row.BigIntValue(k), row.StringValue(""))
}

// TestLateWriteOfAKilledLife answers, against the real server, whether a
// statement a killed process had sent can land after the next life
// started. The proxy holds the first life's request while the life is
// killed (its context ends, its connection closes) and lets it through
// once the next life is starting, on the session it was sent on, which
// is still open. Rows 1, 3 and 4 hold "first" before.
//
//   - a held write: the sink writes every batch in a transaction, so the
//     held statement runs in a transaction whose COMMIT was never sent,
//     and is rolled back when the session ends. Under autocommit it
//     would commit by itself, over the newer value.
//   - a held COMMIT: the dead life's transaction has written and holds
//     its rows' locks, and a shared lock on the sink's fence row, which
//     the next life's start takes exclusively: the next life waits for
//     the late COMMIT, and when it has started, nothing of the earlier
//     life is pending any more, also for rows it never writes (3 and 4
//     here). Without the fence the late COMMIT lands after the next
//     life's start, and after its writes of other rows.
func TestLateWriteOfAKilledLife(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   func([]byte) bool
		stale  []row.Change
		atOpen []string // the table when the next life has started
		final  []string // after it wrote row 1
	}{
		{"held write", testenv.MySQLWrite, []row.Change{upsert(1, "stale")},
			[]string{"1|first", "3|first", "4|first"}, []string{"1|new", "3|first", "4|first"}},
		{"held commit", testenv.MySQLCommit, []row.Change{upsert(1, "stale"), upsert(3, "stale"), del(4), del(2)},
			[]string{"1|stale", "3|stale"}, []string{"1|new", "3|stale"}},
	} {
		t.Run(tc.name, func(t *testing.T) { lateWrite(t, tc.hold, tc.stale, tc.atOpen, tc.final) })
	}
}

func lateWrite(t *testing.T, hold func([]byte) bool, stale []row.Change, atOpen, final []string) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v TEXT)")
	proxy := testenv.NewHoldProxy(t, target(t, dsn), testenv.MySQLFraming)
	cfg := mysql.Config{DSN: viaProxy(t, proxy, dsn), Table: name}
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, 2*time.Minute)

	first, err := openLife(ctx, cfg, store)
	closeAtEnd(t, first)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Write(ctx, batchOf(upsert(1, "first"), upsert(3, "first"), upsert(4, "first"))); err != nil {
		t.Fatal(err)
	}
	if err := first.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	held := proxy.Hold(hold)
	if err := first.Write(ctx, batchOf(stale...)); err != nil {
		t.Fatal(err)
	}
	killed, kill := context.WithCancel(ctx)
	flushed := make(chan error, 1)
	go func() { flushed <- first.Flush(killed) }()
	<-held
	kill()
	proxy.DropClients() // its sockets end with it
	if err := <-flushed; err == nil {
		t.Fatal("the held flush succeeded")
	}

	// The next life starts; once it has asked for its fence (or started,
	// without one), the held request arrives.
	fencing := proxy.Seen(testenv.MySQLQuery("UPDATE etld_fences"))
	type opened struct {
		s   *mysql.Sink
		err error
	}
	started := make(chan opened, 1)
	go func() {
		s, err := openLife(ctx, cfg, store)
		started <- opened{s, err}
	}()
	var next opened
	select {
	case <-fencing:
		release(t, ctx, proxy)
		next = <-started
	case next = <-started:
	}
	closeAtEnd(t, next.s)
	if next.err != nil {
		t.Fatal(next.err)
	}
	if got := dump(t, db, name); !slices.Equal(got, atOpen) {
		t.Errorf("when the next life had started the table was %v, want %v: a request of the earlier life was still pending", got, atOpen)
	}
	// The next life writes row 1; once it has sent the write (which may
	// wait for the earlier life's locks), whatever is still held arrives.
	wrote := proxy.Seen(testenv.MySQLWrite)
	done := make(chan error, 1)
	go func() {
		err := next.s.Write(ctx, batchOf(upsert(1, "new")))
		if err == nil {
			err = next.s.Flush(ctx)
		}
		done <- err
	}()
	select {
	case <-wrote:
	case err := <-done:
		done <- err
	}
	release(t, ctx, proxy)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := dump(t, db, name); !slices.Equal(got, final) {
		t.Fatalf("table %v, want %v: the dead life's late request landed after the next life started", got, final)
	}
}

// release lets the held request through and waits for its answer.
func release(t *testing.T, ctx context.Context, proxy *testenv.HoldProxy) {
	t.Helper()
	select {
	case <-proxy.Release():
	case <-ctx.Done():
		t.Fatal("the held request was not answered")
	}
}

// TestFrozenLifeStopsOnANewerOne: a life still running beside a newer
// one (a frozen process woken up) must not write over the newer life's
// rows: its next transaction finds a newer fence and the sink stops.
func TestFrozenLifeStopsOnANewerOne(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v TEXT)")
	cfg := mysql.Config{DSN: dsn, Table: name}
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t, time.Minute)
	var lives []*mysql.Sink
	for range 2 {
		s, err := openLife(ctx, cfg, store)
		closeAtEnd(t, s)
		if err != nil {
			t.Fatal(err)
		}
		lives = append(lives, s)
	}
	if err := lives[1].Write(ctx, batchOf(upsert(1, "new"))); err != nil {
		t.Fatal(err)
	}
	if err := lives[1].Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lives[0].Write(ctx, batchOf(upsert(1, "stale"), del(2))); err != nil {
		t.Fatal(err)
	}
	if err := lives[0].Flush(ctx); err == nil || !strings.Contains(err.Error(), "later run") {
		t.Fatalf("the older life's flush after the newer life started: %v", err)
	}
	if got, want := dump(t, db, name), []string{"1|new"}; !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
}
