package datagen

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// genKind is how a column's values are made.
type genKind uint8

const (
	genBool     genKind = iota
	genInt              // lo + uniform[0, span]: INT, BIGINT, DECIMAL (unscaled)
	genFloat            // uniform[flo, fhi): FLOAT, DOUBLE
	genString           // random alphanumeric text of length
	genBytes            // random bytes of length
	genPast             // the current time minus uniform[0, span]: TIMESTAMP(_LTZ) in µs, DATE in days
	genSeqInt           // seq.start + seq.next*seq.step, as the column's type
	genSeqFloat         // seq.fstart + seq.next: FLOAT, DOUBLE
)

// column is one column's generator, resolved from its options and type.
type column struct {
	typ      row.Type
	gen      genKind
	nullRate float64
	lo       int64
	span     uint64
	flo, fhi float64
	length   int
	// unit truncates random timestamps to the type's precision, in µs.
	unit int64
	name string
	seq  sequence
}

// sequence is a sequence column's range and counter.
type sequence struct {
	start, step int64
	fstart      float64
	// count is the number of values; 0 for an endless sequence.
	count uint64
	// next is the index of the next value.
	next uint64
}

const (
	defaultLength = 100
	// maxLength guards against a typo that would make every row a
	// gigabyte; test data needs nothing near it.
	maxLength = 1 << 20
)

// Which options apply to which types, for the error that says so.
var (
	boundTypes  = typeSet{row.Int, row.BigInt, row.Decimal, row.Float, row.Double}
	lengthTypes = typeSet{row.String, row.Bytes}
	timeTypes   = typeSet{row.Timestamp, row.TimestampLTZ, row.Date}
	seqTypes    = typeSet{row.Int, row.BigInt, row.Decimal, row.Float, row.Double, row.String, row.Timestamp, row.TimestampLTZ, row.Date}
)

type typeSet []row.TypeID

func (ts typeSet) has(id row.TypeID) bool {
	for _, t := range ts {
		if t == id {
			return true
		}
	}
	return false
}

func (ts typeSet) String() string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// buildColumns resolves every column's generator. Columns without an entry
// in fields are random with their type's defaults.
func buildColumns(schema row.Schema, fields map[string]FieldConfig) ([]column, error) {
	var errs []error
	type entry struct {
		key string
		cfg FieldConfig
	}
	byCol := map[int]entry{}
	// Sorted, so that the same file gives the same errors.
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		fc := fields[key]
		i := schema.Index(key)
		if i < 0 {
			hint := ""
			if c := spec.Closest(key, schema.Names()); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			}
			errs = append(errs, connector.Errorf("fields."+key, "no column %q in the schema%s (columns: %s)",
				key, hint, strings.Join(schema.Names(), ", ")))
			continue
		}
		if prev, dup := byCol[i]; dup {
			errs = append(errs, connector.Errorf("fields."+key, "column %q is configured twice, as %q and as %q", schema.Fields[i].Name, prev.key, key))
			continue
		}
		byCol[i] = entry{key, fc}
	}
	cols := make([]column, schema.Len())
	for i, f := range schema.Fields {
		e, ok := byCol[i]
		if !ok {
			e.key = f.Name
		}
		c, err := buildColumn(f, e.key, e.cfg)
		errs = append(errs, err)
		cols[i] = c
	}
	return cols, errors.Join(errs...)
}

// buildColumn checks one column's options against its kind and type and
// resolves its generator.
func buildColumn(f row.Field, key string, fc FieldConfig) (column, error) {
	path := func(opt string) string { return "fields." + key + "." + opt }
	var errs []error
	fail := func(opt, format string, args ...any) {
		errs = append(errs, connector.Errorf(path(opt), format, args...))
	}
	c := column{name: f.Name, typ: f.Type}
	id := f.Type.ID

	kind := fc.Kind
	switch kind {
	case "":
		kind = "random"
	case "random", "sequence":
	default:
		errs = append(errs, connector.UnknownValue(path("kind"), "kind", kind, "random", "sequence"))
	}
	if fc.NullRate != nil {
		switch r := *fc.NullRate; {
		case !(r >= 0 && r <= 1):
			fail("null_rate", "want a share between 0 and 1, got %v", r)
		case r > 0 && f.Type.NotNull:
			fail("null_rate", "column %s is NOT NULL", f.Name)
		default:
			c.nullRate = r
		}
	}

	type option struct {
		name  string
		set   bool
		kind  string // the kind it belongs to, "" for both
		types typeSet
	}
	options := []option{
		{"min", fc.Min != nil, "random", boundTypes},
		{"max", fc.Max != nil, "random", boundTypes},
		{"length", fc.Length != nil, "random", lengthTypes},
		{"max_past", fc.MaxPast != nil, "random", timeTypes},
		{"start", fc.Start != nil, "sequence", seqTypes},
		{"end", fc.End != nil, "sequence", seqTypes},
		{"step", fc.Step != nil, "sequence", timeTypes},
	}
	for _, o := range options {
		switch {
		case !o.set:
		case kind == "random" && o.kind == "sequence":
			fail(o.name, "%s applies only to kind: sequence, and this column is random (the default kind)", o.name)
		case kind == "sequence" && o.kind == "random":
			fail(o.name, "%s applies only to kind: random; a sequence runs from start to end", o.name)
		case kind == "sequence" && !seqTypes.has(id):
			// One error for the kind says it all.
		case !o.types.has(id):
			fail(o.name, "%s applies to %s columns, and %s is %s", o.name, o.types, f.Name, f.Type)
		}
	}
	if kind == "sequence" && !seqTypes.has(id) {
		fail("kind", "a sequence cannot make %s values (sequences: %s)", f.Type, seqTypes)
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	var err error
	if kind == "sequence" {
		err = c.sequence(f, fc, path)
	} else {
		err = c.random(f, fc, path)
	}
	return c, err
}

// random resolves a random column: its generator and range, by type.
func (c *column) random(f row.Field, fc FieldConfig, path func(string) string) error {
	t := f.Type
	switch t.ID {
	case row.Boolean:
		c.gen = genBool
		return nil
	case row.Int, row.BigInt, row.Decimal:
		return c.randomInt(t, fc, path)
	case row.Float, row.Double:
		return c.randomFloat(t, fc, path)
	case row.String, row.Bytes:
		return c.randomString(t, fc, path)
	case row.Timestamp, row.TimestampLTZ, row.Date:
		return c.randomPast(t, fc, path)
	}
	return connector.Errorf("fields."+f.Name, "datagen cannot generate %s values", t)
}

// randomInt draws an INT, BIGINT or DECIMAL uniformly from min to max,
// by default the whole type.
func (c *column) randomInt(t row.Type, fc FieldConfig, path func(string) string) error {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch t.ID {
	case row.Int:
		// TINYINT and SMALLINT draw within their own range.
		bits := t.IntBits()
		lo, hi = -1<<(bits-1), 1<<(bits-1)-1
	case row.BigInt:
		lo, hi = math.MinInt64, math.MaxInt64
	case row.Decimal:
		// Random DECIMALs are drawn as int64 unscaled values: all of
		// DECIMAL(18) and narrower, ±9223372036854775807 of a wider one.
		hi = math.MaxInt64
		if t.Precision <= row.MaxCompactDecimalPrecision {
			hi = int64(math.Pow10(t.Precision)) - 1
		}
		lo = -hi
	}
	if err := bounds(fc, t, path, parseInt, &lo, &hi); err != nil {
		return err
	}
	if hi < lo {
		return connector.Errorf(path("max"), "max %s is below min %s", intText(hi, t), intText(lo, t))
	}
	c.gen, c.lo, c.span = genInt, lo, uint64(hi)-uint64(lo)
	return nil
}

// randomFloat draws a FLOAT or DOUBLE uniformly from min to max, by
// default from 0 to 1.
func (c *column) randomFloat(t row.Type, fc FieldConfig, path func(string) string) error {
	lo, hi := 0.0, 1.0
	if err := bounds(fc, t, path, parseFloat, &lo, &hi); err != nil {
		return err
	}
	switch {
	case hi < lo:
		return connector.Errorf(path("max"), "max %v is below min %v (unset, min is 0 and max is 1)", hi, lo)
	case math.IsInf(hi-lo, 0):
		return connector.Errorf(path("max"), "the range from %v to %v is too wide to draw from", lo, hi)
	}
	c.gen, c.flo, c.fhi = genFloat, lo, hi
	return nil
}

// bounds reads the min and max options with parse into lo and hi, which
// keep their defaults when unset; a wrong value in each is reported.
func bounds[T any](fc FieldConfig, t row.Type, path func(string) string, parse func(string, row.Type) (T, error), lo, hi *T) error {
	var errs []error
	read := func(opt string, text *string, dst *T) {
		if text == nil {
			return
		}
		v, err := parse(*text, t)
		if err != nil {
			errs = append(errs, connector.Errorf(path(opt), "%v", err))
			return
		}
		*dst = v
	}
	read("min", fc.Min, lo)
	read("max", fc.Max, hi)
	return errors.Join(errs...)
}

// randomString draws STRING or BYTES values of the configured length
// (by default the smaller of defaultLength and the type's length).
func (c *column) randomString(t row.Type, fc FieldConfig, path func(string) string) error {
	c.gen = genString
	if t.ID == row.Bytes {
		c.gen = genBytes
	}
	c.length = defaultLength
	if t.Length > 0 {
		c.length = min(c.length, t.Length)
	}
	if fc.Length != nil {
		switch n := *fc.Length; {
		case n < 0 || n > maxLength:
			return connector.Errorf(path("length"), "want a length from 0 to %d, got %d", maxLength, n)
		case t.Length > 0 && n > t.Length:
			return connector.Errorf(path("length"), "%d is longer than %s holds", n, t)
		default:
			c.length = n
		}
	}
	return nil
}

// randomPast draws a TIMESTAMP, TIMESTAMP_LTZ or DATE up to max_past
// before now (DATE in whole days).
func (c *column) randomPast(t row.Type, fc FieldConfig, path func(string) string) error {
	c.gen = genPast
	c.unit = precisionUnit(t)
	var past time.Duration
	if fc.MaxPast != nil {
		past = *fc.MaxPast
	}
	c.span = uint64(past / time.Microsecond)
	if t.ID == row.Date {
		if past%day != 0 {
			return connector.Errorf(path("max_past"), "DATE values move by whole days: want a multiple of 24h, such as 30d")
		}
		c.span = uint64(past / day)
	}
	return nil
}

const day = 24 * time.Hour

// sequence resolves a sequence column.
func (c *column) sequence(f row.Field, fc FieldConfig, path func(string) string) error {
	t := f.Type
	temporal := timeTypes.has(t.ID)
	var errs []error
	if fc.Start == nil {
		errs = append(errs, connector.Errorf(path("start"), "missing: a sequence needs start and end"))
	}
	if fc.End == nil && !temporal {
		errs = append(errs, connector.Errorf(path("end"), "missing: a sequence needs start and end"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	switch t.ID {
	case row.Float, row.Double:
		start, err1 := parseFloat(*fc.Start, t)
		end, err2 := parseFloat(*fc.End, t)
		if err := optErrors(path, err1, err2); err != nil {
			return err
		}
		if end < start {
			return connector.Errorf(path("end"), "end %v is before start %v", end, start)
		}
		n := math.Floor(end - start)
		if n >= 1<<53 {
			return connector.Errorf(path("end"), "a %s sequence counts exactly only up to 2^53 values", t.ID)
		}
		c.gen, c.seq = genSeqFloat, sequence{fstart: start, count: uint64(n) + 1}
		return nil
	case row.Timestamp, row.TimestampLTZ, row.Date:
		return c.timeSequence(f, fc, path)
	}
	// INT, BIGINT, DECIMAL and STRING count by one.
	start, err1 := parseInt(*fc.Start, t)
	end, err2 := parseInt(*fc.End, t)
	if err := optErrors(path, err1, err2); err != nil {
		return err
	}
	if end < start {
		return connector.Errorf(path("end"), "end %s is before start %s", intText(end, t), intText(start, t))
	}
	if t.ID == row.String && t.Length > 0 {
		for _, v := range []int64{start, end} {
			if s := strconv.FormatInt(v, 10); len(s) > t.Length {
				return connector.Errorf(path("end"), "%s does not fit %s", s, t)
			}
		}
	}
	step := int64(1)
	if t.ID == row.Decimal {
		if t.Scale > row.MaxCompactDecimalPrecision {
			return connector.Errorf(path("kind"), "a sequence over %s counts by 1 = 10^%d units, past int64; use a scale of at most %d", t, t.Scale, row.MaxCompactDecimalPrecision)
		}
		step = int64(math.Pow10(t.Scale))
	}
	c.gen, c.seq = genSeqInt, sequence{start: start, step: step, count: seqCount(start, end, step)}
	return nil
}

// timeSequence resolves a TIMESTAMP, TIMESTAMP_LTZ or DATE sequence.
func (c *column) timeSequence(f row.Field, fc FieldConfig, path func(string) string) error {
	t := f.Type
	unit, stepUnit, defStep := precisionUnit(t), time.Microsecond, time.Second
	if t.ID == row.Date {
		stepUnit, defStep = day, day
	}
	step := defStep
	if fc.Step != nil {
		step = *fc.Step
	}
	var errs []error
	switch {
	case step <= 0:
		errs = append(errs, connector.Errorf(path("step"), "must be positive"))
	case step%stepUnit != 0 || (t.ID != row.Date && int64(step/time.Microsecond)%unit != 0):
		errs = append(errs, connector.Errorf(path("step"), "%v is finer than %s holds", step, t))
	}
	parse := func(opt, text string) int64 {
		v, err := parseTime(text, t)
		if err != nil {
			errs = append(errs, connector.Errorf(path(opt), "%v", err))
			return 0
		}
		if t.ID != row.Date && v%unit != 0 {
			errs = append(errs, connector.Errorf(path(opt), "%q is finer than %s holds", text, t))
		}
		return v
	}
	start, end := parse("start", *fc.Start), int64(0)
	if fc.End != nil {
		end = parse("end", *fc.End)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	q := sequence{start: start, step: int64(step / stepUnit)}
	if fc.End != nil {
		if end < start {
			return connector.Errorf(path("end"), "end %s is before start %s", *fc.End, *fc.Start)
		}
		q.count = seqCount(start, end, q.step)
	}
	c.gen, c.seq = genSeqInt, q
	return nil
}

// seqCount is the number of values start, start+step, ... up to end.
func seqCount(start, end, step int64) uint64 {
	n := (uint64(end)-uint64(start))/uint64(step) + 1
	if n == 0 { // the whole int64 range: 2^64 values, endless in practice
		n = math.MaxUint64
	}
	return n
}

func optErrors(path func(string) string, start, end error) error {
	var errs []error
	if start != nil {
		errs = append(errs, connector.Errorf(path("start"), "%v", start))
	}
	if end != nil {
		errs = append(errs, connector.Errorf(path("end"), "%v", end))
	}
	return errors.Join(errs...)
}

// parseInt reads an INT or BIGINT bound (STRING sequences count in
// BIGINT), or a DECIMAL as its unscaled value.
func parseInt(text string, t row.Type) (int64, error) {
	switch t.ID {
	case row.Decimal:
		u, err := row.ParseDecimal(strings.TrimSpace(text), t.Precision, t.Scale)
		if err != nil {
			return 0, fmt.Errorf("cannot parse %q as %s: %w", text, t, err)
		}
		return u, nil
	case row.Int:
		v, err := row.ParseText(text, row.Type{ID: row.Int, Precision: t.Precision})
		return v.Int64(), err
	}
	v, err := row.ParseText(text, row.Of(row.BigInt))
	return v.Int64(), err
}

func intText(v int64, t row.Type) string {
	if t.ID == row.Decimal {
		return row.DecimalValue(v, t.Scale).Text(t)
	}
	return strconv.FormatInt(v, 10)
}

func parseFloat(text string, t row.Type) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("cannot parse %q as %s: want a finite number", text, t)
	case t.ID == row.Float && math.Abs(v) > math.MaxFloat32:
		return 0, fmt.Errorf("%q is outside the range of FLOAT", text)
	}
	return v, nil
}

// parseTime reads a TIMESTAMP or TIMESTAMP_LTZ text as µs, a DATE as days.
func parseTime(text string, t row.Type) (int64, error) {
	v, err := row.ParseText(text, t.Nullable())
	if err != nil {
		return 0, err
	}
	if t.ID == row.Date {
		return int64(v.Days()), nil
	}
	return v.Micros(), nil
}

// precisionUnit is the smallest step, in µs, a TIMESTAMP(p) holds; values
// hold µs, so p above 6 counts as 6.
func precisionUnit(t row.Type) int64 {
	if t.ID == row.Date {
		return 1
	}
	return int64(math.Pow10(max(6-t.Precision, 0)))
}
