package crashtest

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// TestSinkOutage runs datagen -> GROUP BY -> MySQL upsert with a TCP
// proxy between the sink and the server, and takes the server away for
// ETLD_OUTAGE_SECONDS (default 30) in the middle of the run: every
// connection is closed and new ones are refused. The input takes two
// seconds to generate, so a pipeline that did not wait for its sink would
// end during the outage. It must instead be held back (not end, complete
// no checkpoint while the server is away, its source slowed by
// backpressure), retry, and end once the server is back, with the table
// exactly the query's result computed directly.
func TestSinkOutage(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	outage := time.Duration(intEnv("ETLD_OUTAGE_SECONDS", 30)) * time.Second
	const rows, rate, keys = 20_000, 10_000, 100 // two seconds of input

	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password := cfg.Passwd
	px := testenv.NewProxy(t, cfg.Addr)
	px.Up()
	cfg.Addr = px.Addr()
	// The DSN reaches the pipeline file as ${VAR}, as a secret should.
	t.Setenv("ETLD_OUTAGE_DSN", cfg.FormatDSN())

	table := testenv.UniqueName(t, "outage")
	db, err := sql.Open("mysql", dsn) // straight to the server
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS " + table)
		db.Close()
	})

	dir := t.TempDir()
	file := filepath.Join(dir, "outage.yaml")
	yaml := fmt.Sprintf(`version: 1
name: outage
sources:
  - name: gen
    type: datagen
    rows: %d
    rate: %d
    schema:
      - id BIGINT
    fields:
      id: { kind: sequence, start: 1, end: %d }
transforms:
  - name: stats
    sql: |
      SELECT MOD(id, %d) AS k, COUNT(*) AS n, SUM(id) AS total, MAX(id) AS max_id
      FROM gen
      GROUP BY MOD(id, %d)
sinks:
  - name: db
    from: stats
    type: mysql
    dsn: ${ETLD_OUTAGE_DSN}
    table: %s
    key: [k]
    create_table: true
`, rows, rate, rows, keys, keys, table)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	logs := &logCapture{}
	log := slog.New(logs)
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), outage+3*time.Minute)
	defer cancel()
	type result struct {
		sum pipeline.Summary
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	began := time.Now()
	var progress atomic.Pointer[pipeline.Summary]
	progress.Store(&pipeline.Summary{})
	go func() {
		sum, err := p.Run(ctx, pipeline.RunOptions{
			StateDir: filepath.Join(dir, "state"), CheckpointInterval: 200 * time.Millisecond, Logger: log,
			Progress: func(s pipeline.Summary) { progress.Store(&s) },
		})
		done <- result{sum, err, time.Now()}
	}()

	// Mid-run: the sink has written something, the source is not done.
	testenv.Eventually(t, 30*time.Second, "the sink writes its first rows", func() error {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("table %s is empty", table)
		}
		return nil
	})
	var before int
	if err := db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&before); err != nil {
		t.Fatal(err)
	}
	px.Down()
	down := time.Now()
	t.Logf("server away after %s, with %d of %d rows counted in the table", down.Sub(began).Round(time.Millisecond), before, rows)
	if before >= rows {
		t.Fatalf("the table holds all %d rows before the outage: the cut is not mid-run", rows)
	}
	warnsAtCut := logs.count("will retry")

	// Halfway through and at the end of the outage: no checkpoint may
	// complete while the sink cannot make its rows durable (Progress lags
	// by half a second at most, hence the first look only halfway).
	var mid *pipeline.Summary
	for _, wait := range []time.Duration{outage / 2, outage - outage/2} {
		select {
		case r := <-done:
			t.Fatalf("the pipeline ended %s into the outage (error %v): it was not held back by the sink", r.at.Sub(down).Round(time.Millisecond), r.err)
		case <-time.After(wait):
		}
		if mid == nil {
			mid = progress.Load()
		}
	}
	last := progress.Load()
	px.Up()
	up := time.Now()
	away := up.Sub(down)
	retries := logs.count("will retry") - warnsAtCut
	var read int64
	for _, c := range last.Sources {
		read += c.Out
	}
	t.Logf("server back after %s away; %d retry warnings meanwhile; the source had produced %d of %d rows", away.Round(time.Millisecond), retries, read, rows)
	if last.Checkpoints.Count != mid.Checkpoints.Count {
		t.Errorf("checkpoints completed while the sink was away: %d halfway through the outage, %d at its end", mid.Checkpoints.Count, last.Checkpoints.Count)
	}
	if away < outage {
		t.Errorf("the outage lasted %s, less than %s", away, outage)
	}
	if retries == 0 {
		t.Errorf("no retry was logged during the outage: the sink did not notice it")
	}

	var r result
	select {
	case r = <-done:
	case <-time.After(2*time.Minute + outage):
		t.Fatal("the pipeline did not end within 2 minutes of the server's return")
	}
	if r.err != nil {
		t.Fatalf("the pipeline failed: %v", r.err)
	}
	t.Logf("pipeline ended %s after the server's return, %s in all; %d checkpoints", r.at.Sub(up).Round(time.Millisecond), r.at.Sub(began).Round(time.Millisecond), r.sum.Checkpoints.Count)
	if n := px.Forwarded(); n < 2 {
		t.Errorf("the sink made %d connections in all: it never reconnected", n)
	}

	// The table, against the query computed directly.
	var want []string
	for k := range keys {
		var n, total, maxID int64
		for id := int64(1); id <= rows; id++ {
			if id%keys == int64(k) {
				n++
				total += id
				maxID = id
			}
		}
		want = append(want, fmt.Sprintf("%d, %d, %d, %d", k, n, total, maxID))
	}
	got := tableRows(t, db, table)
	if !slices.Equal(got, want) {
		t.Errorf("table %s has %d rows, want %d; first differences:\n%s", table, len(got), len(want), diffLines(want, got))
	}
	if strings.Contains(logs.text(), password) {
		t.Errorf("the logs show the database password")
	}
}

// logCapture is a slog handler that keeps every record as text, for
// counting messages and looking for what must not be logged.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (l *logCapture) WithAttrs(as []slog.Attr) slog.Handler {
	return &shared{l, as}
}

func (l *logCapture) WithGroup(string) slog.Handler { return l }

// shared is a logCapture with attributes, writing to the same lines.
type shared struct {
	*logCapture
	more []slog.Attr
}

func (s *shared) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(s.more...)
	return s.logCapture.Handle(ctx, r)
}

func (s *shared) WithAttrs(as []slog.Attr) slog.Handler {
	return &shared{s.logCapture, append(slices.Clone(s.more), as...)}
}

// count is the number of records so far whose text contains s.
func (l *logCapture) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (l *logCapture) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
