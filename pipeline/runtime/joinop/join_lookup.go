package joinop

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// LookupJoinSpec describes a lookup join (Flink's LookupJoinRunner): each
// left row is joined with the rows a connector.Lookuper finds for its
// key, at the time the row passes (processing time). The output row is
// the left row followed by the looked-up row; each output change keeps
// the kind of its input change, so the output has the input's changelog
// mode.
type LookupJoinSpec struct {
	// Kind is InnerJoin (a row without a match is dropped) or LeftJoin
	// (it is emitted with NULLs for the right columns).
	Kind JoinKind
	// LeftKeys are the left columns whose values are looked up, in the
	// order of the Lookuper's key columns.
	LeftKeys   []int
	RightWidth int
	// Residual, if set, is the rest of the ON condition, evaluated on the
	// joined row: a looked-up row it rejects is no match.
	Residual func(joined row.Row) (bool, error)
	// Lookuper finds the rows; NewLookupJoin's operator opens and closes
	// it.
	Lookuper connector.Lookuper
	Options  connector.LookupOptions
	// Now is the cache's clock (time.Now when nil).
	Now func() time.Time
}

// LookupStats are a lookup join's counters, safe to read while it runs:
// the keys looked up (KeysLookedUp, in RoundTrips queries), the input
// rows whose key the cache held (Hits) or did not (Misses), and the time
// of each call of the Lookuper.
type LookupStats struct {
	Hits, Misses, KeysLookedUp atomic.Int64
	Latency                    operator.Latency
}

// LookupJoin is the lookup join operator. Per input batch it gathers the
// distinct keys the cache does not hold and looks them up in one call
// (the connector cuts it into queries of at most Options.MaxBatch keys),
// then emits the batch's changes in order. It keeps no state in
// checkpoints: the cache is a cache, rebuilt by lookups after a restore
// (Flink does not checkpoint it either).
type LookupJoin struct {
	spec  LookupJoinSpec
	ctx   context.Context
	cache *lookupCache
	Stats LookupStats

	// scratch, per batch
	keys    [][]row.Value  // to look up
	pending map[string]int // key -> slot of rows
	rows    [][]row.Row    // by slot
	cached  []bool         // by slot: the rows came from the cache
	asked   []int          // the slots of keys, in order
	kbuf    []byte
}

// NewLookupJoin returns the operator for spec.
func NewLookupJoin(spec LookupJoinSpec) *LookupJoin {
	if spec.Now == nil {
		spec.Now = time.Now
	}
	j := &LookupJoin{spec: spec, ctx: context.Background(), pending: map[string]int{}}
	if spec.Options.Cache {
		j.cache = newLookupCache(spec.Options, spec.Now)
	}
	return j
}

// Open implements Opener: it opens the Lookuper with the run's context,
// which the lookups use too.
func (j *LookupJoin) Open(ctx context.Context) error {
	j.ctx = ctx
	if err := j.spec.Lookuper.Open(ctx); err != nil {
		return fmt.Errorf("lookup table: %w", err)
	}
	return nil
}

// Close implements Opener.
func (j *LookupJoin) Close(ctx context.Context) error { return j.spec.Lookuper.Close(ctx) }

// RoundTrips is the number of queries the Lookuper sent.
func (j *LookupJoin) RoundTrips() int64 { return j.spec.Lookuper.RoundTrips() }

// LookupCounts implements operator.Looker.
func (j *LookupJoin) LookupCounts() operator.LookupCounts {
	return operator.LookupCounts{Hits: j.Stats.Hits.Load(), Misses: j.Stats.Misses.Load(), Keys: j.Stats.KeysLookedUp.Load(),
		RoundTrips: j.RoundTrips(), Latency: j.Stats.Latency.Snapshot()}
}

// StateEntries implements StateSizer: the keys the cache holds.
func (j *LookupJoin) StateEntries() int64 {
	if j.cache == nil {
		return 0
	}
	return int64(j.cache.lru.Len())
}

// key encodes r's lookup key into j.kbuf; null reports a NULL in it,
// which matches nothing (SQL's = on NULL is never true).
func (j *LookupJoin) key(r row.Row) (null bool) {
	for _, k := range j.spec.LeftKeys {
		if r[k].IsNull() {
			return true
		}
	}
	j.kbuf = row.KeyOf(j.kbuf[:0], r, j.spec.LeftKeys)
	return false
}

// Process implements Operator: it finds the rows of the batch's keys,
// then emits the batch's changes joined with them, in order.
func (j *LookupJoin) Process(in *row.Batch, out operator.Emitter) error {
	j.gather(in)
	if err := j.lookUp(); err != nil {
		return err
	}
	var hits, misses int64
	err := operator.EachChange("lookup join", in, out, func(_ int, ch *row.Change) error {
		var rows []row.Row
		if !j.key(ch.Row) {
			slot := j.pending[string(j.kbuf)]
			rows = j.rows[slot]
			if j.cached[slot] {
				hits++
			} else {
				misses++
			}
		}
		return j.emit(ch.Kind, ch.Row, rows, out)
	})
	if err != nil {
		return err
	}
	j.Stats.Hits.Add(hits)
	j.Stats.Misses.Add(misses)
	return nil
}

// gather finds the batch's distinct keys: the cached ones' rows now (so
// that a put of lookUp cannot evict them mid-batch), the others to look
// up.
func (j *LookupJoin) gather(in *row.Batch) {
	j.keys, j.rows, j.cached, j.asked = j.keys[:0], j.rows[:0], j.cached[:0], j.asked[:0]
	clear(j.pending)
	for _, ch := range in.Changes {
		if j.key(ch.Row) {
			continue
		}
		if _, ok := j.pending[string(j.kbuf)]; ok {
			continue
		}
		j.pending[string(j.kbuf)] = len(j.rows)
		if j.cache != nil {
			if rows, ok := j.cache.get(string(j.kbuf)); ok {
				j.rows = append(j.rows, rows)
				j.cached = append(j.cached, true)
				continue
			}
		}
		vals := make([]row.Value, len(j.spec.LeftKeys))
		for i, k := range j.spec.LeftKeys {
			vals[i] = ch.Row[k]
		}
		j.asked = append(j.asked, len(j.rows))
		j.rows = append(j.rows, nil)
		j.cached = append(j.cached, false)
		j.keys = append(j.keys, vals)
	}
}

// lookUp looks the keys gather did not find in the cache up in one call,
// and caches what it found.
func (j *LookupJoin) lookUp() error {
	if len(j.keys) == 0 {
		return nil
	}
	start := time.Now()
	found, err := j.spec.Lookuper.Lookup(j.ctx, j.keys)
	j.Stats.Latency.Observe(time.Since(start))
	if err != nil {
		return fmt.Errorf("lookup of %d keys: %w", len(j.keys), err)
	}
	if len(found) != len(j.keys) {
		return errors.New("lookup: the connector answered a different number of keys than asked")
	}
	j.Stats.KeysLookedUp.Add(int64(len(j.keys)))
	for i, slot := range j.asked {
		j.rows[slot] = found[i]
	}
	if j.cache != nil {
		for key, slot := range j.pending {
			if !j.cached[slot] && (len(j.rows[slot]) > 0 || j.spec.Options.CacheMissingKey) {
				j.cache.put(key, j.rows[slot])
			}
		}
	}
	return nil
}

// emit joins left with the rows found and emits with kind k.
func (j *LookupJoin) emit(k row.Kind, left row.Row, rows []row.Row, out operator.Emitter) error {
	matched := false
	for _, r := range rows {
		joined := make(row.Row, 0, len(left)+j.spec.RightWidth)
		joined = append(append(joined, left...), r...)
		if j.spec.Residual != nil {
			ok, err := j.spec.Residual(joined)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		matched = true
		out.Emit(k, joined)
	}
	if !matched && j.spec.Kind == LeftJoin {
		joined := make(row.Row, len(left)+j.spec.RightWidth)
		copy(joined, left)
		for c := len(left); c < len(joined); c++ {
			joined[c] = row.NullValue
		}
		out.Emit(k, joined)
	}
	return nil
}

// Watermark implements Operator: watermarks pass.
func (j *LookupJoin) Watermark(int64, operator.Emitter) error { return nil }

// Finish implements Operator.
func (j *LookupJoin) Finish(operator.Emitter) error { return nil }

// lookupCache is Flink's partial lookup cache: at most max keys, the
// least recently used dropped first, each dropped expireWrite after it
// was stored or expireAccess after it was last read.
type lookupCache struct {
	max          int
	expireWrite  time.Duration
	expireAccess time.Duration
	now          func() time.Time
	lru          *list.List // of *cacheEntry, most recent first
	byKey        map[string]*list.Element
}

type cacheEntry struct {
	key     string
	rows    []row.Row
	written time.Time
	read    time.Time
}

func newLookupCache(o connector.LookupOptions, now func() time.Time) *lookupCache {
	return &lookupCache{max: o.MaxRows, expireWrite: o.ExpireAfterWrite, expireAccess: o.ExpireAfterAccess,
		now: now, lru: list.New(), byKey: map[string]*list.Element{}}
}

// peek reports whether key is cached and fresh, without touching it.
func (c *lookupCache) peek(key string) (*list.Element, bool) {
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	now := c.now()
	if c.expireWrite > 0 && now.Sub(e.written) >= c.expireWrite || c.expireAccess > 0 && now.Sub(e.read) >= c.expireAccess {
		c.lru.Remove(el)
		delete(c.byKey, key)
		return nil, false
	}
	return el, true
}

// get returns key's rows and marks it used.
func (c *lookupCache) get(key string) ([]row.Row, bool) {
	el, ok := c.peek(key)
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	e.read = c.now()
	c.lru.MoveToFront(el)
	return e.rows, true
}

// put stores key's rows, dropping the least recently used key when full.
func (c *lookupCache) put(key string, rows []row.Row) {
	now := c.now()
	if el, ok := c.byKey[key]; ok {
		e := el.Value.(*cacheEntry)
		e.rows, e.written, e.read = rows, now, now
		c.lru.MoveToFront(el)
		return
	}
	for c.max > 0 && c.lru.Len() >= c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).key)
	}
	c.byKey[key] = c.lru.PushFront(&cacheEntry{key: key, rows: rows, written: now, read: now})
}

var (
	_ operator.Operator   = (*LookupJoin)(nil)
	_ operator.Opener     = (*LookupJoin)(nil)
	_ operator.StateSizer = (*LookupJoin)(nil)
	_ operator.Looker     = (*LookupJoin)(nil)
)

// EmptySource is a bounded source without rows: a table that only lookup
// joins read runs as one, so that its node is there (checkpoints name
// it) and scans nothing.
type EmptySource struct{}

// Bounded implements connector.Source.
func (EmptySource) Bounded() bool { return true }

// Open implements connector.Source.
func (EmptySource) Open(context.Context) error { return nil }

// Read implements connector.Source.
func (EmptySource) Read(context.Context, int) (*row.Batch, error) { return nil, io.EOF }

// Close implements connector.Source.
func (EmptySource) Close(context.Context) error { return nil }

var _ connector.Source = EmptySource{}
