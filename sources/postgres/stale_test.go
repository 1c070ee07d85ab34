package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/postgres"
)

// upserted is what an upsert sink keyed by the first column holds: the
// last +I or +U of a key, gone after its -D; it drops -U.
type upserted map[string]string

func (u upserted) apply(cs []row.Change) {
	for _, c := range cs {
		k := c.Row[0].String()
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
			u[k] = row.Change{Kind: row.Insert, Row: c.Row}.String()
		case row.Delete:
			delete(u, k)
		}
	}
}

func (u upserted) lines() []string {
	out := make([]string, 0, len(u))
	for _, v := range u {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// TestResumeSnapshotAfterRunAhead: a run hands on snapshot rows past the
// position a checkpoint kept (an upsert sink commits them) and dies; a
// row it handed on that is deleted (or whose key moves) before the
// restored run's new snapshot is in neither that snapshot nor the
// changes the stream applies (they committed before the snapshot the
// row's part of the table is now read in). The restored run must still
// delete it from the upsert sink, and keep the changelog exact for a
// stateful consumer. Checkpointed mid-snapshot, before the first Read,
// and never (the next run starts anew and finds the slot made).
func TestResumeSnapshotAfterRunAhead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int // rows read before the checkpoint
	}{{"mid-snapshot", 500}, {"unread", 0}, {"no checkpoint", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
			f.exec(t, "INSERT INTO $T SELECT i, 'v' || i, i FROM generate_series(1, 3000) i")
			cfg := f.config()
			cfg.FetchSize = 100
			m, u := newModel(0), upserted{}
			s := open(t, cfg, nil, kvCols...)
			if tc.first > 0 {
				cs := readN(t, s, tc.first, 100)
				if err := m.apply(cs); err != nil {
					t.Fatal(err)
				}
				u.apply(cs)
			}
			pos, err := s.Position()
			if err != nil {
				t.Fatal(err)
			}
			if tc.first < 0 {
				pos = nil // killed before its first checkpoint: the next run starts anew, on the slot it made
			}
			// The run goes on past the checkpoint into the sink, then dies.
			u.apply(readN(t, s, 1000, 100))
			s.Close(context.Background())
			for _, q := range []string{
				"DELETE FROM $T WHERE id IN (150, 600, 1200, 2500)",
				"UPDATE $T SET id = 7000 WHERE id = 700",
				"INSERT INTO $T VALUES (6000, 'brief', 1)",
				"DELETE FROM $T WHERE id = 6000",
				"DELETE FROM $T WHERE id = 900",
				"INSERT INTO $T VALUES (900, 'back', 2)",
				"UPDATE $T SET v = 'upd' WHERE id IN (50, 1000)",
			} {
				f.exec(t, q)
			}
			cfg.Stop = "latest"
			s = open(t, cfg, pos, kvCols...)
			cs := readAll(t, s, 1000)
			if err := m.apply(cs); err != nil {
				t.Fatal(err)
			}
			u.apply(cs)
			want := f.tableRows(t, kvCols...)
			if !slices.Equal(m.lines(), want) {
				t.Fatalf("the changes make %d rows, the table has %d: %s", len(m.lines()), len(want), firstDiff(m.lines(), want))
			}
			if got := u.lines(); !slices.Equal(got, want) {
				t.Errorf("the upsert sink holds %d rows, the table %d: %s", len(got), len(want), setDiff(want, got))
			}
		})
	}
}

// setDiff names up to 10 lines only want has and up to 10 only got has.
func setDiff(want, got []string) string {
	var out []string
	only := func(label string, a, b []string) {
		n := 0
		for _, l := range a {
			if !slices.Contains(b, l) {
				if n++; n <= 10 {
					out = append(out, fmt.Sprintf("%s %s", label, l))
				}
			}
		}
	}
	only("missing", want, got)
	only("unexpected", got, want)
	return fmt.Sprint(out)
}

// TestResumeSnapshotAfterRunAheadUpsert is TestResumeSnapshotAfterRunAhead
// with changelog_mode upsert over a table of the default identity, whose
// deletes log only the key: the pair's +I is the row as the slot's
// changes last made it (an +I with NULLs would reach the stateful
// operators after the normalization), so the rows deleted there that a
// change before made are deleted from the upsert sink.
func TestResumeSnapshotAfterRunAheadUpsert(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
	f.exec(t, "ALTER TABLE $T REPLICA IDENTITY DEFAULT")
	f.exec(t, "INSERT INTO $T SELECT i, 'v' || i, i FROM generate_series(1, 3000) i")
	cfg := f.config()
	cfg.FetchSize = 100
	cfg.ChangelogMode = "upsert"
	openUpsert := func(pos []byte) *postgres.Source {
		s := build(t, cfg, nil, kvCols...)
		s.UpsertKey([]string{"id"})
		if pos != nil {
			if err := s.Restore(pos); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	u := upserted{}
	s := openUpsert(nil)
	u.apply(readN(t, s, 500, 100))
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	u.apply(readN(t, s, 1000, 100))
	s.Close(context.Background())
	for _, q := range []string{
		"UPDATE $T SET n = -n WHERE id IN (600, 1200)",
		"DELETE FROM $T WHERE id IN (150, 600, 1200)",
		"INSERT INTO $T VALUES (6000, 'brief', 1)",
		"DELETE FROM $T WHERE id = 6000",
	} {
		f.exec(t, q)
	}
	cfg.Stop = "latest"
	s = openUpsert(pos)
	cs := readAll(t, s, 1000)
	for _, c := range cs {
		if c.Kind == row.Insert && c.Row[1].IsNull() {
			t.Errorf("%s: a row of NULLs would reach the operators after the normalization", c)
		}
	}
	u.apply(cs)
	want := f.tableRows(t, kvCols...)
	if got := u.lines(); !slices.Equal(got, want) {
		t.Errorf("the upsert sink holds %d rows, the table %d: %s", len(got), len(want), setDiff(want, got))
	}
}
