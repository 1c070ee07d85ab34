package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// LookupOptions implements connector.LookupSource.
func (s *Source) LookupOptions() connector.LookupOptions {
	lk := s.given.Lookup
	o := connector.LookupOptions{MaxBatch: lk.BatchSize}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultLookupBatchSize
	}
	if strings.EqualFold(lk.Cache, "partial") {
		pc := lk.PartialCache
		o.Cache = true
		o.MaxRows = pc.MaxRows
		if o.MaxRows == 0 {
			o.MaxRows = DefaultCacheMaxRows
		}
		o.ExpireAfterWrite, o.ExpireAfterAccess = pc.ExpireAfterWrite, pc.ExpireAfterAccess
		o.CacheMissingKey = pc.CacheMissingKey == nil || *pc.CacheMissingKey
	}
	return o
}

// Lookuper implements connector.LookupSource: a client of its own (the
// scan's connections are not opened for a table that is only looked up).
func (s *Source) Lookuper(keys []int) (connector.Lookuper, error) {
	if s.given.Table == "" {
		return nil, connector.Errorf("query", "a lookup join needs table: a query cannot be looked up by key")
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("a lookup needs at least one key column")
	}
	cols := make([]string, len(keys))
	for i, k := range keys {
		if k < 0 || k >= s.schema.Len() {
			return nil, fmt.Errorf("lookup key column %d is not in the schema", k)
		}
		cols[i] = mysqlconn.Quote(s.schema.Fields[k].Name)
	}
	l := &Lookup{src: s, keys: keys, keyCols: cols, backoff: retry.Sink}
	if n := s.given.Lookup.MaxRetries; n > 0 {
		l.backoff.Attempts = n + 1
	}
	l.max = s.LookupOptions().MaxBatch
	return l, nil
}

// Lookup finds rows by key with `SELECT cols FROM t WHERE k IN (?, ...)`
// (`(k1, k2) IN ((?, ?), ...)` for a composite key).
type Lookup struct {
	src     *Source
	keys    []int
	keyCols []string
	max     int
	backoff retry.Backoff
	db      *sql.DB
	trips   atomic.Int64
	kbuf    []byte
}

// Open connects, waiting while the server is unreachable, and checks
// that the table exists.
func (l *Lookup) Open(ctx context.Context) error {
	s := l.src
	conn, err := mysql.NewConnector(s.dc)
	if err != nil {
		return s.errorf("%v", err)
	}
	l.db = sql.OpenDB(conn)
	l.db.SetMaxOpenConns(2)
	l.db.SetMaxIdleConns(2)
	l.backoff = l.backoff.WithProbe(l.db.PingContext)
	if err := connect(ctx, l.db, s.logger.With("target", s.target)); err != nil {
		return s.errorf("lookup connect: %w", err)
	}
	if _, err := primaryKey(ctx, l.db, s.given.Table); err != nil {
		return s.errorf("%w", err)
	}
	return nil
}

// RoundTrips is the number of lookup queries sent.
func (l *Lookup) RoundTrips() int64 { return l.trips.Load() }

// Lookup implements connector.Lookuper.
func (l *Lookup) Lookup(ctx context.Context, keys [][]row.Value) ([][]row.Row, error) {
	if l.db == nil {
		return nil, l.src.errorf("lookup before open")
	}
	out := make([][]row.Row, len(keys))
	for start := 0; start < len(keys); start += l.max {
		end := min(start+l.max, len(keys))
		if err := l.query(ctx, keys[start:end], out[start:end]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// query looks keys up in one statement, retried while the server is
// away, and files the rows found under their keys in out.
func (l *Lookup) query(ctx context.Context, keys [][]row.Value, out [][]row.Row) error {
	s := l.src
	index := make(map[string]int, len(keys))
	args := make([]any, 0, len(keys)*len(l.keys))
	for i, k := range keys {
		l.kbuf = l.kbuf[:0]
		for _, v := range k {
			l.kbuf = row.AppendKey(l.kbuf, v)
			a, err := param(v)
			if err != nil {
				return s.errorf("lookup: %w", err)
			}
			args = append(args, a)
		}
		index[string(l.kbuf)] = i
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s WHERE ", s.selectList(), mysqlconn.Quote(s.given.Table))
	one := "?"
	if len(l.keys) == 1 {
		b.WriteString(l.keyCols[0])
	} else {
		fmt.Fprintf(&b, "(%s)", strings.Join(l.keyCols, ", "))
		one = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(l.keys)), ", ") + ")"
	}
	b.WriteString(" IN (")
	for i := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	b.WriteString(")")
	q := b.String()
	logger := s.logger.With("target", s.target)
	err := retry.Do(ctx, l.backoff, logger, "mysql lookup", func(ctx context.Context) error {
		for i := range out {
			out[i] = nil
		}
		l.trips.Add(1)
		rows, err := l.db.QueryContext(ctx, q, args...)
		if err != nil {
			return permanentUnless(err)
		}
		defer rows.Close()
		raw := make([]sql.RawBytes, s.schema.Len())
		dest := make([]any, len(raw))
		for j := range raw {
			dest[j] = &raw[j]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return permanentUnless(err)
			}
			r, err := s.convert(raw)
			if err != nil {
				return retry.Permanent(connector.BadRecord{Position: fmt.Sprintf("mysql table %s, looked-up row %s", mysqlconn.Quote(s.given.Table), rawText(raw)), Err: err})
			}
			// The server compares by its collation; the row is filed under
			// the key it equals exactly (a case-insensitive match of a
			// STRING key under another spelling is not one).
			l.kbuf = row.KeyOf(l.kbuf[:0], r, l.keys)
			if i, ok := index[string(l.kbuf)]; ok {
				out[i] = append(out[i], r)
			}
		}
		return permanentUnless(rows.Err())
	})
	if err != nil && !errors.As(err, new(connector.BadRecord)) {
		// The retries' last error is the driver's bare "invalid
		// connection": say which table and server it was about.
		return s.errorf("lookup of %d keys: %w", len(keys), err)
	}
	return err
}

func permanentUnless(err error) error {
	if err == nil || mysqlconn.Transient(err) {
		return err
	}
	return retry.Permanent(err)
}

// Close releases the connections; safe after a failed Open and twice.
func (l *Lookup) Close(context.Context) error {
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db = nil
	return err
}

// param is a key value as a statement parameter.
func param(v row.Value) (any, error) {
	switch v.Type() {
	case row.Boolean:
		return v.Bool(), nil
	case row.Int, row.BigInt:
		return v.Int64(), nil
	case row.Float, row.Double:
		return v.Float64(), nil
	case row.String:
		return v.Str(), nil
	case row.Bytes:
		return []byte(v.Str()), nil
	case row.Decimal, row.Date, row.Timestamp, row.TimestampLTZ:
		return v.Text(row.Of(v.Type())), nil
	}
	return nil, errors.New("a " + v.Type().String() + " key cannot be looked up")
}

var _ connector.Lookuper = (*Lookup)(nil)
