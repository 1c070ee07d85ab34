package elasticsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/etld/etld/internal/javautf8"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// bulk is one bulk request being built or sent: its NDJSON body and
// where each action sits in it. In upsert mode a newer action for a
// document marks the older one dead, so the request sends one action per
// document, the newest.
type bulk struct {
	buf   []byte
	items []item
	// ids maps _index NUL _id to the live item of that document.
	ids       map[string]int
	live      int
	liveBytes int
}

// item is one action: buf[start:doc] is the action line, buf[doc:end] the
// document line (empty for a delete).
type item struct {
	start, doc, end int
	index           string // as the index option names it
	target          string // what the action names: index, or its write alias
	id              string // "" in append mode
	seq             int64  // the change's number in this run, for messages
	dead            bool
}

var bulkPool = sync.Pool{New: func() any { return &bulk{ids: map[string]int{}} }}

func (b *bulk) reset() {
	b.buf = b.buf[:0]
	b.items = b.items[:0]
	clear(b.ids)
	b.live, b.liveBytes = 0, 0
}

// add appends the action for one change of index, written to target
// (the index, or this life's alias of it): index with the document (id
// nil lets Elasticsearch make one up), or delete. On an encoding error
// nothing is added.
func (b *bulk) add(enc connector.Encoder, index, target string, id []byte, del bool, r row.Row, seq int64) error {
	start := len(b.buf)
	if del {
		b.buf = append(b.buf, `{"delete":{"_index":`...)
	} else {
		b.buf = append(b.buf, `{"index":{"_index":`...)
	}
	b.buf = appendJSONString(b.buf, target)
	if id != nil {
		b.buf = append(b.buf, `,"_id":`...)
		b.buf = appendJSONString(b.buf, string(id))
	}
	b.buf = append(b.buf, "}}\n"...)
	doc := len(b.buf)
	if !del {
		var err error
		b.buf, err = enc.Encode(b.buf, row.Insert, r)
		if err != nil {
			b.buf = b.buf[:start]
			return err
		}
	}
	it := item{start: start, doc: doc, end: len(b.buf), index: index, target: target, seq: seq}
	if id != nil {
		key := index + "\x00" + string(id)
		it.id = key[len(index)+1:]
		if j, ok := b.ids[key]; ok {
			old := &b.items[j]
			old.dead = true
			b.live--
			b.liveBytes -= old.end - old.start
		}
		b.ids[key] = len(b.items)
	}
	b.items = append(b.items, it)
	b.live++
	b.liveBytes += it.end - it.start
	return nil
}

// full reports whether the request has reached a flush limit (0: none).
func (b *bulk) full(maxActions, maxSize int) bool {
	return (maxActions > 0 && b.live >= maxActions) || (maxSize > 0 && b.liveBytes >= maxSize)
}

// liveItems lists the items to send.
func (b *bulk) liveItems() []int {
	out := make([]int, 0, b.live)
	for i := range b.items {
		if !b.items[i].dead {
			out = append(out, i)
		}
	}
	return out
}

// payload is the request body for the items idx: the buffer itself when
// they are all of it, else a copy of their lines.
func (b *bulk) payload(idx []int) []byte {
	if len(idx) == len(b.items) {
		return b.buf
	}
	n := 0
	for _, i := range idx {
		n += b.items[i].end - b.items[i].start
	}
	out := make([]byte, 0, n)
	for _, i := range idx {
		out = append(out, b.buf[b.items[i].start:b.items[i].end]...)
	}
	return out
}

// laneMsg is a request to send, or a flush marker (done) that the lane
// closes once everything before it is acknowledged.
type laneMsg struct {
	b    *bulk
	done chan struct{}
}

// lane is one sender: it sends its requests one after the other, each
// acknowledged (retries included) before the next goes out. The same
// document always goes to the same lane, so its actions arrive in order.
type lane struct {
	s        *Sink
	in       chan laneMsg
	building *bulk // guarded by Sink.mu
}

func (l *lane) newBulk() *bulk {
	b := bulkPool.Get().(*bulk)
	b.reset()
	return b
}

// handOver passes the building request to the sender, waiting while it
// is busy with the previous one. Callers hold Sink.mu.
func (l *lane) handOver(ctx context.Context) error {
	if l.building.live == 0 {
		return nil
	}
	select {
	case l.in <- laneMsg{b: l.building}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	l.building = l.newBulk()
	return nil
}

// run sends requests until the channel is closed. After a failure it
// only drains: nothing more is acknowledged, and Flush and Write return
// the failure.
func (l *lane) run(ctx context.Context) {
	for m := range l.in {
		if m.b != nil {
			if l.s.err() == nil {
				if err := ctx.Err(); err != nil {
					l.s.fail(context.Cause(ctx))
				} else if err := panics.Call(func() error { return l.deliver(ctx, m.b) }); err != nil {
					// A panic (in the client or our response parsing) fails
					// the sink with its stack instead of the process.
					l.s.fail(err)
				}
			}
			bulkPool.Put(m.b)
		}
		if m.done != nil {
			close(m.done)
		}
	}
}

// Bulk response, reduced by filter_path to what the sink reads.
type bulkResponse struct {
	Errors bool         `json:"errors"`
	Items  []bulkAction `json:"items"`
}

type bulkAction struct {
	Index  *itemResult `json:"index"`
	Create *itemResult `json:"create"`
	Delete *itemResult `json:"delete"`
	Update *itemResult `json:"update"`
}

type itemResult struct {
	Status int        `json:"status"`
	Error  *itemError `json:"error"`
}

type itemError struct {
	Type     string     `json:"type"`
	Reason   string     `json:"reason"`
	CausedBy *itemError `json:"caused_by"`
}

func (e *itemError) String() string {
	if e == nil {
		return "no reason given"
	}
	s := e.Type + ": " + e.Reason
	if e.CausedBy != nil {
		s += " (caused by " + e.CausedBy.String() + ")"
	}
	return s
}

func (a bulkAction) result() *itemResult {
	for _, r := range []*itemResult{a.Index, a.Delete, a.Create, a.Update} {
		if r != nil {
			return r
		}
	}
	return &itemResult{}
}

// transient reports whether a status is worth retrying: Elasticsearch is
// overloaded (429) or a node failed (5xx).
func transient(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// deliver sends one request until every action in it is acknowledged or
// rejected for good. Failed requests are sent again whole; transient item
// failures are sent again alone.
func (l *lane) deliver(ctx context.Context, b *bulk) error {
	s := l.s
	pending := b.liveItems()
	what := fmt.Sprintf("sink %s: bulk request", s.name)
	// Between tries a cluster health request, far cheaper than the bulk
	// body, notices the cluster's return and ends the wait.
	return retry.Do(ctx, s.cfg.backoff.WithProbe(s.ping), s.logger, what, func(ctx context.Context) error {
		if err := s.ensureIndexes(ctx, b, pending); err != nil {
			if ctx.Err() != nil {
				return retry.Permanent(fmt.Errorf("%s: %w", what, context.Cause(ctx)))
			}
			return err
		}
		body := b.payload(pending)
		s.sent.Add(int64(len(body)))
		res, err := s.client.Bulk(bytes.NewReader(body),
			s.client.Bulk.WithContext(ctx),
			// A fenced life's actions name its aliases, which a later
			// life removes: a missing one must refuse the action, not
			// have an index made up under its name.
			s.client.Bulk.WithRequireAlias(s.fence != 0),
			s.client.Bulk.WithFilterPath("errors", "items.*.status", "items.*.error"))
		if err != nil {
			if ctx.Err() != nil {
				return retry.Permanent(fmt.Errorf("%s: %w", what, context.Cause(ctx)))
			}
			return fmt.Errorf("%d actions: %w", len(pending), err)
		}
		defer res.Body.Close()
		if res.StatusCode >= 300 {
			return requestError(res.StatusCode, res.Body, len(pending), what)
		}
		var resp bulkResponse
		if err := json.NewDecoder(res.Body).Decode(&resp); err != nil {
			// The request may have been applied; sending it again is
			// safe for ids (the same documents) and at-least-once for
			// generated ids.
			return fmt.Errorf("reading the response to %d actions: %w", len(pending), err)
		}
		if !resp.Errors {
			if len(resp.Items) != len(pending) && len(resp.Items) != 0 {
				return retry.Permanent(fmt.Errorf("%s: %d actions sent, %d answered", what, len(pending), len(resp.Items)))
			}
			pending = pending[:0]
			return nil
		}
		if len(resp.Items) != len(pending) {
			return retry.Permanent(fmt.Errorf("%s: %d actions sent, %d answered", what, len(pending), len(resp.Items)))
		}
		again := pending[:0:0]
		var first string
		for k, a := range resp.Items {
			r := a.result()
			it := &b.items[pending[k]]
			del := it.doc == it.end
			switch {
			case r.Status < 300 && r.Error == nil:
			case s.fence != 0 && aliasGone(r):
				return retry.Permanent(fmt.Errorf("sink %s, index %s: the run's write alias %s is gone: a later run of pipeline %s took the index over (or the alias or the index was removed); this run stops rather than write over it",
					s.name, it.index, it.target, s.run.Pipeline))
			case del && r.Status == http.StatusNotFound:
				// The document is gone already: what a delete wants.
			case transient(r.Status):
				again = append(again, pending[k])
				if first == "" {
					first = fmt.Sprintf("status %d, %s", r.Status, r.Error)
				}
			default:
				if err := s.rejectItem(b, it, r); err != nil {
					return retry.Permanent(err)
				}
			}
		}
		pending = again
		if len(again) > 0 {
			return fmt.Errorf("%d of %d actions failed and are sent again (first: %s)", len(again), len(resp.Items), first)
		}
		return nil
	})
}

// requestError turns a failed bulk request into a retryable error, or a
// permanent one when sending it again cannot help.
func requestError(status int, body io.Reader, n int, what string) error {
	msg, _ := io.ReadAll(io.LimitReader(body, 512))
	text := strings.TrimSpace(string(msg))
	err := fmt.Errorf("%d actions: HTTP %d: %s", n, status, text)
	switch {
	case transient(status):
		return err
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return retry.Permanent(fmt.Errorf("%s: not allowed (HTTP %d), check username/password or api_key: %s", what, status, text))
	case status == http.StatusRequestEntityTooLarge:
		return retry.Permanent(fmt.Errorf("%s: the request is too large for the cluster (HTTP 413); lower bulk_flush_max_size", what))
	}
	return retry.Permanent(fmt.Errorf("%s: %w", what, err))
}

// rejectItem hands an action Elasticsearch refused for good to on_error,
// with the document (the action line for a delete) and the reason.
func (s *Sink) rejectItem(b *bulk, it *item, r *itemResult) error {
	raw := b.buf[it.doc:it.end]
	if it.doc == it.end {
		raw = b.buf[it.start:it.doc]
	}
	pos := fmt.Sprintf("sink %s, index %s, change %d", s.name, it.index, it.seq)
	if it.id != "" {
		pos = fmt.Sprintf("sink %s, index %s, _id %s", s.name, it.index, it.id)
	}
	err := fmt.Errorf("elasticsearch refused the document (status %d): %s", r.Status, r.Error)
	if s.reject == nil {
		return fmt.Errorf("%s: %w", pos, err)
	}
	return s.reject(connector.BadRecord{Position: pos, Raw: bytes.TrimRight(raw, "\n"), Err: err})
}

// ensureIndexes makes sure every index the items idx of b write to
// exists before the request goes, with this life's alias on it when
// fenced, for an index pattern (Open did it for a static index).
func (s *Sink) ensureIndexes(ctx context.Context, b *bulk, idx []int) error {
	if s.cfg.index.static() {
		return nil
	}
	last := ""
	for _, i := range idx {
		if name := b.items[i].index; name != last {
			if err := s.ensureIndex(ctx, name, s.fence != 0); err != nil {
				return err
			}
			last = name
		}
	}
	return nil
}

// ensureIndex creates the index unless it exists (an alias counts), and
// with alias adds this life's alias to it. Only a failure worth a retry
// (the network, 429, 5xx) is an error, besides the alias's: a refusal to
// look or create (no privilege, an invalid name) leaves the creation to
// the bulk request, whose items then say what is wrong.
func (s *Sink) ensureIndex(ctx context.Context, name string, alias bool) error {
	s.knownMu.Lock()
	known := s.known[name]
	s.knownMu.Unlock()
	if known {
		return nil
	}
	res, err := s.client.Indices.Exists([]string{name}, s.client.Indices.Exists.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("index %s: %w", name, err)
	}
	res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		res, err := s.client.Indices.Create(name, s.client.Indices.Create.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("create index %s: %w", name, err)
		}
		defer res.Body.Close()
		if res.StatusCode < 300 {
			s.logger.Info("created the index", "sink", s.name, "index", name)
			break
		}
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		switch {
		case transient(res.StatusCode):
			return fmt.Errorf("create index %s: HTTP %d: %s", name, res.StatusCode, bytes.TrimSpace(msg))
		case !bytes.Contains(msg, []byte("resource_already_exists_exception")):
			s.logger.Warn("could not create the index; the first bulk request to it will, if the cluster allows", "sink", s.name, "index", name, "status", res.StatusCode, "reason", string(bytes.TrimSpace(msg)))
		}
	case transient(res.StatusCode):
		return fmt.Errorf("index %s: HTTP %d", name, res.StatusCode)
	case res.StatusCode >= 300:
		s.logger.Warn("could not check that the index exists; the first bulk request to it creates it, if the cluster allows", "sink", s.name, "index", name, "status", res.StatusCode)
	}
	if alias {
		if err := s.addLifeAlias(ctx, name); err != nil {
			return err
		}
	}
	s.knownMu.Lock()
	if len(s.known) >= maxKnown {
		clear(s.known)
	}
	s.known[name] = true
	s.knownMu.Unlock()
	return nil
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD (one per malformed sequence as Java decodes them, as in Flink's
// documents), which Elasticsearch's parser would otherwise refuse for the
// whole request.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\r':
				dst = append(dst, '\\', 'r')
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, javautf8.Replacement...)
			size = javautf8.MalformedLen(s[i:])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// statusError is a cluster answer that is not a success, for Open's ping.
func statusError(status int, body io.Reader) error {
	msg, _ := io.ReadAll(io.LimitReader(body, 512))
	err := errors.New("HTTP " + strconv.Itoa(status) + ": " + strings.TrimSpace(string(msg)))
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return retry.Permanent(fmt.Errorf("not allowed, check username/password or api_key: %w", err))
	}
	return err
}
