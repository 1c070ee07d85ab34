// Package conformance is the differential suite against Flink: cases of
// SQL and small data files, each with the changelog Flink 2.x produced for
// it (recorded by `make conformance-flink`), run through etld and compared
// with that record (see doc.go for the case format).
package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Section names a case file knows. Data sections are NAME.data, one per
// table.
const (
	QuerySection     = "query.sql"
	FlinkOutSection  = "flink.out"
	FlinkErrSection  = "flink.err"
	EtldOutSection   = "etld.out"
	dataSectionExt   = ".data"
	sectionMarkStart = "-- "
	sectionMarkEnd   = " --"
)

// Case is one conformance case.
type Case struct {
	// Name is the file name without .case.
	Name string
	// Path is the file it was read from.
	Path string
	// Header holds the lines before the first section, as written.
	Header []string
	// Batch is `mode: batch`; streaming otherwise.
	Batch bool
	// Tables are the `table:` lines, in order.
	Tables []Table
	// Sink is the `sink:` line: the query goes through a file sink in a
	// format, not print. Nil means print.
	Sink *SinkSpec
	// Zone is the `zone:` line: the session time zone (Flink's
	// table.local-time-zone, etld's local_time_zone); "" is UTC.
	Zone string
	// Expect is the `expect:` line: "" (etld gives what Flink gives),
	// or the name of a difference (Differences).
	Expect string
	// Sections in file order.
	Sections []Section
}

// Section is one `-- name --` part of a case file.
type Section struct {
	Name string
	Body string
}

// Table is a source table: `table: NAME (COLUMNS) FORMAT [key COLS]
// [watermark COL AS EXPR]`.
type Table struct {
	Name    string
	Columns []string
	Format  string
	Key     []string
	// WatermarkColumn and Watermark give `WATERMARK FOR col AS expr`.
	WatermarkColumn string
	Watermark       string
}

// SinkSpec is `sink: FORMAT (COLUMNS)`: the query's rows written by a
// file sink in FORMAT (csv or json), columns as declared.
type SinkSpec struct {
	Format  string
	Columns []string
}

// Section returns the body of the named section and whether it exists.
func (c *Case) Section(name string) (string, bool) {
	for _, s := range c.Sections {
		if s.Name == name {
			return s.Body, true
		}
	}
	return "", false
}

// SetSection replaces the named section's body, or appends the section;
// an empty body with remove set deletes it.
func (c *Case) SetSection(name, body string, remove bool) {
	for i, s := range c.Sections {
		if s.Name == name {
			if remove {
				c.Sections = append(c.Sections[:i], c.Sections[i+1:]...)
				return
			}
			c.Sections[i].Body = body
			return
		}
	}
	if !remove {
		c.Sections = append(c.Sections, Section{Name: name, Body: body})
	}
}

// Query is the case's SQL.
func (c *Case) Query() string {
	q, _ := c.Section(QuerySection)
	return strings.TrimRight(strings.TrimSpace(q), ";")
}

// Data returns the rows of a table's data section ("" when absent).
func (c *Case) Data(table string) string {
	d, _ := c.Section(table + dataSectionExt)
	return d
}

// Recorded says whether Flink's result is stored.
func (c *Case) Recorded() bool {
	_, out := c.Section(FlinkOutSection)
	_, err := c.Section(FlinkErrSection)
	return out || err
}

// LoadDir reads every *.case file of dir, in name order.
func LoadDir(dir string) ([]*Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.case"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*Case
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		c, err := Parse(p, data)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Parse reads a case file. Errors name the file and line.
func Parse(path string, data []byte) (*Case, error) {
	c := &Case{Path: path, Name: strings.TrimSuffix(filepath.Base(path), ".case")}
	lines := strings.SplitAfter(string(data), "\n")
	var cur *Section
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r\n")
		if name, ok := sectionName(line); ok {
			c.Sections = append(c.Sections, Section{Name: name})
			cur = &c.Sections[len(c.Sections)-1]
			continue
		}
		if cur != nil {
			cur.Body += raw
			continue
		}
		if line == "" && raw == "" {
			continue
		}
		c.Header = append(c.Header, line)
		if err := c.headerLine(line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
	}
	if c.Query() == "" {
		return nil, fmt.Errorf("%s: no -- %s -- section", path, QuerySection)
	}
	for _, t := range c.Tables {
		if _, ok := c.Section(t.Name + dataSectionExt); !ok {
			return nil, fmt.Errorf("%s: table %s has no -- %s%s -- section", path, t.Name, t.Name, dataSectionExt)
		}
	}
	if len(c.Tables) == 0 {
		return nil, fmt.Errorf("%s: no table: line", path)
	}
	return c, nil
}

func sectionName(line string) (string, bool) {
	if !strings.HasPrefix(line, sectionMarkStart) || !strings.HasSuffix(line, sectionMarkEnd) || len(line) < 7 {
		return "", false
	}
	return strings.TrimSpace(line[len(sectionMarkStart) : len(line)-len(sectionMarkEnd)]), true
}

func (c *Case) headerLine(line string) error {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return nil
	}
	key, val, ok := strings.Cut(t, ":")
	if !ok {
		return fmt.Errorf("header line %q: want key: value or # comment", t)
	}
	val = strings.TrimSpace(val)
	switch strings.TrimSpace(key) {
	case "mode":
		switch val {
		case "batch":
			c.Batch = true
		case "streaming":
			c.Batch = false
		default:
			return fmt.Errorf("mode %q: want batch or streaming", val)
		}
	case "table":
		tb, err := parseTable(val)
		if err != nil {
			return err
		}
		c.Tables = append(c.Tables, tb)
	case "sink":
		format, rest, _ := strings.Cut(val, " ")
		cols, tail, err := columnList(rest)
		if err != nil {
			return fmt.Errorf("sink: %w", err)
		}
		if tail != "" {
			return fmt.Errorf("sink: unexpected %q after the columns", tail)
		}
		if format != "csv" && format != "json" {
			return fmt.Errorf("sink format %q: want csv or json", format)
		}
		c.Sink = &SinkSpec{Format: format, Columns: cols}
	case "zone":
		c.Zone = val
	case "expect":
		if _, ok := Lookup(val); !ok {
			return fmt.Errorf("expect %q: not a named difference (differences.go)", val)
		}
		c.Expect = val
	default:
		return fmt.Errorf("unknown header key %q (mode, table, sink, zone, expect)", key)
	}
	return nil
}

func parseTable(s string) (Table, error) {
	name, rest, _ := strings.Cut(s, " ")
	t := Table{Name: name}
	cols, tail, err := columnList(rest)
	if err != nil {
		return t, fmt.Errorf("table %s: %w", name, err)
	}
	t.Columns = cols
	fields := strings.Fields(tail)
	if len(fields) == 0 {
		return t, fmt.Errorf("table %s: no format after the columns", name)
	}
	t.Format = fields[0]
	tail = strings.TrimSpace(strings.TrimPrefix(tail, fields[0]))
	for tail != "" {
		word, after, _ := strings.Cut(tail, " ")
		switch word {
		case "key":
			k, more, _ := strings.Cut(strings.TrimSpace(after), " ")
			t.Key = strings.Split(k, ",")
			tail = strings.TrimSpace(more)
		case "watermark":
			col, expr, ok := strings.Cut(strings.TrimSpace(after), " AS ")
			if !ok {
				return t, fmt.Errorf("table %s: watermark COL AS EXPR", name)
			}
			t.WatermarkColumn, t.Watermark = strings.TrimSpace(col), strings.TrimSpace(expr)
			tail = ""
		default:
			return t, fmt.Errorf("table %s: unexpected %q (key, watermark)", name, word)
		}
	}
	return t, nil
}

// columnList reads "(a INT, d DECIMAL(10, 2), ...)" from the start of s:
// commas inside parentheses, quotes or a type's angle brackets
// (MAP<K, V>) do not split.
func columnList(s string) (cols []string, tail string, err error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "(") {
		return nil, "", fmt.Errorf("want (columns), got %q", s)
	}
	depth, angle, start := 0, 0, 1
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '`':
			quote = ch
		case ch == '<' && typeArgsOpen(s[:i]):
			angle++
		case ch == '>' && angle > 0:
			angle--
		case ch == '(':
			depth++
		case ch == ')':
			depth--
			if depth == 0 {
				cols = append(cols, strings.TrimSpace(s[start:i]))
				return cols, strings.TrimSpace(s[i+1:]), nil
			}
		case ch == ',' && depth == 1 && angle == 0:
			cols = append(cols, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return nil, "", fmt.Errorf("unclosed ( in %q", s)
}

// typeArgsOpen says whether a '<' after before opens a type's arguments
// (ARRAY<, MAP<, ROW<, MULTISET<) rather than being a comparison.
func typeArgsOpen(before string) bool {
	before = strings.ToUpper(strings.TrimRight(before, " "))
	for _, t := range []string{"ARRAY", "MAP", "ROW", "MULTISET"} {
		if strings.HasSuffix(before, t) {
			return true
		}
	}
	return false
}

// Format writes the case back: the header as read, then the sections.
func (c *Case) Format() []byte {
	var b bytes.Buffer
	for _, h := range c.Header {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	for _, s := range c.Sections {
		fmt.Fprintf(&b, "%s%s%s\n", sectionMarkStart, s.Name, sectionMarkEnd)
		b.WriteString(s.Body)
		if s.Body != "" && !strings.HasSuffix(s.Body, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
