package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/postgres"
)

// fences hands out growing fences, as a state directory does.
func fences(start uint64) func() (uint64, error) {
	var n atomic.Uint64
	n.Store(start)
	return func() (uint64, error) { return n.Add(1), nil }
}

func runInfo(pipeline string, fence func() (uint64, error)) *connector.RunInfo {
	return &connector.RunInfo{Resumable: true, Pipeline: pipeline, Instance: "i1", Since: time.Now(), Fence: fence}
}

// TestFenceStopsAnEarlierRun: a run that goes on writing after a later
// run of the same pipeline opened (a process that froze, then woke up)
// has its batch rolled back and stops with an error that says why; the
// later run's rows stay. Another pipeline writing the same table is not
// fenced off.
func TestFenceStopsAnEarlierRun(t *testing.T) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+" (id bigint PRIMARY KEY, v text)")
	t.Cleanup(func() {
		exec(t, pool, `DELETE FROM public.etld_sink_fences WHERE sink LIKE $1`, name+"%")
	})
	in := connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}
	cfg := postgres.Config{DSN: dsn, Table: name}
	next := fences(uint64(time.Now().Unix()))
	row1 := func(v string) row.Change { return ch(row.UpdateAfter, row.BigIntValue(1), row.StringValue(v)) }

	first := openRun(t, cfg, in, connector.SinkEnv{}, runInfo(name, next))
	write(t, first, []row.Change{row1("first")}, 1)
	second := openRun(t, cfg, in, connector.SinkEnv{}, runInfo(name, next))
	write(t, second, []row.Change{row1("second")}, 1)
	other := openRun(t, cfg, in, connector.SinkEnv{Name: "other"}, runInfo(name+"-other", next))
	write(t, other, []row.Change{ch(row.Insert, row.BigIntValue(2), row.StringValue("other"))}, 1)

	ctx := testenv.Context(t, time.Minute)
	if err := first.Write(ctx, batchOf(row1("stale"))); err != nil {
		t.Fatal(err)
	}
	err := first.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "a later run of the pipeline took fence") {
		t.Fatalf("the earlier run's flush: %v, want a fencing error", err)
	}
	if got, want := dump(t, pool, name), []string{"1|second", "2|other"}; !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	// The later run goes on.
	write(t, second, []row.Change{row1("third")}, 1)
	if got, want := dump(t, pool, name), []string{"1|third", "2|other"}; !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	// A run whose fence is below the stored one does not open.
	s, err := newBound(cfg, in, connector.SinkEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	s.SetRun(*runInfo(name, fences(1)))
	if err := s.Open(ctx); err == nil || !strings.Contains(err.Error(), "a later run of the pipeline writes the table") {
		t.Fatalf("Open with an older fence: %v, want a fencing error", err)
	}
}

// TestLateWriteOfAKilledLife answers, against the real server, whether a
// request a killed process had sent can land over what the next life
// wrote. The proxy holds the first life's request while the life is
// killed (its context ends, its connection closes) and lets it through
// later on the session it was sent on, which is still open; the table
// must end with the next life's value, with and without a fence:
//
//   - a held write: COMMIT goes only after the writes' answers, which
//     the dead life never read, so the held transaction is rolled back
//     when the session ends.
//   - a held COMMIT: the dead life's transaction has written and holds
//     its rows' locks (and, fenced, the fence row's share lock), so the
//     next life's fence and writes wait for it: the late COMMIT lands
//     first, the newer value after it.
func TestLateWriteOfAKilledLife(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   string
		fenced bool
	}{
		{"held write", "INSERT", false},
		{"held commit", "COMMIT", false},
		{"held write, fenced", "INSERT", true},
		{"held commit, fenced", "COMMIT", true},
	} {
		t.Run(tc.name, func(t *testing.T) { lateWrite(t, tc.hold, tc.fenced) })
	}
}

func lateWrite(t *testing.T, hold string, fenced bool) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+" (id bigint PRIMARY KEY, v text)")
	proxy := testenv.NewHoldProxy(t, serverAddr(t, dsn), testenv.PostgresFraming)
	in := connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}
	cfg := postgres.Config{DSN: withAddr(t, dsn, proxy.Addr()), Table: name}
	var run *connector.RunInfo
	if fenced {
		run = runInfo(name, fences(uint64(time.Now().Unix())))
		t.Cleanup(func() { exec(t, pool, `DELETE FROM public.etld_sink_fences WHERE sink LIKE $1`, name+"%") })
	}
	ctx := testenv.Context(t, 2*time.Minute)
	row1 := func(v string) row.Change { return ch(row.UpdateAfter, row.BigIntValue(1), row.StringValue(v)) }

	// The first life's session is told apart by its application_name.
	// (within the 63 bytes PostgreSQL keeps of it).
	short := name[max(0, len(name)-24):]
	firstApp := "first" + short
	firstCfg := cfg
	firstCfg.DSN += "&application_name=" + firstApp
	first := openRun(t, firstCfg, in, connector.SinkEnv{}, run)
	write(t, first, []row.Change{row1("first")}, 1)
	held := proxy.Hold(testenv.PostgresStatement(hold))
	if err := first.Write(ctx, batchOf(row1("stale"), ch(row.Delete, row.BigIntValue(2), row.StringValue("")))); err != nil {
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

	// The next life runs until it is done, or until it waits for a lock
	// the dead life's transaction holds: only then does the held request
	// reach the server.
	nextApp := "next" + short
	nextCfg := cfg
	nextCfg.DSN += "&application_name=" + nextApp
	done := nextLife(ctx, nextCfg, in, run, row1("new"))
	var nextErr error
	finished := false
	testenv.Eventually(t, time.Minute, "the next life ends or waits for a lock", func() error {
		select {
		case nextErr = <-done:
			finished = true
			return nil
		default:
		}
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", nextApp).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the next life runs")
		}
		return nil
	})
	select {
	case <-proxy.Release():
	case <-ctx.Done():
		t.Fatal("the held request was not answered")
	}
	if !finished {
		nextErr = <-done
	}
	if nextErr != nil {
		t.Fatal(nextErr)
	}
	// The held requests' answers are in; the dead life's session then
	// ends (the proxy closes its side) after what it was sent ran.
	testenv.Eventually(t, time.Minute, "the first life's session ends", func() error {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", firstApp).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d sessions", n)
		}
		return nil
	})
	if got, want := dump(t, pool, name), []string{"1|new"}; !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v: the dead life's late request landed over the next life's write", got, want)
	}
}

// nextLife opens a sink of cfg (told run, when not nil), writes c and
// flushes, on a goroutine; the channel gets the outcome.
func nextLife(ctx context.Context, cfg postgres.Config, in connector.SinkInput, run *connector.RunInfo, c row.Change) <-chan error {
	done := make(chan error, 1)
	go func() {
		next, err := newBound(cfg, in, connector.SinkEnv{})
		if err == nil && run != nil {
			next.SetRun(*run)
		}
		if err == nil {
			err = next.Open(ctx)
		}
		if err == nil {
			err = next.Write(ctx, batchOf(c))
		}
		if err == nil {
			err = next.Flush(ctx)
		}
		if next != nil {
			_ = next.Close(context.Background())
		}
		done <- err
	}()
	return done
}
