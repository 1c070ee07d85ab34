// The helpers the source's tests share: a captured table on the real
// server, a source opened on it, reading until some changes or the end,
// and a strict model of a table that a changelog must apply to exactly.

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/postgres"
)

var (
	ident = testenv.PgIdent
	exec  = testenv.PgExec
)

// fixture is a captured table of the shared server, with a slot and a
// publication of the test's own, dropped when the test ends.
type fixture struct {
	pool  *pgxpool.Pool
	dsn   string
	table string
	slot  string
}

// newFixture creates the table with the given columns (SQL), REPLICA
// IDENTITY FULL.
func newFixture(t *testing.T, columns string) *fixture {
	t.Helper()
	pool, dsn := testenv.Postgres(t)
	return newFixtureOn(t, pool, dsn, columns)
}

func newFixtureOn(t *testing.T, pool *pgxpool.Pool, dsn, columns string) *fixture {
	t.Helper()
	f := &fixture{pool: pool, dsn: dsn, table: testenv.PostgresTable(t, pool, ""), slot: testenv.PostgresSlot(t, pool)}
	exec(t, pool, "CREATE TABLE "+ident(f.table)+" ("+columns+")")
	exec(t, pool, "ALTER TABLE "+ident(f.table)+" REPLICA IDENTITY FULL")
	return f
}

// config is a source of the fixture that creates its slot and
// publication.
func (f *fixture) config() postgres.Config {
	return postgres.Config{DSN: f.dsn, Table: f.table, Slot: f.slot, CreateSlot: true, CreatePublication: true}
}

func (f *fixture) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	exec(t, f.pool, strings.ReplaceAll(query, "$T", ident(f.table)), args...)
}

// rejects collects what the source hands to on_error.
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

// build makes a source of cfg with the schema's columns ("name TYPE",
// "name TYPE METADATA FROM 'key'"), not opened.
func build(t testing.TB, cfg postgres.Config, rj *rejects, cols ...string) *postgres.Source {
	t.Helper()
	var plain []string
	var meta []string
	for _, c := range cols {
		name, key, ok := strings.Cut(c, " METADATA FROM ")
		plain = append(plain, name)
		if ok {
			meta = append(meta, strings.Trim(key, "'"))
		} else {
			meta = append(meta, "")
		}
	}
	env := connector.SourceEnv{Name: "src", Schema: testenv.Schema(t, plain...), Metadata: meta}
	if rj != nil {
		env.Reject = rj.reject
	}
	s, err := postgres.New(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// open builds and opens a source, restored at pos when it is not nil;
// it is closed when the test ends.
func open(t testing.TB, cfg postgres.Config, pos []byte, cols ...string) *postgres.Source {
	t.Helper()
	s := build(t, cfg, nil, cols...)
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

// readN reads s until it handed on n changes (in batches of at most max),
// within a minute. It asks no Read for more than are still wanted: a
// test that cuts a run after n changes and then reads a fixed number
// more would otherwise lose count whenever a Read returns fewer than it
// asked (the stream had queued only part), and wait for changes that an
// earlier cut had read already (TestResumeMidTransactionIsExact failed
// so in CI: "read after 14 of 17 changes").
func readN(t testing.TB, s connector.Source, n, max int) []row.Change {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	var out []row.Change
	for len(out) < n {
		want := min(max, n-len(out))
		b, err := s.Read(ctx, want)
		if b != nil {
			if b.Len() > want {
				t.Fatalf("Read(%d) returned %d changes", want, b.Len())
			}
			out = append(out, b.Changes...)
		}
		if err != nil {
			t.Fatalf("read after %d of %d changes: %v", len(out), n, err)
		}
	}
	return out
}

// readAll reads a bounded source to its end within a minute.
func readAll(t testing.TB, s connector.Source, max int) []row.Change {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	var out []row.Change
	for {
		b, err := s.Read(ctx, max)
		if b != nil {
			out = append(out, b.Changes...)
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read after %d changes: %v", len(out), err)
		}
	}
}

// printed renders changes as +I[1, a].
func printed(cs []row.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// model is a table a changelog applies to strictly: +I of a key that is
// there, and -U or -D of a row that is not there as it is, are errors, so
// a change handed on twice or lost shows.
type model struct {
	rows map[string]string // key -> the row printed
	key  []int
}

func newModel(key ...int) *model { return &model{rows: map[string]string{}, key: key} }

func (m *model) keyOf(r row.Row) string {
	parts := make([]string, len(m.key))
	for i, k := range m.key {
		parts[i] = r[k].String()
	}
	return strings.Join(parts, "|")
}

func (m *model) apply(cs []row.Change) error {
	for i, c := range cs {
		k := m.keyOf(c.Row)
		text := row.Change{Kind: row.Insert, Row: c.Row}.String()
		cur, ok := m.rows[k]
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
			if ok {
				return fmt.Errorf("change %d %s: key %s holds %s already", i, c, k, cur)
			}
			m.rows[k] = text
		case row.UpdateBefore, row.Delete:
			if !ok || cur != text {
				return fmt.Errorf("change %d %s: key %s holds %q", i, c, k, cur)
			}
			delete(m.rows, k)
		}
	}
	return nil
}

func (m *model) lines() []string {
	out := make([]string, 0, len(m.rows))
	for _, v := range m.rows {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// tableRows reads the table as the source would print its rows: the
// given columns of every row, through a bounded snapshot-only source.
func (f *fixture) tableRows(t *testing.T, cols ...string) []string {
	t.Helper()
	cfg := postgres.Config{DSN: f.dsn, Table: f.table, Startup: "snapshot"}
	s := open(t, cfg, nil, cols...)
	out := printed(readAll(t, s, 1000))
	slices.Sort(out)
	return out
}
