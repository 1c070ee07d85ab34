// The helpers the sink's tests share: a sink opened on the real server,
// a table's rows as text, changes and batches, and a model of an upsert
// table.

package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/postgres"
)

// The shared helpers of internal/testenv, under the names this package's
// tests call them by.
var (
	openDB = testenv.Postgres
	table  = testenv.PostgresTable
	exec   = testenv.PgExec
	ident  = testenv.PgIdent
)

// rejects collects what the sink hands to on_error.
type rejects struct {
	mu   sync.Mutex
	recs []connector.BadRecord
}

func (r *rejects) reject(b connector.BadRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, b)
	return nil
}

// open builds, binds and opens a sink; it is closed when the test ends.
func open(t testing.TB, cfg postgres.Config, in connector.SinkInput, env connector.SinkEnv) *postgres.Sink {
	t.Helper()
	return openRun(t, cfg, in, env, nil)
}

// openRun is open with a run, for a RunAware sink.
func openRun(t testing.TB, cfg postgres.Config, in connector.SinkInput, env connector.SinkEnv, run *connector.RunInfo) *postgres.Sink {
	t.Helper()
	s, err := newBound(cfg, in, env)
	if err != nil {
		t.Fatal(err)
	}
	if run != nil {
		s.SetRun(*run)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func newBound(cfg postgres.Config, in connector.SinkInput, env connector.SinkEnv) (*postgres.Sink, error) {
	if env.Name == "" {
		env.Name = "out"
	}
	s, err := postgres.New(cfg, env)
	if err != nil {
		return nil, err
	}
	return s, s.Bind(in)
}

// dump reads the table as sorted lines of |-separated text values.
func dump(t testing.TB, pool *pgxpool.Pool, name string) []string {
	t.Helper()
	return testenv.PostgresLines(t, pool, name, "|", "NULL")
}

func batchOf(changes ...row.Change) *row.Batch {
	return &row.Batch{Changes: changes}
}

func ch(k row.Kind, vals ...row.Value) row.Change { return row.Change{Kind: k, Row: vals} }

var kvSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "v", Type: row.Of(row.String)},
)

// write writes changes in batches of per and flushes.
func write(t testing.TB, s connector.Sink, changes []row.Change, per int) {
	t.Helper()
	ctx := testenv.Context(t, 2*time.Minute)
	for start := 0; start < len(changes); start += per {
		if err := s.Write(ctx, batchOf(changes[start:min(start+per, len(changes))]...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// model applies changes to an in-memory table as the sink must.
type model map[int64]string

func (m model) apply(c row.Change) {
	if c.Kind == row.Delete {
		delete(m, c.Row[0].Int64())
		return
	}
	if c.Kind != row.UpdateBefore {
		m[c.Row[0].Int64()] = c.Row[1].Str()
	}
}

func (m model) lines() []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d|%s", k, v))
	}
	sort.Strings(out)
	return out
}

// randomChanges is an upsert changelog over keys: inserts, updates (with
// their -U), deletes and re-inserts of deleted keys, one key often
// changing several times within a batch.
func randomChanges(seed uint64, n, keys int) []row.Change {
	rng := rand.New(rand.NewPCG(seed, 7))
	live := map[int64]bool{}
	var out []row.Change
	for i := range n {
		k := rng.Int64N(int64(keys))
		v := row.StringValue(fmt.Sprintf("v%d", i))
		switch {
		case !live[k]:
			out = append(out, ch(row.Insert, row.BigIntValue(k), v))
			live[k] = true
		case rng.IntN(3) == 0:
			out = append(out, ch(row.Delete, row.BigIntValue(k), row.StringValue("old")))
			live[k] = false
		default:
			out = append(out, ch(row.UpdateBefore, row.BigIntValue(k), row.StringValue("old")), ch(row.UpdateAfter, row.BigIntValue(k), v))
		}
	}
	return out
}
