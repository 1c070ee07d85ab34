package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/postgres"
)

// kvCols is the schema the resume tests read: key, text and number.
var kvCols = []string{"id BIGINT", "v STRING", "n INT"}

// TestResumeMidSnapshotIsExact cuts a run in the middle of a table's
// snapshot, changes rows on both sides of the cut (updates, deletes,
// inserts, a key moved across it), and restores a run at the cut: what
// the first run handed on and what the second reads (a new snapshot of
// the rest, then the stream to the end) apply strictly to a table equal
// to the real one: no change lost, none twice.
func TestResumeMidSnapshotIsExact(t *testing.T) {
	for _, cut := range []int{0, 1, 137, 499, 500} {
		t.Run(fmt.Sprintf("cut after %d rows", cut), func(t *testing.T) { resumeMidSnapshot(t, cut, false) })
	}
	// A text key in a collation whose order is not its bytes' (ICU's:
	// a < B < b): the snapshot reads it COLLATE "C", the order the
	// stream compares keys in.
	t.Run("text key", func(t *testing.T) { resumeMidSnapshot(t, 260, true) })
}

func resumeMidSnapshot(t *testing.T, cut int, textKey bool) {
	cols, key := "id bigint PRIMARY KEY, v text, n int", 0
	insert := "INSERT INTO $T SELECT i, 'v' || i, i FROM generate_series(%d, %d) i"
	move := "UPDATE $T SET id = 1000 + id WHERE id IN (3, 250, 490); UPDATE $T SET id = id - 1000 WHERE id = 1496"
	read := kvCols
	if textKey {
		cols, key = `id bigint NOT NULL, k text COLLATE "und-x-icu" PRIMARY KEY, v text, n int`, 1
		insert = "INSERT INTO $T SELECT i, chr(65 + i * 7 %% 26 + (i %% 2) * 32) || i, 'v' || i, i FROM generate_series(%d, %d) i"
		move = "UPDATE $T SET k = 'a' || k WHERE id IN (3, 250, 490); UPDATE $T SET k = 'Z' || k WHERE id IN (7, 400)"
		read = []string{"id BIGINT", "k STRING", "v STRING", "n INT"}
	}
	f := newFixture(t, cols)
	f.exec(t, fmt.Sprintf(insert, 1, 500))
	cfg := f.config()
	cfg.FetchSize = 50
	m := newModel(key)
	first := open(t, cfg, nil, read...)
	if cut > 0 {
		if err := m.apply(readN(t, first, cut, cut)); err != nil {
			t.Fatal(err)
		}
	}
	pos, err := first.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Changes after the cut, around it: updates, deletes, inserts, and
	// keys moved across it.
	f.exec(t, "UPDATE $T SET v = v || '!', n = n + 1000 WHERE id % 7 = 0")
	f.exec(t, "DELETE FROM $T WHERE id % 11 = 0")
	f.exec(t, fmt.Sprintf(insert, 501, 520))
	f.exec(t, move)
	cfg.Stop = "latest"
	second := open(t, cfg, pos, read...)
	if err := m.apply(readAll(t, second, 64)); err != nil {
		t.Fatal(err)
	}
	if want := f.tableRows(t, read...); !slices.Equal(m.lines(), want) {
		t.Fatalf("the changes make %d rows, the table has %d: %s", len(m.lines()), len(want), firstDiff(m.lines(), want))
	}
}

// TestResumeMidTransactionIsExact cuts a run in the middle of a large
// transaction's changes (and at random points of a stream of small
// ones), restores it there, and checks that the two runs' changes apply
// strictly to the real table.
func TestResumeMidTransactionIsExact(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
	f.exec(t, "INSERT INTO $T SELECT i, 'v' || i, i FROM generate_series(1, 50) i")
	cfg := f.config()
	m := newModel(0)
	s := open(t, cfg, nil, kvCols...)
	if err := m.apply(readN(t, s, 50, 50)); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "UPDATE $T SET n = n + 1") // one transaction, 100 changes
	rng := rand.New(rand.NewPCG(3, 9))
	for i := range 30 {
		f.exec(t, fmt.Sprintf("UPDATE $T SET v = v || '.' WHERE id = %d", 1+rng.IntN(50)))
		if i%10 == 0 {
			f.exec(t, fmt.Sprintf("DELETE FROM $T WHERE id = %d", 1+rng.IntN(50)))
		}
	}
	var stop string
	if err := f.pool.QueryRow(testenv.Context(t, time.Minute), "SELECT pg_current_wal_lsn()::text").Scan(&stop); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{37, 61, 2, 30, 17} {
		if err := m.apply(readN(t, s, n, n)); err != nil {
			t.Fatal(err)
		}
		pos, err := s.Position()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		s = open(t, cfg, pos, kvCols...)
	}
	cfg.Stop = "latest"
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())
	s = open(t, cfg, pos, kvCols...)
	if err := m.apply(readAll(t, s, 100)); err != nil {
		t.Fatal(err)
	}
	if want := f.tableRows(t, kvCols...); !slices.Equal(m.lines(), want) {
		t.Fatalf("the changes make %d rows, the table has %d: %s", len(m.lines()), len(want), firstDiff(m.lines(), want))
	}
}

// TestCommitConfirmsTheSlot: the slot's confirmed position moves only
// when Commit confirms a checkpoint's position, and to that position.
func TestCommitConfirmsTheSlot(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
	s := open(t, f.config(), nil, kvCols...)
	ctx := testenv.Context(t, time.Minute)
	confirmed := func() string {
		var lsn string
		if err := f.pool.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", f.slot).Scan(&lsn); err != nil {
			t.Fatal(err)
		}
		return lsn
	}
	start := confirmed()
	f.exec(t, "INSERT INTO $T VALUES (1, 'a', 1)")
	readN(t, s, 1, 10)
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	f.exec(t, "INSERT INTO $T VALUES (2, 'b', 2)")
	readN(t, s, 1, 10)
	// Read, not confirmed: the slot keeps its position (the status goes
	// every second; three give it time to have gone wrong).
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if got := confirmed(); got != start {
			t.Fatalf("the slot moved from %s to %s before any Commit", start, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := s.Commit(ctx, pos); err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.Split(string(pos), `"done":"`)[1], `"`)[0]
	testenv.Eventually(t, 30*time.Second, "the slot confirmed the committed position", func() error {
		if got := confirmed(); got != want {
			return fmt.Errorf("confirmed %s, want %s", got, want)
		}
		return nil
	})
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d is %q, want %q", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}

var _ = postgres.Config{}
var _ = row.Insert

// TestResumeCheckpointedBeforeTheFirstRow: a run restored mid-snapshot
// whose checkpoint is taken before it hands on a row (its new snapshot
// not read yet: under load a temporary slot waits for the server's
// running transactions) must keep where the snapshot goes on. The next
// run restored from that checkpoint read the table from its start again,
// handing on a second time every row the first run did (the crash test
// PostgreSQL CDC -> GROUP BY counted 2/3 of the snapshot twice).
func TestResumeCheckpointedBeforeTheFirstRow(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
	f.exec(t, "INSERT INTO $T SELECT i, 'v' || i, i FROM generate_series(1, 300) i")
	cfg := f.config()
	cfg.FetchSize = 50
	m := newModel(0)
	s := open(t, cfg, nil, kvCols...)
	if err := m.apply(readN(t, s, 120, 40)); err != nil {
		t.Fatal(err)
	}
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())
	f.exec(t, "UPDATE $T SET n = n + 1 WHERE id IN (5, 200)")
	// Restored, checkpointed before its first Read, killed.
	s = open(t, cfg, pos, kvCols...)
	if pos, err = s.Position(); err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())
	cfg.Stop = "latest"
	s = open(t, cfg, pos, kvCols...)
	if err := m.apply(readAll(t, s, 64)); err != nil {
		t.Fatal(err)
	}
	if want := f.tableRows(t, kvCols...); !slices.Equal(m.lines(), want) {
		t.Fatalf("the changes make %d rows, the table has %d: %s", len(m.lines()), len(want), firstDiff(m.lines(), want))
	}
}
