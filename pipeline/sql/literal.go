package sql

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
)

func notNull(id row.TypeID) row.Type {
	t := row.Of(id)
	t.NotNull = true
	return t
}

// numberLiteral converts a number token; sign is "-" when a minus sign
// written at signPos belongs to it.
func (p *parser) numberLiteral(t token, signPos Pos, sign string) (Expr, *Error) {
	text := sign + t.text
	lit := &Literal{At: signPos, Text: text}
	switch t.kind {
	case tokInt:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			// Flink (Calcite) refuses it too: "Numeric literal out of range".
			return nil, p.errAt(t, "integer "+text+" is out of range for BIGINT")
		}
		lit.Kind = LitInt
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			lit.Value, lit.Type = row.IntValue(int32(n)), notNull(row.Int)
		} else {
			lit.Value, lit.Type = row.BigIntValue(n), notNull(row.BigInt)
		}
	case tokDecimal:
		intPart, frac, _ := strings.Cut(t.text, ".")
		intPart = strings.TrimLeft(intPart, "0")
		scale := len(frac)
		prec := max(len(intPart)+scale, 1)
		if prec > row.MaxDecimalPrecision {
			return nil, p.errAt(t, "decimal "+text+" has "+strconv.Itoa(prec)+" digits; DECIMAL holds at most "+
				strconv.Itoa(row.MaxDecimalPrecision)+" (write it with an exponent, 1.5E3, for a DOUBLE)")
		}
		u, err := row.ParseDecimal128(text, prec, scale)
		if err != nil {
			return nil, p.errAt(t, "decimal "+text+": "+err.Error())
		}
		lit.Kind, lit.Value = LitDecimal, row.Decimal128Value(u, scale)
		lit.Type = row.Type{ID: row.Decimal, Precision: prec, Scale: scale, NotNull: true}
	default:
		text = strings.ToUpper(text) // 1.5e3 and 1.5E3 are one literal
		lit.Text = text
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, p.errAt(t, "number "+sign+t.text+" is out of range for DOUBLE")
		}
		lit.Kind, lit.Value, lit.Type = LitDouble, row.DoubleValue(f), notNull(row.Double)
	}
	return lit, nil
}

func bytesLiteral(t token) *Literal {
	b, _ := hex.DecodeString(t.text) // the lexer checked the digits
	return &Literal{At: t.pos, Kind: LitBytes, Text: t.text, Value: row.BytesValue(b), Type: notNull(row.Bytes)}
}

// parseTypedLiteral reads DATE '...', TIMESTAMP '...' and TIME '...'.
func (p *parser) parseTypedLiteral() (Expr, *Error) {
	kw := p.next()
	s := p.next()
	switch kw.up {
	case "DATE":
		v, err := row.ParseText(s.text, row.Of(row.Date))
		if err != nil || strings.TrimSpace(s.text) != s.text {
			return nil, p.errAt(s, "invalid DATE literal '"+s.text+"': want 'YYYY-MM-DD'")
		}
		return &Literal{At: kw.pos, Kind: LitDate, Text: s.text, Value: v, Type: notNull(row.Date)}, nil
	case "TIMESTAMP":
		prec, ok := timestampPrecision(s.text)
		v, err := row.ParseTimestamp(s.text, row.Timestamp)
		if !ok || err != nil {
			return nil, p.errAt(s, "invalid TIMESTAMP literal '"+s.text+"': want 'YYYY-MM-DD HH:MM:SS[.fraction]'")
		}
		typ := notNull(row.Timestamp)
		typ.Precision = prec
		return &Literal{At: kw.pos, Kind: LitTimestamp, Text: s.text, Value: v, Type: typ}, nil
	}
	// TIME 'HH:MM:SS[.fraction]', its precision the fraction digits (at
	// most 3, the milliseconds Flink keeps).
	_, frac, _ := strings.Cut(s.text, ".")
	typ := notNull(row.Time)
	typ.Precision = min(len(frac), 3)
	v, err := row.ParseText(s.text, typ)
	if err != nil || strings.TrimSpace(s.text) != s.text || strings.Count(s.text, ":") != 2 {
		return nil, p.errAt(s, "invalid TIME literal '"+s.text+"': want 'HH:MM:SS[.fraction]'")
	}
	return &Literal{At: kw.pos, Kind: LitTime, Text: s.text, Value: v, Type: typ}, nil
}

// timestampPrecision checks the shape Flink accepts for a TIMESTAMP
// literal, 'YYYY-MM-DD HH:MM[:SS[.f...]]', and returns the number of
// fraction digits.
func timestampPrecision(s string) (int, bool) {
	if len(s) < len("2006-01-02 15:04") || s[10] != ' ' {
		return 0, false
	}
	_, clock, _ := strings.Cut(s, " ")
	if strings.Trim(clock, "0123456789:.") != "" {
		return 0, false // no zone or 'T': Flink's literal is a wall clock
	}
	_, frac, hasFrac := strings.Cut(clock, ".")
	if !hasFrac {
		return 0, true
	}
	if len(frac) == 0 || len(frac) > 9 {
		return 0, false
	}
	for i := 0; i < len(frac); i++ {
		if !isDigit(frac[i]) {
			return 0, false
		}
	}
	return len(frac), true
}

// intervalUnits are the units INTERVAL accepts; plural first so that a
// misspelling like SECS suggests SECONDS.
var intervalUnits = []string{"SECONDS", "SECOND", "MINUTES", "MINUTE", "HOURS", "HOUR", "DAYS", "DAY", "MONTHS", "MONTH", "YEARS", "YEAR"}

func intervalUnit(up string) IntervalUnit {
	switch strings.TrimSuffix(up, "S") {
	case "DAY":
		return Day
	case "HOUR":
		return Hour
	case "MINUTE":
		return Minute
	case "SECOND":
		return Second
	case "YEAR":
		return Year
	case "MONTH":
		return Month
	}
	return 0
}

// parseInterval reads INTERVAL 'text' unit [(p)] [TO unit [(p)]].
func (p *parser) parseInterval() (Expr, *Error) {
	kw := p.next()
	s := p.tok()
	if s.kind != tokString {
		if s.kind == tokInt || s.kind == tokDecimal {
			return nil, p.errAt(s, "interval value must be quoted: INTERVAL '"+s.text+"' SECOND")
		}
		return nil, p.expected("a quoted value after INTERVAL, as in INTERVAL '5' SECOND", "string")
	}
	p.next()
	lit := &IntervalLit{At: kw.pos, Text: s.text}
	if u := p.tok(); u.is("WEEK") || u.is("QUARTER") {
		return p.weekOrQuarter(lit, s, u)
	}
	unit, lead, err := p.intervalUnit()
	if err != nil {
		return nil, err
	}
	lit.Unit = unit
	if t := p.tok(); t.is("TO") {
		p.next()
		to, _, err := p.intervalUnit()
		if err != nil {
			return nil, err
		}
		switch {
		case unit == Year || to == Year || unit == Month || to == Month:
			if unit != Year || to != Month {
				return nil, p.errAt(t, "INTERVAL "+unit.String()+" TO "+to.String()+": the only year-month range is YEAR TO MONTH")
			}
		case to <= unit:
			return nil, p.errAt(t, "INTERVAL "+unit.String()+" TO "+to.String()+": the unit after TO must be smaller than "+unit.String())
		}
		lit.To = to
	}
	if lit.YearMonth() {
		m, msg := parseYearMonthText(s.text, lit.Unit, lit.To, lead)
		if msg != "" {
			return nil, p.errAt(s, "invalid interval '"+s.text+"' for "+intervalName(lit)+": "+msg)
		}
		lit.Months = m
		return lit, nil
	}
	d, msg := parseIntervalText(s.text, lit.Unit, lit.To, lead)
	if msg != "" {
		return nil, p.errAt(s, "invalid interval '"+s.text+"' for "+intervalName(lit)+": "+msg)
	}
	lit.Value = d
	return lit, nil
}

// weekOrQuarter completes INTERVAL 'n' WEEK (n * 7 days, a day-time
// interval) or INTERVAL 'n' QUARTER (n * 3 months), as Calcite reads
// them; n is a signed whole number and no TO follows.
func (p *parser) weekOrQuarter(lit *IntervalLit, s, u token) (Expr, *Error) {
	p.next()
	text := strings.TrimSpace(s.text)
	digits := strings.TrimLeft(text, "+-")
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || len(text)-len(digits) > 1 || n > math.MaxInt32 {
		return nil, p.errAt(s, "invalid interval '"+s.text+"' for "+u.up+": want a whole number of "+strings.ToLower(u.up)+"s")
	}
	if strings.HasPrefix(text, "-") {
		n = -n
	}
	if t := p.tok(); t.is("TO") {
		return nil, p.errAt(t, "INTERVAL "+u.up+" takes no TO")
	}
	if u.up == "WEEK" {
		lit.Unit, lit.Value, lit.Text = Day, time.Duration(n)*7*unitDuration[Day], strconv.FormatInt(n*7, 10)
		return lit, nil
	}
	lit.Unit, lit.Months, lit.Text = Month, n*3, strconv.FormatInt(n*3, 10)
	return lit, nil
}

func intervalName(l *IntervalLit) string {
	if l.To != 0 {
		return l.Unit.String() + " TO " + l.To.String()
	}
	return l.Unit.String()
}

// intervalUnit reads a unit and its optional precision, returning the
// leading precision (0 when not written).
func (p *parser) intervalUnit() (IntervalUnit, int, *Error) {
	t := p.tok()
	if t.kind != tokWord {
		return 0, 0, p.expected("an interval unit (SECOND, MINUTE, HOUR or DAY)", intervalUnits...)
	}
	u := intervalUnit(t.up)
	if u == 0 {
		switch strings.TrimSuffix(t.up, "S") {
		case "QUARTER", "WEEK":
			return 0, 0, p.errAt(t, "interval unit "+t.up+" is not supported: use SECOND, MINUTE, HOUR, DAY, MONTH or YEAR")
		}
		return 0, 0, p.errAt(t, "unknown interval unit \""+t.text+"\""+didYouMean(t.up, intervalUnits), intervalUnits...)
	}
	p.next()
	prec := 0
	if open := p.tok(); open.isPunct("(") {
		p.next()
		n := p.tok()
		v, err := strconv.Atoi(n.text)
		if n.kind != tokInt || err != nil || v < 1 || v > 10 {
			return 0, 0, p.expected("a precision from 1 to 10", "precision")
		}
		p.next()
		prec = v
		if p.acceptPunct(",") { // SECOND(p, fractional precision)
			if p.tok().kind != tokInt {
				return 0, 0, p.expected("a fractional second precision", "precision")
			}
			p.next()
		}
		if err := p.expectClose(")", "(", open.pos); err != nil {
			return 0, 0, err
		}
	}
	return u, prec, nil
}

var unitDuration = [...]time.Duration{Day: 24 * time.Hour, Hour: time.Hour, Minute: time.Minute, Second: time.Second}

// parseIntervalText reads an interval's text for unit [TO to]: a signed
// leading field, then the smaller fields separated as SQL writes them
// ('1 02:03:04.5' for DAY TO SECOND). It returns a message when the text
// does not fit. lead is the declared leading precision (0: unchecked).
func parseIntervalText(text string, unit, to IntervalUnit, lead int) (time.Duration, string) {
	s := strings.TrimSpace(text)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	last := unit
	if to != 0 {
		last = to
	}
	var total time.Duration
	for u := unit; u <= last; u++ {
		sep := ""
		switch {
		case u == last:
		case u == Day:
			sep = " "
		default:
			sep = ":"
		}
		field := s
		if sep != "" {
			var ok bool
			field, s, ok = strings.Cut(s, sep)
			if !ok {
				return 0, "want " + intervalShape(unit, last)
			}
		}
		frac := ""
		if u == Second {
			field, frac, _ = strings.Cut(field, ".")
		}
		if field == "" || len(field) > 12 || strings.Trim(field, "0123456789") != "" {
			return 0, "want " + intervalShape(unit, last)
		}
		n, _ := strconv.ParseInt(field, 10, 64)
		if u == unit && lead > 0 && len(strings.TrimLeft(field, "0")) > lead {
			return 0, "the value has more digits than the precision " + strconv.Itoa(lead)
		}
		if u != unit {
			limit := int64(60)
			if u == Hour {
				limit = 24
			}
			if n >= limit {
				return 0, strings.ToLower(u.String()) + " field " + field + " is out of range (0 to " + strconv.FormatInt(limit-1, 10) + ")"
			}
		}
		if n > int64(math.MaxInt64/unitDuration[u]) || total > math.MaxInt64-time.Duration(n)*unitDuration[u] {
			return 0, "the interval is too long"
		}
		total += time.Duration(n) * unitDuration[u]
		if frac != "" || strings.HasSuffix(text, ".") {
			if len(frac) == 0 || len(frac) > 3 || strings.Trim(frac, "0123456789") != "" {
				return 0, "fractions of a second go to milliseconds: at most 3 digits after the point"
			}
			ms, _ := strconv.Atoi((frac + "00")[:3])
			total += time.Duration(ms) * time.Millisecond
		}
	}
	if neg {
		total = -total
	}
	return total, ""
}

func intervalShape(unit, last IntervalUnit) string {
	parts := map[IntervalUnit]string{Day: "D", Hour: "H", Minute: "M", Second: "S"}
	var b strings.Builder
	b.WriteString("'[-]")
	for u := unit; u <= last; u++ {
		if u > unit {
			if u == Hour && unit == Day {
				b.WriteByte(' ')
			} else {
				b.WriteByte(':')
			}
		}
		b.WriteString(parts[u])
	}
	if last == Second {
		b.WriteString("[.fff]")
	}
	b.WriteByte('\'')
	return b.String()
}

// didYouMean suggests the closest of candidates to s, or "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", 4
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD && d < len(s) {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func itoa(n int) string { return strconv.Itoa(n) }

func lower(s string) string { return strings.ToLower(s) }

func joinWords(ws []string) string { return strings.Join(ws, ", ") }

// parseYearMonthText reads a year-month interval's text: '[-]Y' for YEAR,
// '[-]M' for MONTH, '[-]Y-M' for YEAR TO MONTH (months 0 to 11). It
// returns the months, or a message when the text does not fit.
func parseYearMonthText(text string, unit, to IntervalUnit, lead int) (int64, string) {
	s := strings.TrimSpace(text)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	shape := map[IntervalUnit]string{Year: "'[-]Y'", Month: "'[-]M'"}[unit]
	if to == Month {
		shape = "'[-]Y-M'"
	}
	num := func(f string) (int64, bool) {
		if f == "" || len(f) > 9 || strings.Trim(f, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(f, 10, 64)
		return n, err == nil
	}
	lf, mf := s, ""
	if to == Month {
		var ok bool
		if lf, mf, ok = strings.Cut(s, "-"); !ok {
			return 0, "want " + shape
		}
	}
	n, ok := num(lf)
	if !ok {
		return 0, "want " + shape
	}
	if lead > 0 && len(strings.TrimLeft(lf, "0")) > lead {
		return 0, "the value has more digits than the precision " + strconv.Itoa(lead)
	}
	months := n
	if unit == Year {
		months = n * 12
	}
	if to == Month {
		m, ok := num(mf)
		if !ok {
			return 0, "want " + shape
		}
		if m > 11 {
			return 0, "month field " + mf + " is out of range (0 to 11)"
		}
		months += m
	}
	if neg {
		months = -months
	}
	return months, ""
}
