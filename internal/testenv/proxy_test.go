package testenv_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// server is a target on 127.0.0.1 that echoes what it reads, or only
// reads it, and reports per connection how many bytes it got before the
// connection ended.
type server struct {
	ln  net.Listener
	got chan int64
}

func newServer(t *testing.T, echo bool) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, got: make(chan int64, 100)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				var to io.Writer = c
				if !echo {
					to = io.Discard
				}
				n, _ := io.Copy(to, c)
				s.got <- n
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	// A broken proxy fails the test instead of hanging it.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

// echo sends msg and reads it back.
func echo(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if string(buf) != msg {
		t.Fatalf("read back %q, want %q", buf, msg)
	}
}

// ended asserts the proxy closed c: a read ends without data.
func ended(t *testing.T, c net.Conn, what string) {
	t.Helper()
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil {
		t.Fatalf("%s: read %d bytes, err %v; want the connection closed", what, n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the connection is still open (read timed out)", what)
	}
}

// turnedAway asserts that a new connection to addr is reset: during the
// dial already, or at the first read.
func turnedAway(t *testing.T, addr, what string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("%s: dial: %v, want a reset", what, err)
		}
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("%s: read %d bytes, err %v; want a reset", what, n, err)
	}
}

func TestProxyUpDown(t *testing.T) {
	srv := newServer(t, true)
	p := testenv.NewProxy(t, srv.ln.Addr().String())

	// Down at start: accepted and closed at once, and counted.
	turnedAway(t, p.Addr(), "a connection before Up")
	p.WaitRefused(t, 1)
	if got := p.Forwarded(); got != 0 {
		t.Errorf("Forwarded = %d before Up, want 0", got)
	}

	p.Up()
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	echo(t, a, "hello")
	echo(t, b, "world")
	if got := p.Forwarded(); got != 2 {
		t.Errorf("Forwarded = %d, want 2", got)
	}

	// Down cuts both open connections and refuses new ones on the same
	// port.
	p.Down()
	ended(t, a, "an open connection after Down")
	ended(t, b, "another open connection after Down")
	before := p.Refused()
	turnedAway(t, p.Addr(), "a new connection after Down")
	p.WaitRefused(t, before+1)

	// And back.
	p.Up()
	echo(t, dial(t, p.Addr()), "again")
	if got, want := p.Refused(), before+1; got != want {
		t.Errorf("Refused = %d, want %d", got, want)
	}
}

// TestProxyCutAfter: exactly n bytes reach the server, then every
// connection is closed and the proxy stays down until Up.
func TestProxyCutAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int64
		writes []int // sizes of the client's writes
	}{
		{"mid write", 300, []int{100, 1000}},
		{"on a write boundary", 200, []int{100, 100, 100}},
		{"first byte", 1, []int{50}},
		{"large", 100_000, []int{40_000, 40_000, 40_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A server that answers nothing: the proxy closes its side
			// with nothing unread, so no reset makes the server drop
			// bytes it received.
			srv := newServer(t, false)
			p := testenv.NewProxy(t, srv.ln.Addr().String())
			p.Up()
			c := dial(t, p.Addr())
			other := dial(t, p.Addr())
			testenv.Eventually(t, 30*time.Second, "both connections forwarded", func() error {
				if n := p.Forwarded(); n != 2 {
					return fmt.Errorf("%d forwarded", n)
				}
				return nil
			})
			p.CutAfter(tc.n)
			for i, size := range tc.writes {
				if _, err := c.Write(bytes.Repeat([]byte{'a'}, size)); err != nil {
					// Writes after the cut may fail: the proxy closed the
					// connection.
					t.Logf("write %d after the cut: %v", i, err)
					break
				}
			}
			ended(t, c, "the cut connection")
			// Both server-side connections ended; the cut one got exactly n.
			var got []int64
			for range 2 {
				select {
				case n := <-srv.got:
					got = append(got, n)
				case <-time.After(30 * time.Second):
					t.Fatalf("the server's connections did not end: %v", got)
				}
			}
			if !(got[0] == tc.n && got[1] == 0 || got[0] == 0 && got[1] == tc.n) {
				t.Errorf("server got %v bytes on its connections, want %d and 0", got, tc.n)
			}
			ended(t, other, "the other connection after the cut")
			before := p.Refused()
			turnedAway(t, p.Addr(), "a new connection after the cut")
			p.WaitRefused(t, before+1)
			p.Up()
			// Disarmed: everything passes.
			c = dial(t, p.Addr())
			if _, err := c.Write(make([]byte, 2*tc.n)); err != nil {
				t.Fatal(err)
			}
			c.Close()
			select {
			case n := <-srv.got:
				if n != 2*tc.n {
					t.Errorf("after Up the server got %d bytes, want %d", n, 2*tc.n)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the connection after Up did not end")
			}
		})
	}
}

// TestProxyDownDisarmsCut: a Down forgets an armed cut.
func TestProxyDownDisarmsCut(t *testing.T) {
	srv := newServer(t, true)
	p := testenv.NewProxy(t, srv.ln.Addr().String())
	p.Up()
	p.CutAfter(3)
	p.Down()
	p.Up()
	echo(t, dial(t, p.Addr()), "longer than three bytes")
}

// TestProxyCleanup: when the test ends, open connections are closed and
// the port no longer answers; Cleanup returning at all shows that every
// goroutine ended.
func TestProxyCleanup(t *testing.T) {
	srv := newServer(t, true)
	var addr string
	var c net.Conn
	t.Run("inner", func(t *testing.T) {
		p := testenv.NewProxy(t, srv.ln.Addr().String())
		p.Up()
		addr = p.Addr()
		var err error
		c, err = net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		echo(t, c, "open")
	})
	defer c.Close()
	ended(t, c, "a connection after Cleanup")
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after Cleanup: %v, want connection refused", err)
	}
}

// TestProxyWaitRefusedConcurrent: connections turned away at the same
// time are each counted, and WaitRefused wakes up for them.
func TestProxyWaitRefusedConcurrent(t *testing.T) {
	srv := newServer(t, true)
	p := testenv.NewProxy(t, srv.ln.Addr().String())
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Reset during the dial or at the first read.
			if c, err := net.Dial("tcp", p.Addr()); err == nil {
				_, _ = c.Read(make([]byte, 1))
				c.Close()
			}
		}()
	}
	p.WaitRefused(t, n)
	wg.Wait()
	if got := p.Refused(); got != n {
		t.Errorf("Refused = %d, want %d", got, n)
	}
}
