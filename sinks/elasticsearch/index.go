package elasticsearch

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/internal/javatime"
	"github.com/etld/etld/pipeline/row"
)

// indexPattern is the index option: a static name, or Flink's dynamic
// index, a name with one `{column}` or `{column|date-format}` part
// (`{now()|date-format}` for processing time).
type indexPattern struct {
	prefix, suffix string
	// column is the dynamic part's column name; "" for a static index.
	column string
	now    bool
	format javatime.Pattern // nil: the value's text
	hasFmt bool

	// Set by bind.
	col  int
	last map[string]string // formatted name -> interned string
	buf  []byte
}

// parseIndex reads the index option.
func parseIndex(s string) (*indexPattern, error) {
	if s == "" {
		return nil, errors.New("must name the index, or a pattern such as logs-{event_time|yyyy-MM-dd}")
	}
	open := strings.IndexByte(s, '{')
	if open < 0 {
		if strings.IndexByte(s, '}') >= 0 {
			return nil, fmt.Errorf("%q has a } without a {", s)
		}
		if err := checkIndexName(s); err != nil {
			return nil, err
		}
		return &indexPattern{prefix: s, col: -1}, nil
	}
	end := strings.IndexByte(s[open:], '}')
	if end < 0 {
		return nil, fmt.Errorf("%q has a { without a }", s)
	}
	end += open
	p := &indexPattern{prefix: s[:open], suffix: s[end+1:], col: -1}
	if strings.ContainsAny(p.suffix, "{}") || strings.IndexByte(p.prefix, '}') >= 0 {
		return nil, fmt.Errorf("%q: only one {column} or {column|date-format} part is allowed", s)
	}
	inner := s[open+1 : end]
	col, format, hasFmt := strings.Cut(inner, "|")
	p.column = strings.TrimSpace(col)
	if p.column == "" {
		return nil, fmt.Errorf("%q: {} names no column", s)
	}
	if strings.EqualFold(p.column, "now()") {
		if !hasFmt {
			return nil, fmt.Errorf("%q: {now()} needs a date format, e.g. {now()|yyyy-MM-dd}", s)
		}
		p.now = true
	}
	if hasFmt {
		if format == "" {
			return nil, fmt.Errorf("%q: the date format after | is empty", s)
		}
		f, err := javatime.Compile(format)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		p.format, p.hasFmt = f, true
	}
	// The static parts follow Elasticsearch's rules for names; the dynamic
	// part is checked by Elasticsearch itself, row by row.
	if strings.ToLower(p.prefix+p.suffix) != p.prefix+p.suffix {
		return nil, fmt.Errorf("%q: index names must be lower case", s)
	}
	return p, nil
}

// checkIndexName applies Elasticsearch's rules for an index name, so that
// a bad static name is a configuration error rather than every row
// rejected.
func checkIndexName(s string) error {
	switch {
	case strings.ToLower(s) != s:
		return fmt.Errorf("index %q: index names must be lower case", s)
	case s == "." || s == "..":
		return fmt.Errorf("index %q is not allowed", s)
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "_") || strings.HasPrefix(s, "+"):
		return fmt.Errorf("index %q must not start with -, _ or +", s)
	case strings.ContainsAny(s, `\/*?"<>| ,#:`):
		return fmt.Errorf(`index %q must not contain any of \ / * ? " < > | , # : or a space`, s)
	case len(s) > 255:
		return fmt.Errorf("index %q is longer than 255 bytes", s)
	}
	return nil
}

// static reports whether every row goes to the same index.
func (p *indexPattern) static() bool { return p.column == "" }

// bind finds the pattern's column in the sink's input.
func (p *indexPattern) bind(schema row.Schema) error {
	p.last = map[string]string{}
	if p.static() || p.now {
		return nil
	}
	i := schema.Index(p.column)
	if i < 0 {
		return fmt.Errorf("index pattern names column %q, which the input does not have (columns: %s)", p.column, strings.Join(schema.Names(), ", "))
	}
	t := schema.Fields[i].Type
	if p.hasFmt && !t.ID.Temporal() {
		return fmt.Errorf("index pattern formats column %q as a date, but it is %s; use {%s} without a format, or a TIMESTAMP, TIMESTAMP_LTZ or DATE column", p.column, t, p.column)
	}
	p.col = i
	return nil
}

// name returns the index of r. A NULL in the pattern's column is an error:
// the row has no index to go to.
func (p *indexPattern) name(r row.Row, now func() time.Time) (string, error) {
	if p.static() {
		return p.prefix, nil
	}
	b := append(p.buf[:0], p.prefix...)
	switch {
	case p.now:
		b = p.format.Format(b, now().UTC())
	default:
		v := r[p.col]
		if v.IsNull() {
			return "", fmt.Errorf("column %q of the index pattern is NULL", p.column)
		}
		if p.hasFmt {
			b = p.format.Format(b, v.Time())
		} else {
			b = appendKeyValue(b, v)
		}
	}
	b = append(b, p.suffix...)
	p.buf = b
	// Rows mostly share a few index names: look the bytes up without
	// allocating, and keep one string per name.
	if s, ok := p.last[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(p.last) > 4096 {
		clear(p.last)
	}
	p.last[s] = s
	return s, nil
}

// appendKeyValue appends v as Flink's Elasticsearch sink writes a key
// value or an index part: Java's toString of the value (2024-01-01T10:00
// for a TIMESTAMP, true for a BOOLEAN). A TIMESTAMP_LTZ is written as
// its wall clock in the session zone (UTC), without a Z, as Flink's
// TimestampData.toString does. A DECIMAL is plain (0.0000000), as
// Flink's DecimalData.toString is toPlainString.
func appendKeyValue(dst []byte, v row.Value) []byte {
	switch v.Type() {
	case row.TimestampLTZ:
		v = row.TimestampValue(v.Micros())
	case row.Decimal:
		return row.AppendDecimal(dst, v, true)
	}
	return v.AppendPrint(dst)
}
