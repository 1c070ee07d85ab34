package mysql_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// TestLateWriteOfAKilledLife answers, against the real server, whether a
// statement a killed process had sent can land over what the next life
// wrote. The proxy holds the first life's request while the life is
// killed (its context ends, its connection closes) and lets it through
// later on the session it was sent on, which is still open; the table
// must end with the next life's values.
//
//   - a held write: the sink writes every batch in a transaction, so the
//     held statement runs in a transaction whose COMMIT was never sent,
//     and is rolled back when the session ends. Under autocommit it
//     would commit by itself, over the newer value.
//   - a held COMMIT: the dead life's transaction has written and holds
//     its rows' locks, so the next life's write of those rows waits for
//     it: the late COMMIT lands first, and the newer value after it.
func TestLateWriteOfAKilledLife(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func([]byte) bool
		// deletes adds a delete to the held batch: two statements.
		deletes bool
	}{
		{"held write", testenv.MySQLWrite, false},
		{"held commit", testenv.MySQLCommit, true},
	} {
		t.Run(tc.name, func(t *testing.T) { lateWrite(t, tc.hold, tc.deletes) })
	}
}

func lateWrite(t *testing.T, hold func([]byte) bool, deletes bool) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v TEXT)")
	proxy := testenv.NewHoldProxy(t, target(t, dsn), testenv.MySQLFraming)
	in := connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}
	cfg := mysql.Config{DSN: viaProxy(t, proxy, dsn), Table: name}
	ctx := testenv.Context(t, 2*time.Minute)
	row1 := func(v string) row.Change { return ch(row.UpdateAfter, row.BigIntValue(1), row.StringValue(v)) }

	first := open(t, cfg, in, connector.SinkEnv{})
	if err := first.Write(ctx, batchOf(row1("first"))); err != nil {
		t.Fatal(err)
	}
	if err := first.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	held := proxy.Hold(hold)
	stale := batchOf(row1("stale"))
	if deletes {
		stale.Changes = append(stale.Changes, ch(row.Delete, row.BigIntValue(2), row.StringValue("")))
	}
	if err := first.Write(ctx, stale); err != nil {
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

	next := open(t, cfg, in, connector.SinkEnv{})
	wrote := proxy.Seen(testenv.MySQLWrite)
	if err := next.Write(ctx, batchOf(row1("new"))); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- next.Flush(ctx) }()
	// The next life has sent its write (it may wait for the dead life's
	// locks): now the held request arrives.
	<-wrote
	select {
	case <-proxy.Release():
	case <-ctx.Done():
		t.Fatal("the held request was not answered")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, db, name), []string{"1|new"}; !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v: the dead life's late request landed over the next life's write", got, want)
	}
}
