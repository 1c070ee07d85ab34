package file

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/internal/javatime"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Partitioned output, as Flink's filesystem sink writes it: the values
// of the partition_by columns make Hive-style directories
// (dt=2026-12-06/hr=03), escaped as Hive escapes them, and the columns
// themselves are not written into the files. A partition is committed, a
// success file written into it, once it is complete: with trigger
// partition-time when the watermark has passed the time its values name
// plus the delay, with process-time when the delay has passed since its
// first row; at the end of a bounded input every partition is.

// PartitionCommit is the partition_commit option (Flink's
// sink.partition-commit.* and partition.time-extractor.*).
type PartitionCommit struct {
	// Trigger is partition-time, process-time or none (no success
	// files); partition-time by default.
	Trigger string `yaml:"trigger"`
	// Delay is how long after its time a partition is complete.
	Delay time.Duration `yaml:"delay"`
	// TimestampPattern makes a partition's time from its values: $dt
	// $hr:00:00 with the partition columns' names after $. By default the
	// first partition column's value is the time.
	TimestampPattern string `yaml:"timestamp_pattern"`
	// TimestampFormatter parses the pattern's text, with Java's pattern
	// letters; yyyy-MM-dd HH:mm:ss by default, and a text of a date alone
	// is its midnight.
	TimestampFormatter string `yaml:"timestamp_formatter"`
	// SuccessFile is the name of the file a committed partition gets;
	// _SUCCESS by default.
	SuccessFile string `yaml:"success_file"`
}

const (
	triggerPartitionTime = "partition-time"
	triggerProcessTime   = "process-time"
	triggerNone          = "none"
	// defaultPartition names the directory of a NULL or empty value.
	defaultPartition = "__DEFAULT_PARTITION__"
	defaultFormatter = "yyyy-MM-dd HH:mm:ss"
	defaultSuccess   = "_SUCCESS"
)

// partitioner makes partition directories from rows and tells when a
// partition is complete.
type partitioner struct {
	cols    []int // the partition columns in the input
	names   []string
	types   []row.Type
	trigger string
	delay   time.Duration
	// pattern is TimestampPattern split at its $name references: text,
	// then the partition column (index into cols) it names, in turn.
	pattern []patternPart
	format  javatime.Pattern
	// dateOnly parses a value without a time as its midnight.
	dateOnly javatime.Pattern
	success  string
	buf      []byte
	text     []byte // a value's text, before escaping
	// patternText and formatText are the options as given, for Flink.
	patternText, formatText string
}

type patternPart struct {
	text string
	col  int // -1: text only
}

// newPartitioner checks the partition options against nothing but
// themselves; bind checks the columns.
func newPartitioner(names []string, c PartitionCommit) (*partitioner, error) {
	p := &partitioner{names: names, trigger: strings.ToLower(c.Trigger), delay: c.Delay, success: c.SuccessFile,
		patternText: c.TimestampPattern, formatText: c.TimestampFormatter}
	switch p.trigger {
	case "":
		p.trigger = triggerPartitionTime
	case triggerPartitionTime, triggerProcessTime, triggerNone:
	default:
		return nil, connector.UnknownValue("partition_commit.trigger", "trigger", c.Trigger, triggerPartitionTime, triggerProcessTime, triggerNone)
	}
	if c.Delay < 0 {
		return nil, connector.Errorf("partition_commit.delay", "must not be negative")
	}
	if p.success == "" {
		p.success = defaultSuccess
	}
	if strings.ContainsAny(p.success, `/\`) || p.success == "." || p.success == ".." {
		return nil, connector.Errorf("partition_commit.success_file", "%q is not a file name", p.success)
	}
	formatter := c.TimestampFormatter
	if formatter == "" {
		formatter = defaultFormatter
	}
	var err error
	if p.format, err = javatime.Compile(formatter); err != nil {
		return nil, connector.Errorf("partition_commit.timestamp_formatter", "%v", err)
	}
	p.dateOnly, _ = javatime.Compile("yyyy-MM-dd")
	if c.TimestampPattern == "" {
		p.pattern = []patternPart{{col: 0}}
	} else if p.pattern, err = parsePattern(c.TimestampPattern, names); err != nil {
		return nil, connector.Errorf("partition_commit.timestamp_pattern", "%v", err)
	}
	return p, nil
}

// parsePattern splits $name references out of a timestamp pattern.
func parsePattern(s string, names []string) ([]patternPart, error) {
	var out []patternPart
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			return append(out, patternPart{text: s, col: -1}), nil
		}
		out = append(out, patternPart{text: s[:i], col: -1})
		s = s[i+1:]
		n := 0
		for n < len(s) && (s[n] == '_' || 'a' <= s[n]|0x20 && s[n]|0x20 <= 'z' || n > 0 && '0' <= s[n] && s[n] <= '9') {
			n++
		}
		col := -1
		for j, name := range names {
			if strings.EqualFold(name, s[:n]) && (col < 0 || name == s[:n]) {
				col = j
			}
		}
		if col < 0 {
			return nil, fmt.Errorf("$%s names no partition column (%s)", s[:n], strings.Join(names, ", "))
		}
		out = append(out, patternPart{col: col})
		s = s[n:]
	}
}

// bind finds the partition columns in the input.
func (p *partitioner) bind(schema row.Schema) error {
	p.cols, p.types = nil, nil
	for _, name := range p.names {
		i := schema.Index(name)
		if i < 0 {
			return connector.Errorf("partition_by", "the input has no column %s (it has %s)", name, strings.Join(schema.Names(), ", "))
		}
		if slicesContains(p.cols, i) {
			return connector.Errorf("partition_by", "names column %s twice", name)
		}
		if schema.Fields[i].Type.ID.Nested() {
			return connector.Errorf("partition_by", "column %s is %s: a partition value must be a scalar", name, schema.Fields[i].Type)
		}
		p.cols, p.types = append(p.cols, i), append(p.types, schema.Fields[i].Type)
	}
	if len(p.cols) == schema.Len() {
		return connector.Errorf("partition_by", "names every column, and the files would hold none")
	}
	return nil
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// dir is the partition directory of r: name=value/... with the values
// escaped. It reuses a buffer: the caller copies what it keeps.
func (p *partitioner) dir(r row.Row) []byte {
	b := p.buf[:0]
	for k, i := range p.cols {
		if k > 0 {
			b = append(b, '/')
		}
		b = escapePath(b, p.names[k])
		b = append(b, '=')
		start := len(b)
		switch v := r[i]; {
		case v.IsNull():
		case v.Type() == row.String:
			b = escapePath(b, v.Str())
		default:
			p.text = row.AppendText(p.text[:0], v, p.types[k])
			b = escapePath(b, p.text)
		}
		if len(b) == start {
			b = append(b, defaultPartition...)
		}
	}
	p.buf = b
	return b
}

// pathEscaped marks the bytes Hive's FileUtils.escapePathName escapes
// (and so Flink's PartitionPathUtils): control characters, DEL and
// "#%'*/:=?\^{[].
var pathEscaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t[0x7f] = true
	for _, c := range []byte("\"#%'*/:=?\\^{[]") {
		t[c] = true
	}
	return t
}()

// escapePath appends s with the bytes pathEscaped marks as %XX.
func escapePath[S string | []byte](dst []byte, s S) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if pathEscaped[c] {
			dst = append(dst, '%', hex[c>>4], hex[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// unescapePath undoes escapePath.
func unescapePath(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// time is the time a partition directory's values name, in
// microseconds of wall clock (as a TIMESTAMP and the watermark count).
func (p *partitioner) time(dir string) (int64, error) {
	values := map[int]string{}
	for k, seg := range strings.Split(dir, "/") {
		_, v, _ := strings.Cut(seg, "=")
		values[k] = unescapePath(v)
	}
	var text strings.Builder
	for _, part := range p.pattern {
		if part.col < 0 {
			text.WriteString(part.text)
			continue
		}
		text.WriteString(values[part.col])
	}
	t, err := p.format.Parse(text.String())
	if err != nil {
		// A partition of days only ('2026-12-06') is its midnight, as
		// Flink's default extractor reads it.
		if d, derr := p.dateOnly.Parse(text.String()); derr == nil {
			t, err = d, nil
		}
	}
	if err != nil {
		return 0, fmt.Errorf("partition %s: its time %q: %w", dir, text.String(), err)
	}
	return t.UnixMicro(), nil
}
