package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks/mysql"
)

// viaProxy is dsn pointed at the proxy.
func viaProxy(t testing.TB, p interface{ Addr() string }, dsn string) string {
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = p.Addr()
	return cfg.FormatDSN()
}

// signal is a slog handler that reports messages containing a text.
type signal struct {
	slog.Handler
	text string
	ch   chan string
}

func (s *signal) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, s.text) {
		msg := r.Message
		r.Attrs(func(a slog.Attr) bool { msg += " " + a.String(); return true })
		select {
		case s.ch <- msg:
		default:
		}
	}
	return nil
}

func (s *signal) Enabled(context.Context, slog.Level) bool { return true }
func (s *signal) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *signal) WithGroup(string) slog.Handler            { return s }

func target(t testing.TB, dsn string) string {
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Addr
}

// TestServerOutageMidRun, with one connection and with three, cuts the connection to the server while an
// upsert stream is written, several times, and restores it once the sink
// has started retrying: no Write or Flush fails and the final table is
// exactly the stream's result.
func TestServerOutageMidRun(t *testing.T) {
	for _, parallelism := range []int{1, 3} {
		t.Run(fmt.Sprintf("parallelism %d", parallelism), func(t *testing.T) { serverOutageMidRun(t, parallelism) })
	}
}

func serverOutageMidRun(t *testing.T, parallelism int) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	p := testenv.NewProxy(t, target(t, dsn))
	p.Up()
	retrying := &signal{Handler: slog.DiscardHandler, text: "will retry", ch: make(chan string, 1)}
	s := open(t, mysql.Config{DSN: viaProxy(t, p, dsn), Table: name, CreateTable: true, BatchSize: 50, Parallelism: parallelism},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}},
		connector.SinkEnv{Logger: slog.New(retrying)})
	ctx := testenv.Context(t, 2*time.Minute)
	changes := randomChanges(3, 6000, 300)
	m := model{}
	const per = 100
	outages := 0
	for i, w := 0, 0; i < len(changes); i, w = i+per, w+1 {
		part := changes[i:min(i+per, len(changes))]
		for _, c := range part {
			m.apply(c)
		}
		if cut := w % 12; cut == 5 || cut == 11 {
			// Several connections each log their retry of the last outage,
			// which the Flush that followed it ended: drop those reports.
			for len(retrying.ch) > 0 {
				<-retrying.ch
			}
			if cut == 5 {
				p.Down()
			} else {
				// Down in the middle of the batch's transaction.
				p.CutAfter(300)
			}
			// Restore the server once the sink has noticed it is gone.
			done := make(chan struct{})
			go func() {
				defer close(done)
				select {
				case <-retrying.ch:
					p.Up()
				case <-ctx.Done():
				}
			}()
			defer func() { <-done }()
			outages++
		}
		if err := s.Write(ctx, batchOf(part...)); err != nil {
			t.Fatalf("write %d: %v", w, err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatalf("flush %d: %v", w, err)
		}
	}
	if outages < 6 {
		t.Fatalf("only %d outages: the test proves little", outages)
	}
	if got, want := dump(t, db, name), m.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table has %d rows, want %d:\n%s\nwant:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOpenWaitsForServer: a server that is not up yet when the pipeline
// starts is waited for, with a warning, not an error.
func TestOpenWaitsForServer(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	p := testenv.NewProxy(t, target(t, dsn))
	warned := &signal{Handler: slog.DiscardHandler, text: "mysql connect: will retry", ch: make(chan string, 1)}
	s, err := newBound(mysql.Config{DSN: viaProxy(t, p, dsn), Table: name, CreateTable: true},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Append}, connector.SinkEnv{Logger: slog.New(warned)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	go func() {
		msg := <-warned.ch
		if strings.Contains(msg, "etld-test-pw") {
			t.Errorf("the warning shows the password: %s", msg)
		}
		p.Up()
	}()
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}

	// And a server that never comes up fails Open when the context ends,
	// naming the server without the password.
	never := testenv.NewProxy(t, target(t, dsn))
	s2, err := newBound(mysql.Config{DSN: viaProxy(t, never, dsn), Table: name},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Append}, connector.SinkEnv{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err = s2.Open(ctx)
	_ = s2.Close(context.Background())
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open against no server: %v, want the context's deadline", err)
	}
	if strings.Contains(err.Error(), "etld-test-pw") || !strings.Contains(err.Error(), never.Addr()) {
		t.Errorf("error %q: want the address and no password", err)
	}
}

func driverCfg(t testing.TB, dsn string) *driver.Config {
	t.Helper()
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
