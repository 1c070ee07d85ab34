package connector

import (
	"context"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// LookupSource is a source whose table can also be looked up by key, the
// right side of a lookup join (`JOIN t FOR SYSTEM_TIME AS OF
// o.proc_time AS c ON o.k = c.id`; Flink's LookupTableSource). A table
// read only by lookup joins is never scanned: the planner asks the
// source for a Lookuper instead, and the runtime's lookup join operator
// drives it.
type LookupSource interface {
	// Lookuper returns a client that finds the rows whose columns keys
	// (indices into the source's physical schema, in the join's order)
	// equal given values. It does no I/O: the operator opens it.
	Lookuper(keys []int) (Lookuper, error)
	// LookupOptions are the cache and batching options the table was
	// declared with, which the operator applies.
	LookupOptions() LookupOptions
}

// Lookuper looks rows up by key. The runtime calls Open once, then
// Lookup from one goroutine, then Close (also after a failed Open).
type Lookuper interface {
	Open(ctx context.Context) error
	// Lookup returns, for each key of keys (one value per key column, no
	// NULLs), the rows whose key columns equal it, rows[i] for keys[i]:
	// none, one or several. The rows have the source's physical schema.
	// A batch of keys costs one round trip (or a few, when the connector
	// caps the keys per query), not one per key. A server that is away is
	// waited for, retrying with backoff, until ctx ends or the retries
	// the table allows run out.
	Lookup(ctx context.Context, keys [][]row.Value) (rows [][]row.Row, err error)
	// RoundTrips is the number of queries sent so far, for /metrics and
	// tests; called from other goroutines.
	RoundTrips() int64
	Close(ctx context.Context) error
}

// LookupOptions are Flink's lookup options (lookup.cache = PARTIAL and
// lookup.partial-cache.*) plus etld's batching.
type LookupOptions struct {
	// Cache: PARTIAL caching of looked-up keys (Flink's lookup.cache);
	// false looks every key up.
	Cache bool
	// MaxRows caps the cached keys (lookup.partial-cache.max-rows); the
	// least recently used one goes first.
	MaxRows int
	// ExpireAfterWrite and ExpireAfterAccess drop a cached key that long
	// after it was looked up or last read; 0 never.
	ExpireAfterWrite, ExpireAfterAccess time.Duration
	// CacheMissingKey caches a key that found no row, too
	// (lookup.partial-cache.cache-missing-key, true by default).
	CacheMissingKey bool
	// MaxBatch caps the distinct keys of one Lookup call; the operator
	// cuts an input batch's keys into calls of at most MaxBatch.
	MaxBatch int
}
