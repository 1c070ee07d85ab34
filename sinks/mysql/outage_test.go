package mysql_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks/mysql"
)

// proxy is a TCP proxy on 127.0.0.1 in front of the shared server. Down
// closes every connection and stops listening, as a server that went away;
// Up listens again on the same port. The shared server is never touched.
type proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	// cutIn, when positive, is how many more bytes from the client pass
	// before the proxy goes down by itself: a cut in the middle of a
	// statement or transaction.
	cutIn int64
}

// CutAfter arms the proxy to go down once n more bytes went to the server.
func (p *proxy) CutAfter(n int64) {
	p.mu.Lock()
	p.cutIn = n
	p.mu.Unlock()
}

// toServer copies client bytes to the server, going down when armed.
func (p *proxy) toServer(s, c net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := false
			if p.cutIn > 0 {
				p.cutIn -= int64(n)
				cut = p.cutIn <= 0
			}
			p.mu.Unlock()
			if cut {
				// Part of the packet reaches the server, the rest never.
				_, _ = s.Write(buf[:n/2])
				p.Down()
				return
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// newProxy reserves a port; the proxy is down until Up.
func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	ln.Close()
	t.Cleanup(func() {
		p.Down()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) Up() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.pipe(c)
			}()
		}
	}()
}

func (p *proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, s) {
		c.Close()
		s.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.toServer(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	<-done
}

// track registers a connection pair unless the proxy went down meanwhile.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// DSN is dsn pointed at the proxy.
func (p *proxy) DSN(t testing.TB, dsn string) string {
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = p.addr
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

// TestServerOutageMidRun cuts the connection to the server while an
// upsert stream is written, several times, and restores it once the sink
// has started retrying: no Write or Flush fails and the final table is
// exactly the stream's result.
func TestServerOutageMidRun(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	p := newProxy(t, target(t, dsn))
	p.Up()
	retrying := &signal{Handler: slog.DiscardHandler, text: "will retry", ch: make(chan string, 1)}
	s := open(t, mysql.Config{DSN: p.DSN(t, dsn), Table: name, CreateTable: true, BatchSize: 50},
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
	p := newProxy(t, target(t, dsn))
	warned := &signal{Handler: slog.DiscardHandler, text: "mysql connect: will retry", ch: make(chan string, 1)}
	s, err := newBound(mysql.Config{DSN: p.DSN(t, dsn), Table: name, CreateTable: true},
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
	never := newProxy(t, target(t, dsn))
	s2, err := newBound(mysql.Config{DSN: never.DSN(t, dsn), Table: name},
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
	if strings.Contains(err.Error(), "etld-test-pw") || !strings.Contains(err.Error(), never.addr) {
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
