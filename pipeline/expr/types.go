package expr

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// typeInterval is the type of a day-time interval while compiling. It never
// leaves the package: an interval is only an operand of timestamp
// arithmetic. Its values are BIGINT microseconds.
const typeInterval row.TypeID = 200

// typeIntervalYM is the type of a year-month interval while compiling,
// held as a BIGINT number of months. Like typeInterval it never leaves
// the compiler.
const typeIntervalYM row.TypeID = 201

func isInterval(id row.TypeID) bool { return id == typeInterval || id == typeIntervalYM }

const (
	maxPrec = row.MaxDecimalPrecision
	// minAdjustedScale is the number of fraction digits Flink keeps at
	// least when a DECIMAL result would exceed the maximum precision.
	minAdjustedScale = 6
)

func decimalType(p, s int) row.Type { return row.Type{ID: row.Decimal, Precision: p, Scale: s} }

// decimalParams is the (precision, scale) an exact numeric type takes part
// in DECIMAL arithmetic with, as in Flink: TINYINT is DECIMAL(3, 0),
// SMALLINT DECIMAL(5, 0), INT DECIMAL(10, 0) and BIGINT DECIMAL(19, 0).
func decimalParams(t row.Type) (p, s int) {
	if t.ID.Integral() {
		return t.IntDigits(), 0
	}
	return t.Precision, t.Scale
}

// adjustDecimal is Flink's LogicalTypeMerging.adjustPrecisionScale: when
// a result needs more than 38 digits, the scale gives way (down to 6
// fraction digits, or the scale itself when smaller) so the integer part
// survives.
func adjustDecimal(p, s int) row.Type {
	if p <= maxPrec {
		return decimalType(max(p, 1), s)
	}
	digits := p - s
	return decimalType(maxPrec, max(maxPrec-digits, min(s, minAdjustedScale)))
}

func addDecimalType(p1, s1, p2, s2 int) row.Type {
	s := max(s1, s2)
	return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
}

func mulDecimalType(p1, s1, p2, s2 int) row.Type {
	return adjustDecimal(p1+p2+1, s1+s2)
}

func divDecimalType(p1, s1, p2, s2 int) row.Type {
	s := max(6, s1+p2+1)
	return adjustDecimal(p1-s1+s2+s, s)
}

func modDecimalType(p1, s1, p2, s2 int) row.Type {
	s := max(s1, s2)
	return adjustDecimal(min(p1-s1, p2-s2)+s, s)
}

// decimalMayOverflow reports whether op's exact result type needs more
// than 38 digits, so that adjustDecimal cut it and a result may not fit.
func decimalMayOverflow(op byte, p1, s1, p2, s2 int) bool {
	var p int
	switch op {
	case '+', '-':
		p = max(p1-s1, p2-s2) + max(s1, s2) + 1
	case '*':
		p = p1 + p2 + 1
	case '/':
		p = p1 - s1 + s2 + max(6, s1+p2+1)
	case '%':
		p = min(p1-s1, p2-s2) + max(s1, s2)
	}
	return p > maxPrec
}

// roundDecimalType is Flink's findRoundDecimalType.
func roundDecimalType(p, s, r int) row.Type {
	switch {
	case r >= s:
		return decimalType(p, s)
	case r < 0:
		return decimalType(min(maxPrec, 1+p-s), 0)
	}
	return decimalType(min(maxPrec, 1+p-s+r), r)
}

// commonExactType is Flink's createCommonExactNumericType: the narrowest
// exact type holding both.
func commonExactType(a, b row.Type) row.Type {
	if a.ID != row.Decimal && b.ID != row.Decimal {
		// The wider integer type, its nullability dropped.
		if b.IntBits() > a.IntBits() {
			a = b
		}
		return row.Type{ID: a.ID, Precision: a.Precision}
	}
	p1, s1 := decimalParams(a)
	p2, s2 := decimalParams(b)
	// Flink's createCommonExactNumericType: the integer digits first, the
	// fraction digits with what is left of 38.
	d := min(max(p1-s1, p2-s2), maxPrec)
	s := min(max(s1, s2), maxPrec-d)
	return decimalType(d+s, s)
}

// commonType is the type both a and b convert to without loss, as Flink's
// LogicalTypeMerging.findCommonType: NULL gives way to anything, numbers
// widen (an exact type meeting an approximate one becomes approximate,
// DECIMAL with FLOAT becomes DOUBLE), strings take the longer length,
// TIMESTAMP meets TIMESTAMP_LTZ as TIMESTAMP_LTZ. etld also lets DATE meet
// TIMESTAMP as TIMESTAMP. The result is NOT NULL only when both are.
func commonType(a, b row.Type) (row.Type, bool) {
	notNull := a.NotNull && b.NotNull
	t, ok := commonTypeNullable(a, b)
	t.NotNull = notNull
	return t, ok
}

func commonTypeNullable(a, b row.Type) (row.Type, bool) {
	a.NotNull, b.NotNull = false, false
	switch {
	case a.ID == row.Null:
		return b, true
	case b.ID == row.Null:
		return a, true
	case a == b:
		return a, true
	}
	switch {
	case a.ID.Numeric() && b.ID.Numeric():
		exactA, exactB := !isApprox(a.ID), !isApprox(b.ID)
		switch {
		case exactA && exactB:
			return commonExactType(a, b), true
		case a.ID == row.Double || b.ID == row.Double || a.ID == row.Decimal || b.ID == row.Decimal:
			return row.Type{ID: row.Double}, true
		}
		return row.Type{ID: row.Float}, true
	case a.ID == row.String && b.ID == row.String, a.ID == row.Bytes && b.ID == row.Bytes:
		if a.Length == 0 || b.Length == 0 {
			return row.Type{ID: a.ID}, true
		}
		return row.Type{ID: a.ID, Length: max(a.Length, b.Length)}, true
	case isTimestamp(a.ID) && isTimestamp(b.ID):
		id := row.Timestamp
		if a.ID == row.TimestampLTZ || b.ID == row.TimestampLTZ {
			id = row.TimestampLTZ
		}
		return row.Type{ID: id, Precision: max(a.Precision, b.Precision)}, true
	case a.ID == b.ID && a.ID.Nested():
		return commonNested(a, b)
	case a.ID == row.Date && isTimestamp(b.ID):
		return b, true
	case isTimestamp(a.ID) && b.ID == row.Date:
		return a, true
	case a.ID == b.ID:
		return a, true
	}
	return row.Type{}, false
}

// CommonType is the type a set of types (the branches of a CASE, the
// columns of UNION ALL inputs) converts to, or an error naming the two
// types that have none.
func CommonType(types ...row.Type) (row.Type, error) {
	if len(types) == 0 {
		return row.Type{}, fmt.Errorf("no types")
	}
	t := types[0]
	for _, u := range types[1:] {
		c, ok := commonType(t, u)
		if !ok {
			return row.Type{}, fmt.Errorf("%s and %s have no common type", t, u)
		}
		t = c
	}
	return t, nil
}

func isApprox(id row.TypeID) bool    { return id == row.Float || id == row.Double }
func isTimestamp(id row.TypeID) bool { return id == row.Timestamp || id == row.TimestampLTZ }

// typeName renders a type for messages, interval included.
func typeName(t row.Type) string {
	switch t.ID {
	case typeInterval, typeIntervalYM:
		return "INTERVAL"
	case row.Null:
		return "NULL"
	}
	return t.Nullable().String()
}

// arithType is the result type of a + - * / % b for numeric operands, as
// Flink derives it: INT op INT is INT (division is integer division),
// exact op DECIMAL follows Flink's DECIMAL rules, anything with FLOAT or
// DOUBLE is approximate. MOD of two integers has the type of the divisor.
func arithType(op byte, a, b row.Type) row.Type {
	var t row.Type
	switch {
	case a.ID == row.Decimal || b.ID == row.Decimal:
		if isApprox(a.ID) || isApprox(b.ID) {
			t = row.Type{ID: row.Double}
			break
		}
		p1, s1 := decimalParams(a)
		p2, s2 := decimalParams(b)
		if op == '%' && s1 == 0 && s2 == 0 {
			// Flink's deriveDecimalModType, as Calcite's: MOD of two
			// scale-0 numbers has the divisor's type. An INT or BIGINT
			// divisor then makes it integer MOD of the operands' Java
			// long values (CAST(d AS BIGINT), the low 64 bits), as
			// Flink's generated code does.
			t = b
			break
		}
		switch op {
		case '+', '-':
			t = addDecimalType(p1, s1, p2, s2)
		case '*':
			t = mulDecimalType(p1, s1, p2, s2)
		case '/':
			t = divDecimalType(p1, s1, p2, s2)
		case '%':
			t = modDecimalType(p1, s1, p2, s2)
		}
		if decimalMayOverflow(op, p1, s1, p2, s2) {
			// Only a result whose type was cut to 38 digits can overflow
			// (the unadjusted types bound every result); the overflow is
			// NULL, so the type says it may be.
			return t
		}
	case op == '%' && a.ID.Integral() && b.ID.Integral():
		t = row.Type{ID: b.ID, Precision: b.Precision}
	default:
		t, _ = commonTypeNullable(a, b)
	}
	t.NotNull = a.NotNull && b.NotNull
	return t
}
