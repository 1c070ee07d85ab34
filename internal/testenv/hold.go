package testenv

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// HoldProxy is a TCP proxy on 127.0.0.1 in front of a real service that
// can hold a request back and let it through later: the request a killed
// process had sent, held up in the network (or by a frozen process), that
// reaches the server after the process's successor has written. The
// proxy cuts each direction of a connection into requests and answers by
// the service's framing (HTTPFraming, MySQLFraming, KafkaFraming).
//
// Hold arms the proxy: the next request that matches, on any connection,
// is held with everything its connection sends after it, and the
// connection's server side stays open when its client goes (a killed
// process's socket), so that Release delivers the held bytes on the
// session they were sent on: a MySQL transaction still open, a Kafka
// producer's connection. Release then closes the server side of a
// connection whose client has gone, once the server answered. Seen
// reports a request going through, so that a test releases when the
// successor has written rather than after a sleep.
//
// Every method is safe for concurrent use. The listener, the connections
// and every goroutine end in t.Cleanup.
type HoldProxy struct {
	target  string
	framing Framing
	ln      net.Listener
	wg      sync.WaitGroup

	mu    sync.Mutex
	conns map[*holdConn]struct{}
	// armed is the pending Hold's match and its signal; nil when none.
	armed    func([]byte) bool
	heldSig  chan struct{}
	watchers []watcher
	closed   bool
	// answers holds the server's answers to released requests.
	answers [][]byte
}

// Framing tells where requests and answers end: each function returns
// the length of the first complete message at the start of buf and an id
// that pairs an answer with its request, or n = 0 while buf holds less
// than a whole message.
type Framing struct {
	Request  func(buf []byte) (n int, id int32)
	Response func(buf []byte) (n int, id int32)
	// Paired: a client may have several requests in flight on a
	// connection, answered by id (Kafka's correlation id), so answers
	// are framed all along. Otherwise the client waits for each answer
	// before its next request: ids are 0, and answers are framed only
	// after a Release (the stream is then between two answers).
	Paired bool
	// Rewrite, when set, makes a Rewriter for each connection, given the
	// proxy's own host:port. Only with Paired.
	Rewrite func(addr string) Rewriter
}

// Rewriter sees a connection's requests and may change its answers: a
// service whose answers name its own address (a Kafka broker's metadata)
// is made to name the proxy's, so that the client's next connection
// comes back through it. Request sees every whole request the client
// sends, as it arrives (held or not); Answer every whole answer, and the
// client gets what it returns. The two are called from two goroutines.
type Rewriter interface {
	Request(req []byte)
	Answer(ans []byte) []byte
}

type watcher struct {
	match func([]byte) bool
	seen  chan struct{}
}

// holdConn is one proxied connection.
type holdConn struct {
	client, server net.Conn
	// Under HoldProxy.mu:
	holding bool
	held    []byte  // the bytes held, the first held request on
	framed  int     // the length of held's complete requests
	heldIDs []int32 // their ids
	waiting []int32 // ids of released requests not yet answered
	// answers is the server's bytes not yet framed into answers.
	answers    []byte
	answered   chan struct{}
	clientGone bool
	// wmu orders writes to the server between the client's copier and
	// Release.
	wmu sync.Mutex
	// rw is the framing's Rewriter, nil when it has none.
	rw Rewriter
}

// NewHoldProxy listens on a free port of 127.0.0.1 in front of target
// (host:port) and forwards at once.
func NewHoldProxy(t testing.TB, target string, f Framing) *HoldProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hold proxy: listen: %v", err)
	}
	p := &HoldProxy{target: target, framing: f, ln: ln, conns: map[*holdConn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closed = true
		conns := make([]*holdConn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		for _, c := range conns {
			c.client.Close()
			c.server.Close()
		}
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *HoldProxy) Addr() string { return p.ln.Addr().String() }

// Hold arms the proxy to hold the next request that match accepts (it
// sees the whole request, framing included), with everything its
// connection sends after it. The channel is closed once a request is
// held. A second Hold replaces an armed one.
func (p *HoldProxy) Hold(match func(req []byte) bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.heldSig = match, make(chan struct{})
	return p.heldSig
}

// Seen returns a channel closed once a request that match accepts goes
// through to the server from now on.
func (p *HoldProxy) Seen(match func(req []byte) bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := watcher{match: match, seen: make(chan struct{})}
	p.watchers = append(p.watchers, w)
	return w.seen
}

// DropClients closes the client side of every connection that holds a
// request, as the sockets of a killed process end: a client in the
// middle of a call sees its connection gone. The server side stays open
// with what is held, until Release.
func (p *HoldProxy) DropClients() {
	p.mu.Lock()
	var drop []net.Conn
	for c := range p.conns {
		if c.holding {
			drop = append(drop, c.client)
		}
	}
	p.mu.Unlock()
	for _, c := range drop {
		c.Close()
	}
}

// Release sends every held byte to the server, on the connection it was
// sent on. The channel is closed once the server answered each released
// request or closed the connection; the server side of a connection whose
// client has gone is then closed, as the end of a dead process's socket.
func (p *HoldProxy) Release() <-chan struct{} {
	p.mu.Lock()
	p.armed = nil
	var release []*holdConn
	var dones []chan struct{}
	for c := range p.conns {
		if !c.holding {
			continue
		}
		release = append(release, c)
		c.answered = make(chan struct{})
		dones = append(dones, c.answered)
	}
	p.mu.Unlock()
	for _, c := range release {
		c.wmu.Lock()
		p.mu.Lock()
		data := c.held
		c.held, c.framed, c.holding = nil, 0, false
		c.waiting = append(c.waiting, c.heldIDs...)
		c.heldIDs = nil
		none := len(c.waiting) == 0 // only part of a request was held
		p.mu.Unlock()
		if _, err := c.server.Write(data); err != nil {
			c.server.Close()
		}
		if none {
			p.mu.Lock()
			if c.answered != nil {
				close(c.answered)
				c.answered = nil
			}
			if c.clientGone {
				c.server.Close()
			}
			p.mu.Unlock()
		}
		c.wmu.Unlock()
	}
	all := make(chan struct{})
	go func() {
		for _, d := range dones {
			<-d
		}
		close(all)
	}()
	return all
}

// Answers returns the server's answers to the requests released so far,
// framing included: what the killed client would have read.
func (p *HoldProxy) Answers() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.answers)
}

func (p *HoldProxy) serve() {
	defer p.wg.Done()
	for {
		cl, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(cl)
		}()
	}
}

func (p *HoldProxy) forward(cl net.Conn) {
	srv, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		cl.Close()
		return
	}
	c := &holdConn{client: cl, server: srv}
	if p.framing.Rewrite != nil {
		c.rw = p.framing.Rewrite(p.Addr())
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cl.Close()
		srv.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.down(c)
	}()
	p.up(c)
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	if c.answered != nil {
		close(c.answered)
		c.answered = nil
	}
	p.mu.Unlock()
}

// up copies the client's requests to the server, or holds them. When the
// client goes, the server side goes too unless it holds requests.
func (p *HoldProxy) up(c *holdConn) {
	var pend []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.client.Read(buf)
		pend = append(pend, buf[:n]...)
		for len(pend) > 0 {
			size, _ := p.framing.Request(pend)
			if !p.pass(c, pend, size) {
				pend = pend[:0]
				break
			}
			if size == 0 {
				break
			}
			pend = pend[size:]
		}
		if err != nil {
			p.mu.Lock()
			c.clientGone = true
			keep := c.holding || len(c.waiting) > 0
			p.mu.Unlock()
			if !keep {
				c.server.Close()
			}
			return
		}
	}
}

// pass handles the start of pend, a complete request of size bytes (0:
// not yet whole): it forwards it, or holds it and everything after. It
// reports false when it took all of pend (held).
func (p *HoldProxy) pass(c *holdConn, pend []byte, size int) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	p.mu.Lock()
	if !c.holding && size > 0 && p.armed != nil && p.armed(pend[:size]) {
		c.holding, p.armed = true, nil
		close(p.heldSig)
	}
	if c.holding {
		c.held = append(c.held, pend...)
		// The ids of the whole requests held, for Release to wait for
		// their answers.
		for {
			n, rid := p.framing.Request(c.held[c.framed:])
			if n == 0 {
				break
			}
			if c.rw != nil {
				c.rw.Request(c.held[c.framed : c.framed+n])
			}
			c.heldIDs = append(c.heldIDs, rid)
			c.framed += n
		}
		p.mu.Unlock()
		return false
	}
	if size == 0 {
		p.mu.Unlock()
		return true
	}
	var seen []chan struct{}
	kept := p.watchers[:0]
	for _, w := range p.watchers {
		if w.match(pend[:size]) {
			seen = append(seen, w.seen)
		} else {
			kept = append(kept, w)
		}
	}
	p.watchers = kept
	p.mu.Unlock()
	if c.rw != nil {
		c.rw.Request(pend[:size])
	}
	if _, err := c.server.Write(pend[:size]); err != nil {
		c.server.Close()
	}
	for _, s := range seen {
		close(s)
	}
	return true
}

// down copies the server's answers to the client (discarding them once
// the client has gone), through the Rewriter if any, and pairs them with
// released requests.
func (p *HoldProxy) down(c *holdConn) {
	defer c.client.Close()
	buf := make([]byte, 64<<10)
	var pend []byte // a Rewriter's partial answer
	for {
		n, err := c.server.Read(buf)
		data := buf[:n]
		if c.rw != nil && n > 0 {
			pend = append(pend, data...)
			data = nil
			for {
				size, _ := p.framing.Response(pend)
				if size == 0 {
					break
				}
				data = append(data, c.rw.Answer(pend[:size])...)
				pend = pend[size:]
			}
		}
		if len(data) > 0 {
			_, _ = c.client.Write(data)
			p.answer(c, data)
		}
		if err != nil {
			return
		}
	}
}

// answer frames the server's bytes into answers and pairs them with the
// released requests; once all are answered it signals Release and ends a
// dead client's connection.
func (p *HoldProxy) answer(c *holdConn, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.framing.Paired && len(c.waiting) == 0 {
		return
	}
	c.answers = append(c.answers, data...)
	for {
		size, id := p.framing.Response(c.answers)
		if size == 0 {
			break
		}
		var found bool
		if c.waiting, found = removeID(c.waiting, id); found {
			p.answers = append(p.answers, bytes.Clone(c.answers[:size]))
		}
		c.answers = c.answers[size:]
		if len(c.waiting) == 0 && !p.framing.Paired {
			// The rest answers requests that came after.
			c.answers = c.answers[:0]
			break
		}
	}
	if len(c.answers) == 0 {
		c.answers = nil // let a large answer's buffer go
	}
	if len(c.waiting) > 0 || c.answered == nil {
		return
	}
	close(c.answered)
	c.answered = nil
	if c.clientGone && !c.holding {
		c.server.Close()
	}
}

func removeID(ids []int32, id int32) ([]int32, bool) {
	for i, x := range ids {
		if x == id {
			return append(ids[:i], ids[i+1:]...), true
		}
	}
	return ids, false
}

// HTTPFraming frames HTTP/1.1 requests and answers by Content-Length or
// chunked transfer encoding (answers to HEAD are not framed right: do
// not hold a HEAD).
var HTTPFraming = Framing{Request: httpMessage, Response: httpMessage}

func httpMessage(buf []byte) (int, int32) {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return 0, 0
	}
	head := bytes.ToLower(buf[:end])
	body := end + 4
	if bytes.Contains(head, []byte("\r\ntransfer-encoding: chunked")) {
		return chunked(buf, body), 0
	}
	length := 0
	if i := bytes.Index(head, []byte("\r\ncontent-length:")); i >= 0 {
		line := head[i+len("\r\ncontent-length:"):]
		if j := bytes.IndexByte(line, '\r'); j >= 0 {
			line = line[:j]
		}
		length, _ = strconv.Atoi(string(bytes.TrimSpace(line)))
	}
	if len(buf) < body+length {
		return 0, 0
	}
	return body + length, 0
}

// chunked returns where a chunked body starting at at ends, 0 when buf
// does not hold all of it.
func chunked(buf []byte, at int) int {
	for {
		eol := bytes.Index(buf[at:], []byte("\r\n"))
		if eol < 0 {
			return 0
		}
		sizeText, _, _ := bytes.Cut(buf[at:at+eol], []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(sizeText)), 16, 64)
		if err != nil {
			return 0
		}
		at += eol + 2
		if size == 0 {
			// Trailers, up to an empty line.
			for {
				eol := bytes.Index(buf[at:], []byte("\r\n"))
				if eol < 0 {
					return 0
				}
				at += eol + 2
				if eol == 0 {
					return at
				}
			}
		}
		if len(buf) < at+int(size)+2 {
			return 0
		}
		at += int(size) + 2
	}
}

// MySQLFraming frames MySQL/MariaDB packets: every client packet is a
// request, and an answer counts as one packet (an OK or an error: what
// writes and COMMIT get; do not hold a query that returns rows).
var MySQLFraming = Framing{Request: mysqlPacket, Response: mysqlPacket}

func mysqlPacket(buf []byte) (int, int32) {
	if len(buf) < 4 {
		return 0, 0
	}
	n := 4 + (int(buf[0]) | int(buf[1])<<8 | int(buf[2])<<16)
	if len(buf) < n {
		return 0, 0
	}
	return n, 0
}

// MySQL client commands.
const (
	mysqlQuery       = 0x03 // COM_QUERY
	mysqlStmtExecute = 0x17 // COM_STMT_EXECUTE
)

// mysqlCommand is the command byte of a MySQL client packet and what
// follows it (a COM_QUERY's text), or 0 and nil for a short packet.
func mysqlCommand(req []byte) (byte, []byte) {
	if len(req) < 5 {
		return 0, nil
	}
	return req[4], req[5:]
}

// MySQLWrite matches a MySQL request that changes rows: an executed
// prepared statement, or an INSERT or DELETE sent as text.
func MySQLWrite(req []byte) bool {
	cmd, text := mysqlCommand(req)
	upper := bytes.ToUpper(bytes.TrimSpace(text))
	return cmd == mysqlStmtExecute || cmd == mysqlQuery && (bytes.HasPrefix(upper, []byte("INSERT")) || bytes.HasPrefix(upper, []byte("DELETE")))
}

// MySQLQuery matches a MySQL query sent as text that starts with prefix,
// in any case.
func MySQLQuery(prefix string) func([]byte) bool {
	return func(req []byte) bool {
		cmd, text := mysqlCommand(req)
		text = bytes.TrimSpace(text)
		return cmd == mysqlQuery && len(text) >= len(prefix) && bytes.EqualFold(text[:len(prefix)], []byte(prefix))
	}
}

// MySQLCommit matches a MySQL COMMIT.
func MySQLCommit(req []byte) bool {
	cmd, text := mysqlCommand(req)
	return cmd == mysqlQuery && bytes.EqualFold(bytes.TrimSpace(text), []byte("COMMIT"))
}

// HTTPRequestTo matches an HTTP request of method to a path that starts
// with path ("POST", "/_bulk").
func HTTPRequestTo(method, path string) func([]byte) bool {
	prefix := []byte(method + " " + path)
	return func(req []byte) bool { return bytes.HasPrefix(req, prefix) }
}
