package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of a real service, for tests
// that take the service away and bring it back without touching it (other
// tests share it).
//
// A Proxy starts down. While down it accepts every connection and resets
// it at once, as a host whose server is gone would turn it away; the port
// stays the proxy's, so nothing else can take it between an outage and
// the return (and a client never connects to itself on a free port).
// Up forwards new connections to the target; Down closes every forwarded
// connection and turns new ones away again. CutAfter takes the proxy down
// by itself in the middle of a conversation.
//
// Every method is safe for concurrent use. The listener, the connections
// and every goroutine end in t.Cleanup.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu        sync.Mutex
	up        bool
	closed    bool
	conns     map[net.Conn]struct{}
	cutIn     int64 // bytes to the server left before a cut; 0: not armed
	refused   int64
	forwarded int64
	// changed is closed and replaced whenever refused grows, so that
	// WaitRefused wakes up without polling.
	changed chan struct{}
}

// refuseWait bounds WaitRefused.
const refuseWait = 30 * time.Second

// NewProxy listens on a free port of 127.0.0.1 in front of target
// (host:port). The proxy is down until Up.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.Down()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Up forwards the connections accepted from now on to the target.
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = true
}

// Down closes every forwarded connection and turns new ones away until
// Up. It also disarms CutAfter.
func (p *Proxy) Down() {
	p.mu.Lock()
	conns := p.takeDown()
	p.mu.Unlock()
	closeAll(conns)
}

// CutAfter arms the proxy to go down by itself once n more bytes went
// from clients to the server, counted over all connections: exactly n
// bytes pass, then every connection is closed, so a cut can land in the
// middle of a statement or a transaction. It stays down until Up.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutIn = max(n, 1)
}

// Refused is the number of connections turned away (accepted and closed
// while down) so far.
func (p *Proxy) Refused() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Forwarded is the number of connections forwarded to the target so far.
func (p *Proxy) Forwarded() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forwarded
}

// WaitRefused waits until n connections in all have been turned away, and
// fails t if that takes longer than 30 seconds. Call it from the test's
// goroutine. To wait for k more from now: p.WaitRefused(t, p.Refused()+k).
func (p *Proxy) WaitRefused(t testing.TB, n int64) {
	t.Helper()
	timeout := time.NewTimer(refuseWait)
	defer timeout.Stop()
	for {
		p.mu.Lock()
		got, changed := p.refused, p.changed
		p.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("proxy %s turned away %d connections in %s, want %d", p.Addr(), got, refuseWait, n)
		}
	}
}

// takeDown marks the proxy down and hands back the connections to close.
// p.mu is held.
func (p *Proxy) takeDown() []net.Conn {
	p.up = false
	p.cutIn = 0
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	clear(p.conns)
	return conns
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed by Cleanup
		}
		p.mu.Lock()
		up := p.up && !p.closed
		if up {
			// Tracked at once, so that a Down while the target is dialled
			// closes it too.
			p.conns[c] = struct{}{}
		} else {
			p.refused++
			close(p.changed)
			p.changed = make(chan struct{})
		}
		p.mu.Unlock()
		if !up {
			// Linger 0 resets the connection rather than ending it
			// cleanly: a client sees "connection reset by peer", the
			// nearest an accepted connection comes to the "connection
			// refused" of a port nothing listens on.
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			c.Close()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(c)
		}()
	}
}

// forward dials the target for client c and copies both ways until either
// side ends or the proxy goes down.
func (p *Proxy) forward(c net.Conn) {
	s, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		p.untrack(c)
		c.Close()
		return
	}
	p.mu.Lock()
	_, still := p.conns[c]
	if still {
		p.conns[s] = struct{}{}
		p.forwarded++
	}
	p.mu.Unlock()
	if !still { // went down while dialling
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
	p.untrack(c, s)
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// toServer copies client bytes to the server, counting them against an
// armed CutAfter.
func (p *Proxy) toServer(s, c net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			pass, cut, ok := p.allow(int64(n))
			if pass > 0 {
				if _, err := s.Write(buf[:pass]); err != nil {
					closeAll(cut)
					return
				}
			}
			// The connections are closed only after the last allowed
			// bytes were written, and without a second look at the
			// state: an Up in between must not be undone.
			closeAll(cut)
			if !ok {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// allow decides how many of n client bytes go to the server. When they
// reach an armed cut it takes the proxy down and returns the connections
// to close once the allowed bytes are written; ok is false when the
// connection must end.
func (p *Proxy) allow(n int64) (pass int64, cut []net.Conn, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.up {
		return 0, nil, false // going down: Down closes the connection
	}
	if p.cutIn == 0 {
		return n, nil, true
	}
	if n < p.cutIn {
		p.cutIn -= n
		return n, nil, true
	}
	pass = p.cutIn
	return pass, p.takeDown(), false
}
