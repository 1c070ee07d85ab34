package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// scanRange is one part of the scan: the rows whose partition column is
// in [lo, hi], or the whole table when column is "".
type scanRange struct {
	column string
	lo, hi int64
}

func (r scanRange) String() string {
	if r.column == "" {
		return "the whole table"
	}
	return fmt.Sprintf("%s BETWEEN %d AND %d", r.column, r.lo, r.hi)
}

// rangeProgress is what a checkpoint keeps of a range: the table rows
// read (handed on, or to on_error) and whether it is done.
type rangeProgress struct {
	Rows int64 `json:"rows"`
	Done bool  `json:"done,omitempty"`
}

// planRanges splits [lower, upper] into num ranges whose widths differ by
// at most one, the first ones wider (Flink's
// JdbcNumericBetweenParametersProvider); no partitioning gives one range.
func planRanges(p PartitionConfig) []scanRange {
	if p.Column == "" || p.LowerBound == nil || p.UpperBound == nil || p.Num < 1 {
		return []scanRange{{}}
	}
	lo, hi := *p.LowerBound, *p.UpperBound
	// The count of values may not fit an int64 (the whole BIGINT range);
	// uint64 holds it but for the full 2^64, which is capped.
	count := uint64(hi-lo) + 1
	if count == 0 {
		count = ^uint64(0)
	}
	num := uint64(p.Num)
	if num > count {
		num = count
	}
	width, extra := count/num, count%num
	out := make([]scanRange, 0, num)
	start := lo
	for i := uint64(0); i < num; i++ {
		w := width
		if i < extra {
			w++
		}
		end := start + int64(w-1)
		if i == num-1 {
			end = hi
		}
		out = append(out, scanRange{column: p.Column, lo: start, hi: end})
		start = end + 1
	}
	return out
}

// Position implements connector.Positioner: per range, the table rows
// read so far and whether it is done.
func (s *Source) Position() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(s.progress)
}

// Restore implements connector.Positioner.
func (s *Source) Restore(pos []byte) error {
	var p []rangeProgress
	if err := json.Unmarshal(pos, &p); err != nil {
		return s.errorf("restore: %w", err)
	}
	if len(p) != len(s.ranges) {
		return s.errorf("restore: the checkpoint has %d scan ranges, the source now %d: scan.partition changed since; reset the pipeline's state (etld state reset) to read the table again", len(p), len(s.ranges))
	}
	s.progress = p
	return nil
}

// selectList is the schema's columns, quoted.
func (s *Source) selectList() string {
	cols := make([]string, s.schema.Len())
	for i, f := range s.schema.Fields {
		cols[i] = mysqlconn.Quote(f.Name)
	}
	return strings.Join(cols, ", ")
}

// from is the FROM clause: the table, or the query as a derived table.
func (s *Source) from() string {
	if s.given.Table != "" {
		return mysqlconn.Quote(s.given.Table)
	}
	return "(" + s.given.Query + ") AS etld_q"
}

// rangeQuery is the SELECT of range r, skipping skip rows (only when the
// table has a primary key, so that the order is fixed).
func (s *Source) rangeQuery(r scanRange, skip int64) (string, []any) {
	var b strings.Builder
	var args []any
	fmt.Fprintf(&b, "SELECT %s FROM %s", s.selectList(), s.from())
	if r.column != "" {
		fmt.Fprintf(&b, " WHERE %s BETWEEN ? AND ?", mysqlconn.Quote(r.column))
		args = append(args, r.lo, r.hi)
	}
	if len(s.pk) > 0 {
		pk := make([]string, len(s.pk))
		for i, c := range s.pk {
			pk[i] = mysqlconn.Quote(c)
		}
		fmt.Fprintf(&b, " ORDER BY %s", strings.Join(pk, ", "))
		if skip > 0 {
			fmt.Fprintf(&b, " LIMIT 18446744073709551615 OFFSET %d", skip)
		}
	}
	return b.String(), args
}

// readRange reads range i into s.out. With a primary key a broken
// connection is retried from the row after the last one handed on;
// without one it fails the pipeline (the rows handed on cannot be told
// apart from the rest).
func (s *Source) readRange(ctx context.Context, i int) {
	s.mu.Lock()
	if len(s.pk) == 0 {
		s.progress[i].Rows = 0 // read again from the start
	}
	sent := s.progress[i].Rows
	s.mu.Unlock()
	r := s.ranges[i]
	send := func(m scanned) bool {
		select {
		case s.out <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	logger := s.logger.With("target", s.target, "range", r.String())
	err := retry.Do(ctx, retry.Sink.WithProbe(s.db.PingContext), logger, "mysql scan", func(ctx context.Context) error {
		q, args := s.rangeQuery(r, sent)
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return s.classify(err)
		}
		defer rows.Close()
		raw := make([]sql.RawBytes, s.schema.Len())
		dest := make([]any, len(raw))
		for j := range raw {
			dest[j] = &raw[j]
		}
		m := scanned{rng: i, rows: make([]row.Row, 0, s.fetch)}
		n := sent
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return s.classify(err)
			}
			n++
			m.read++
			rw, err := s.convert(raw)
			if err != nil {
				// Read hands it to on_error with the rows around it, so
				// that the dead letter follows the position past it.
				m.bad = append(m.bad, connector.BadRecord{Position: s.rowPosition(raw, r, n), Raw: rawText(raw), Err: err})
			} else {
				m.rows = append(m.rows, rw)
			}
			if len(m.rows)+len(m.bad) >= s.fetch {
				if !send(m) {
					return retry.Permanent(ctx.Err())
				}
				sent = n
				m = scanned{rng: i, rows: make([]row.Row, 0, s.fetch)}
			}
		}
		if err := rows.Err(); err != nil {
			return s.classify(err)
		}
		m.done = true
		if !send(m) {
			return retry.Permanent(ctx.Err())
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		send(scanned{rng: i, err: s.errorf("scan %s: %w", r, err)})
	}
}

// classify marks err permanent unless retrying the range can fix it.
func (s *Source) classify(err error) error {
	if !mysqlconn.Transient(err) || len(s.pk) == 0 {
		return retry.Permanent(err)
	}
	return err
}

// rowPosition names row n of range r: by its primary key when the
// schema has all its columns, else by number.
func (s *Source) rowPosition(raw []sql.RawBytes, r scanRange, n int64) string {
	what := "table " + mysqlconn.Quote(s.given.Table)
	if s.given.Table == "" {
		what = "query"
	}
	if len(s.pk) > 0 {
		parts := make([]string, 0, len(s.pk))
		for _, c := range s.pk {
			j := s.schema.Index(c)
			if j < 0 {
				parts = nil
				break
			}
			parts = append(parts, fmt.Sprintf("%s=%s", c, string(raw[j])))
		}
		if parts != nil {
			return fmt.Sprintf("mysql %s, row %s", what, strings.Join(parts, ", "))
		}
	}
	if r.column == "" {
		return fmt.Sprintf("mysql %s, row %d", what, n)
	}
	return fmt.Sprintf("mysql %s, row %d of %s", what, n, r)
}

func rawText(raw []sql.RawBytes) []byte {
	parts := make([]string, len(raw))
	for i, r := range raw {
		if r == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = string(r)
		}
	}
	return []byte(strings.Join(parts, ","))
}

// convert turns the text of a result row into a row of the schema's
// types.
func (s *Source) convert(raw []sql.RawBytes) (row.Row, error) {
	r := make(row.Row, len(raw))
	for j, b := range raw {
		f := s.schema.Fields[j]
		v, err := parseValue(b, f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		r[j] = v
	}
	return r, nil
}

// parseValue reads one value of the text protocol as type t; nil is NULL.
func parseValue(b []byte, t row.Type) (row.Value, error) {
	if b == nil {
		if t.NotNull {
			return row.NullValue, fmt.Errorf("NULL in a column declared %s", t)
		}
		return row.NullValue, nil
	}
	switch t.ID {
	case row.String:
		return row.StringValue(string(b)), nil
	case row.Bytes:
		return row.BytesValue(b), nil
	case row.Boolean:
		// TINYINT(1) and BIT(1): 0 is false, any other number true.
		if len(b) == 1 && b[0] <= 1 {
			return row.BoolValue(b[0] == 1), nil
		}
	case row.Timestamp, row.TimestampLTZ:
		// DATETIME '2024-01-02 03:04:05.123456' and the zero date, which
		// no TIMESTAMP holds.
		if strings.HasPrefix(string(b), "0000-00-00") {
			return row.NullValue, fmt.Errorf("the zero date %q is no timestamp", string(b))
		}
	}
	return row.ParseText(string(b), t)
}
