package pipetest

// A lookup table in a test: the table a lookup join reads by key is the
// test's input of its source, never the database it names. A source the
// test gives no input is an empty table.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// memTable is the rows of a lookup table's input, decoded once for every
// lookup join that reads it.
type memTable struct {
	name string
	// reader is a memSource of its own over the input's records: a
	// decoder keeps state (a csv header), and the scan of the same
	// source, if there is one, reads with another.
	reader *memSource
	opts   connector.LookupOptions

	once sync.Once
	rows []row.Row
	err  error
}

// load decodes the records into rows; a record that is a change other
// than an insert fails the run, since a table holds rows.
func (t *memTable) load() ([]row.Row, error) {
	t.once.Do(func() {
		for _, rec := range t.reader.records {
			b := row.NewBatch(2, t.reader.width)
			if err := t.reader.decode(rec, b); err != nil {
				t.err = err
				return
			}
			for _, c := range b.Changes {
				if c.Kind != row.Insert {
					t.err = fmt.Errorf("%s: the lookup table %s holds rows, and this record is a %s change", rec.pos, t.name, c.Kind)
					return
				}
				t.rows = append(t.rows, c.Row.Clone())
			}
		}
	})
	return t.rows, t.err
}

// LookupOptions implements connector.LookupSource: the options of the
// table the source stands in for.
func (s *memSource) LookupOptions() connector.LookupOptions {
	if s.table == nil {
		return connector.LookupOptions{}
	}
	return s.table.opts
}

// Lookuper implements connector.LookupSource.
func (s *memSource) Lookuper(keys []int) (connector.Lookuper, error) {
	if s.table == nil {
		return nil, errors.New("pipetest: the source is not a lookup table")
	}
	return &memLookuper{table: s.table, keys: keys}, nil
}

// memLookuper finds a lookup table's rows by the values of its key
// columns, equal as a GROUP BY key is equal.
type memLookuper struct {
	table *memTable
	keys  []int
	byKey map[string][]row.Row
	trips atomic.Int64
}

func (l *memLookuper) Open(ctx context.Context) error {
	rows, err := l.table.load()
	if err != nil {
		return err
	}
	l.byKey = map[string][]row.Row{}
	for _, r := range rows {
		k := string(row.KeyOf(nil, r, l.keys))
		l.byKey[k] = append(l.byKey[k], r)
	}
	return nil
}

func (l *memLookuper) Lookup(ctx context.Context, keys [][]row.Value) ([][]row.Row, error) {
	l.trips.Add(1)
	cols := make([]int, 0, len(l.keys))
	for i := range l.keys {
		cols = append(cols, i)
	}
	out := make([][]row.Row, len(keys))
	for i, vals := range keys {
		for _, r := range l.byKey[string(row.KeyOf(nil, row.Row(vals), cols))] {
			out[i] = append(out[i], r.Clone())
		}
	}
	return out, nil
}

func (l *memLookuper) RoundTrips() int64               { return l.trips.Load() }
func (l *memLookuper) Close(ctx context.Context) error { return nil }

var (
	_ connector.LookupSource = (*memSource)(nil)
	_ connector.Lookuper     = (*memLookuper)(nil)
)
