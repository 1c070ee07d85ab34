package mysql_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

// upserted is what an upsert sink keyed by table and id holds: the last
// +I or +U of a key, gone after its -D.
type upserted map[string]string

func (u upserted) apply(b *row.Batch) {
	for _, c := range b.Changes {
		r := c.Row
		key := r[3].Str() + "/" + fmt.Sprint(r[0].Int64())
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
			u[key] = fmt.Sprintf("%d|%s|%s", r[0].Int64(), valueText(r[1]), valueText(r[2]))
		case row.Delete:
			delete(u, key)
		}
	}
}

func (u upserted) lines() []string {
	out := make([]string, 0, len(u))
	for k, v := range u {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// TestCDCResumeSnapshotAfterRunAhead: a run hands on rows after the
// position a checkpoint kept (an upsert sink commits them) and dies; the
// rows it handed on that are deleted, or whose key moves, before the
// restored run's snapshot goes on are in neither that snapshot nor the
// changes it hands on. The restored run must still delete them from the
// upsert sink, and keep the changelog exact for a stateful consumer
// (every change fits the rows of the checkpoint's changelog before it).
// Checkpointed mid-snapshot, and before the first Read (no snapshot
// progress yet).
func TestCDCResumeSnapshotAfterRunAhead(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	for _, tc := range []struct {
		name  string
		first int // batches read before the checkpoint
	}{{"mid-snapshot", 5}, {"before the first read", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := cdcTable(t, db, 3000), cdcTable(t, db, 100)
			cfg := mysql.Config{DSN: dsn, Tables: []string{a, b}, Scan: mysql.ScanConfig{FetchSize: 100}}
			s := newCDC(t, cfg, nil)
			if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			f, u := newFolded(t), upserted{}
			for range tc.first {
				bt, err := s.Read(testenv.Context(t, time.Minute), 1024)
				if err != nil {
					t.Fatal(err)
				}
				f.apply(bt)
				u.apply(bt)
			}
			pos, err := s.Position()
			if err != nil {
				t.Fatal(err)
			}
			// The run goes on past the checkpoint into the sink, then dies.
			for range 10 {
				bt, err := s.Read(testenv.Context(t, time.Minute), 1024)
				if err != nil {
					t.Fatal(err)
				}
				u.apply(bt)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				"DELETE FROM `" + a + "` WHERE id IN (150, 600, 1200, 2500)",
				"UPDATE `" + a + "` SET id = 7000 WHERE id = 700",
				"INSERT INTO `" + a + "` VALUES (6000, 'brief', 1)",
				"DELETE FROM `" + a + "` WHERE id = 6000",
				"DELETE FROM `" + a + "` WHERE id = 900",
				"INSERT INTO `" + a + "` VALUES (900, 'back', 2)",
				"UPDATE `" + a + "` SET v = 'upd' WHERE id IN (50, 1000)",
			} {
				testenv.Exec(t, db, q)
			}

			s2 := newCDC(t, cfg, nil)
			if err := s2.Restore(pos); err != nil {
				t.Fatal(err)
			}
			if err := s2.Open(testenv.Context(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			defer s2.Close(context.Background())
			want := truth(t, db, a, b)
			deadline := time.Now().Add(readWait)
			for !slices.Equal(f.lines(), want) {
				if time.Now().After(deadline) {
					t.Fatalf("the capture holds %d rows, the tables %d:\n%s", len(f.lines()), len(want), firstDiff(want, f.lines()))
				}
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				bt, err := s2.Read(ctx, 1024)
				cancel()
				if err != nil && ctx.Err() == nil {
					t.Fatalf("read: %v", err)
				}
				if bt != nil {
					f.apply(bt)
					u.apply(bt)
				}
			}
			if got := u.lines(); !slices.Equal(got, want) {
				t.Errorf("the upsert sink holds %d rows, the tables %d:\n%s", len(got), len(want), firstDiff(want, got))
			}
		})
	}
}

// TestCDCResumedFilterOutlivesRead: while the binlog read places changes
// in a resumed snapshot's parts (a query per change), a Read whose
// context ends (as it does for every checkpoint's barrier) must not lose
// the changes it had taken from a rows event: they are handed on, by
// this Read or the next.
func TestCDCResumedFilterOutlivesRead(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 1000)
	cfg := mysql.Config{DSN: dsn, Tables: []string{a}, Scan: mysql.ScanConfig{FetchSize: 100}}
	s := newCDC(t, cfg, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	f := newFolded(t)
	readBatches(t, s, f, 3, 1024) // ids 1..300
	// Between the two snapshot positions: rows of the part read first
	// (a query places each) and of the rest.
	testenv.Exec(t, db, "UPDATE `"+a+"` SET n = n + 1 WHERE id BETWEEN 250 AND 350")
	s = reopen(t, s, cfg)
	readBatches(t, s, f, 7, 1024)                         // ids 301..1000, as of the later position
	bt, err := s.Read(testenv.Context(t, time.Minute), 2) // one update: the event stays pending
	if err != nil {
		t.Fatal(err)
	}
	f.apply(bt)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if bt, _ := s.Read(ctx, 50); bt != nil {
		f.apply(bt)
	}
	readUntil(t, s, f, db, a)
}
