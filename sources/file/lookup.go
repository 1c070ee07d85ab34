package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A bounded file table can be the right side of a lookup join (`JOIN t
// FOR SYSTEM_TIME AS OF o.p_time AS s ON o.k = s.key`), as Flink's
// filesystem table is: the lookup reads the whole file into memory when
// the job starts, indexed by the join's key columns, and answers every
// key from there (Flink's FileSystemLookupFunction, which reloads the
// file every lookup.join.cache.ttl, 60 min by default; a bounded file
// here is read once). A followed file, or a changelog format, is not a
// table that can be loaded once: both are refused.

// LookupOptions implements connector.LookupSource: no cache (the whole
// table is in memory already), and every key of an input batch asked in
// one call, which answers from memory.
func (s *Source) LookupOptions() connector.LookupOptions {
	return connector.LookupOptions{MaxBatch: 1 << 16}
}

// Lookuper implements connector.LookupSource: a reader of the whole file
// into memory at Open, by the key columns keys.
func (s *Source) Lookuper(keys []int) (connector.Lookuper, error) {
	switch {
	case !s.Bounded():
		return nil, connector.Errorf("follow", "a followed file never ends, so a lookup join cannot load it whole: look up a bounded file (no follow), or join the stream with a regular or temporal join")
	case s.updating:
		return nil, connector.Errorf("format", "a changelog format (%s) is not a table a lookup can load once: join it with an event-time temporal join", s.formatName)
	case len(keys) == 0:
		return nil, errors.New("a lookup needs at least one key column")
	}
	for _, k := range keys {
		if k < 0 || k >= s.width {
			return nil, fmt.Errorf("lookup key column %d is not in the schema", k)
		}
	}
	return &lookup{cfg: s.cfg, env: s.env, keys: keys}, nil
}

// lookup is a file table loaded into memory. Open reads it through a
// source of its own, built from the same options (the planned source is
// never scanned when only lookup joins read it).
type lookup struct {
	cfg   Config
	env   connector.SourceEnv
	keys  []int
	byKey map[string][]row.Row
	trips atomic.Int64
	kbuf  []byte
	idx   []int
}

// Open reads the whole file. A record the format cannot decode goes to
// the table's on_error, as a scan's would.
func (l *lookup) Open(ctx context.Context) error {
	src, err := New(l.cfg, l.env)
	if err != nil {
		return err
	}
	defer src.Close(ctx)
	if err := src.Open(ctx); err != nil {
		return err
	}
	l.byKey = map[string][]row.Row{}
	for {
		b, err := src.Read(ctx, defaultBatch)
		if b != nil {
			for _, ch := range b.Changes {
				if l.null(ch.Row) {
					continue
				}
				l.kbuf = row.KeyOf(l.kbuf[:0], ch.Row, l.keys)
				l.byKey[string(l.kbuf)] = append(l.byKey[string(l.kbuf)], row.Detach(ch.Row))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("loading %s for the lookup join: %w", l.cfg.Path, err)
		}
	}
	l.idx = make([]int, len(l.keys))
	for i := range l.idx {
		l.idx[i] = i
	}
	return nil
}

// null reports a NULL among r's key columns: such a row matches no key.
func (l *lookup) null(r row.Row) bool {
	for _, k := range l.keys {
		if r[k].IsNull() {
			return true
		}
	}
	return false
}

// Lookup answers from memory; the rows are shared between calls and
// never changed.
func (l *lookup) Lookup(_ context.Context, keys [][]row.Value) ([][]row.Row, error) {
	if l.byKey == nil {
		return nil, errors.New("lookup before open")
	}
	l.trips.Add(1)
	out := make([][]row.Row, len(keys))
	for i, k := range keys {
		l.kbuf = row.KeyOf(l.kbuf[:0], k, l.idx)
		out[i] = l.byKey[string(l.kbuf)]
	}
	return out, nil
}

// RoundTrips is the number of Lookup calls.
func (l *lookup) RoundTrips() int64 { return l.trips.Load() }

// Close drops the table.
func (l *lookup) Close(context.Context) error {
	l.byKey = nil
	return nil
}

var (
	_ connector.LookupSource = (*Source)(nil)
	_ connector.Lookuper     = (*lookup)(nil)
)
