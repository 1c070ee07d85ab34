// Package row is the data model every part of etld shares: types, schemas,
// values, rows, row kinds and batches.
package row

import (
	"fmt"
	"strconv"
	"strings"
)

// TypeID names a SQL type family.
type TypeID uint8

// The SQL types etld knows. The zero TypeID is Null: the type of the NULL
// literal before it is given a context.
const (
	Null TypeID = iota
	Boolean
	Int
	BigInt
	Float
	Double
	Decimal
	String
	Bytes
	Date
	Timestamp
	TimestampLTZ
	// The composite types (nested.go): ARRAY<T>, MAP<K, V> and ROW<...>.
	// The SQL ROW type is Struct here because Row is a table's row.
	Array
	Map
	Struct
	// Time is TIME(p), a time of day (time.go); after the composite
	// types so that the codec's type bytes of older state stay as they are.
	Time
)

var typeNames = [...]string{
	Null:         "NULL",
	Boolean:      "BOOLEAN",
	Int:          "INT",
	BigInt:       "BIGINT",
	Float:        "FLOAT",
	Double:       "DOUBLE",
	Decimal:      "DECIMAL",
	String:       "STRING",
	Bytes:        "BYTES",
	Date:         "DATE",
	Timestamp:    "TIMESTAMP",
	TimestampLTZ: "TIMESTAMP_LTZ",
	Array:        "ARRAY",
	Map:          "MAP",
	Struct:       "ROW",
	Time:         "TIME",
}

func (id TypeID) String() string {
	if int(id) < len(typeNames) {
		return typeNames[id]
	}
	return fmt.Sprintf("TypeID(%d)", id)
}

// Numeric reports whether values of the type take part in arithmetic.
func (id TypeID) Numeric() bool {
	switch id {
	case Int, BigInt, Float, Double, Decimal:
		return true
	}
	return false
}

// Integral reports whether the type holds whole numbers.
func (id TypeID) Integral() bool { return id == Int || id == BigInt }

// TINYINT and SMALLINT are of the Int family, told apart by their
// Precision, the decimal digits Flink gives them (3 and 5); INT has
// Precision 0 (it holds 10 digits). Their values are Int values within the
// narrower range, so every consumer of INT reads them unchanged and only
// what must keep the range (CAST, arithmetic, the readers, the type's
// name) looks at the width.
const (
	TinyIntDigits  = 3
	SmallIntDigits = 5
)

// TinyInt and SmallInt are the nullable TINYINT and SMALLINT.
var (
	TinyInt  = Type{ID: Int, Precision: TinyIntDigits}
	SmallInt = Type{ID: Int, Precision: SmallIntDigits}
)

// IntBits is the width of an integer type: 8 for TINYINT, 16 for
// SMALLINT, 32 for INT, 64 for BIGINT; 0 for any other type.
func (t Type) IntBits() int {
	switch {
	case t.ID == BigInt:
		return 64
	case t.ID != Int:
		return 0
	case t.Precision == TinyIntDigits:
		return 8
	case t.Precision == SmallIntDigits:
		return 16
	}
	return 32
}

// IntDigits is the decimal precision of an integer type as Flink counts
// it (TINYINT 3, SMALLINT 5, INT 10, BIGINT 19): the DECIMAL(p, 0) it
// merges with.
func (t Type) IntDigits() int {
	switch t.IntBits() {
	case 8:
		return 3
	case 16:
		return 5
	case 32:
		return 10
	}
	return 19
}

// WrapInt brings i into the range of the integer type t as Java's
// narrowing conversion does (two's complement, the high bits dropped):
// 1000 as TINYINT is -24.
func (t Type) WrapInt(i int64) int64 {
	switch t.IntBits() {
	case 8:
		return int64(int8(i))
	case 16:
		return int64(int16(i))
	case 32:
		return int64(int32(i))
	}
	return i
}

// Temporal reports whether the type holds a point in time.
func (id TypeID) Temporal() bool { return id == Timestamp || id == TimestampLTZ || id == Date }

// MaxDecimalPrecision is the largest DECIMAL precision, Flink's
// DecimalType.MAX_PRECISION: the unscaled value is an Int128, held inline
// in a Value when it fits an int64 (always for DECIMAL(18) and narrower).
const MaxDecimalPrecision = 38

// MaxCompactDecimalPrecision is the largest precision whose every value
// fits an int64 unscaled (Flink's DecimalData "compact" decimals).
const MaxCompactDecimalPrecision = 18

// Type is a SQL type with its parameters and nullability.
type Type struct {
	ID TypeID
	// Precision is the DECIMAL precision or the fractional-second digits of
	// a TIMESTAMP; Length the n of VARCHAR(n) (0 = unbounded).
	Precision int
	Scale     int
	Length    int
	NotNull   bool
	// nest holds the element, key and field types of ARRAY, MAP and ROW,
	// interned (nested.go) so that equal types have equal pointers and
	// Type stays comparable with ==.
	nest *nested
}

// Of returns the nullable type with the given id and default parameters.
func Of(id TypeID) Type {
	t := Type{ID: id}
	switch id {
	case Decimal:
		t.Precision, t.Scale = 10, 0
	case Timestamp, TimestampLTZ:
		t.Precision = 3
	}
	return t
}

// Nullable returns t without its NOT NULL constraint.
func (t Type) Nullable() Type { t.NotNull = false; return t }

func (t Type) String() string {
	var b strings.Builder
	switch t.ID {
	case Decimal:
		fmt.Fprintf(&b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Timestamp, TimestampLTZ, Time:
		fmt.Fprintf(&b, "%s(%d)", t.ID, t.Precision)
	case Array, Map, Struct:
		b.WriteString(t.nest.text)
	case Int:
		switch t.IntBits() {
		case 8:
			b.WriteString("TINYINT")
		case 16:
			b.WriteString("SMALLINT")
		default:
			b.WriteString("INT")
		}
	case String:
		if t.Length > 0 {
			fmt.Fprintf(&b, "VARCHAR(%d)", t.Length)
		} else {
			b.WriteString("STRING")
		}
	default:
		b.WriteString(t.ID.String())
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
	return b.String()
}

// ParseType reads a type name as written in a schema or a CAST: INT,
// VARCHAR(10), DECIMAL(10, 2), TIMESTAMP(3), TIMESTAMP_LTZ(3), TIMESTAMP(3)
// WITH LOCAL TIME ZONE, each optionally followed by NOT NULL.
func ParseType(s string) (Type, error) {
	src := strings.TrimSpace(s)
	if isNestedTypeText(src) {
		return parseNestedType(src)
	}
	up := strings.ToUpper(src)
	var t Type
	if rest, ok := strings.CutSuffix(up, "NOT NULL"); ok {
		t.NotNull = true
		up = strings.TrimSpace(rest)
	}
	ltz := false
	if rest, ok := strings.CutSuffix(up, "WITH LOCAL TIME ZONE"); ok {
		ltz = true
		up = strings.TrimSpace(rest)
	}
	name, nums, err := splitTypeParams(src, up)
	if err != nil {
		return Type{}, err
	}
	maxParams := 0
	switch name {
	case "BOOLEAN", "BOOL":
		t.ID = Boolean
	case "INT", "INTEGER":
		t.ID = Int
	case "TINYINT":
		t.ID, t.Precision = Int, TinyIntDigits
	case "SMALLINT":
		t.ID, t.Precision = Int, SmallIntDigits
	case "BIGINT":
		t.ID = BigInt
	case "FLOAT", "REAL":
		t.ID = Float
	case "DOUBLE", "DOUBLE PRECISION":
		t.ID = Double
	case "DECIMAL", "DEC", "NUMERIC":
		t.ID, t.Precision, t.Scale, maxParams = Decimal, 10, 0, 2
		if len(nums) > 0 {
			t.Precision = nums[0]
		}
		if len(nums) > 1 {
			t.Scale = nums[1]
		}
		if t.Precision < 1 || t.Precision > MaxDecimalPrecision {
			return Type{}, fmt.Errorf("type %q: DECIMAL precision must be between 1 and %d", src, MaxDecimalPrecision)
		}
		if t.Scale > t.Precision {
			return Type{}, fmt.Errorf("type %q: DECIMAL scale %d exceeds precision %d", src, t.Scale, t.Precision)
		}
	case "STRING", "VARCHAR", "CHAR", "TEXT":
		t.ID, maxParams = String, 1
		if len(nums) > 0 {
			t.Length = nums[0]
		}
	case "BYTES", "VARBINARY", "BINARY":
		t.ID, maxParams = Bytes, 1
		if len(nums) > 0 {
			t.Length = nums[0]
		}
	case "DATE":
		t.ID = Date
	case "TIME":
		t.ID, maxParams = Time, 1
		if len(nums) > 0 {
			t.Precision = nums[0]
		}
		if t.Precision > 9 {
			return Type{}, fmt.Errorf("type %q: TIME precision must be between 0 and 9", src)
		}
		// Flink keeps a TIME in milliseconds and types TIME(6) as TIME(3).
		t.Precision = min(t.Precision, 3)
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		t.ID, t.Precision, maxParams = Timestamp, 3, 1
		if name == "TIMESTAMP_LTZ" || ltz {
			t.ID = TimestampLTZ
		}
		if len(nums) > 0 {
			t.Precision = nums[0]
		}
		if t.Precision > 9 {
			return Type{}, fmt.Errorf("type %q: TIMESTAMP precision must be between 0 and 9", src)
		}
	case "":
		return Type{}, fmt.Errorf("missing type")
	default:
		return Type{}, fmt.Errorf("unknown type %q (want one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR(n), BYTES, DATE, TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p), ARRAY<T>, MAP<K, V>, ROW<name T, ...>)", src)
	}
	if ltz && t.ID != TimestampLTZ {
		return Type{}, fmt.Errorf("type %q: WITH LOCAL TIME ZONE applies only to TIMESTAMP", src)
	}
	if len(nums) > maxParams {
		return Type{}, fmt.Errorf("type %q: too many parameters", src)
	}
	return t, nil
}

// splitTypeParams splits up, a scalar type name in upper case without
// its NOT NULL and time zone suffixes, into the name and its
// parenthesised integer parameters: DECIMAL(10, 2) is DECIMAL and
// [10 2]. src is the type as written, for the errors.
func splitTypeParams(src, up string) (string, []int, error) {
	name, params := up, ""
	if i := strings.IndexByte(up, '('); i >= 0 {
		if !strings.HasSuffix(up, ")") {
			return "", nil, fmt.Errorf("type %q: unclosed parenthesis", src)
		}
		name, params = strings.TrimSpace(up[:i]), up[i+1:len(up)-1]
	}
	var nums []int
	if params != "" {
		for _, p := range strings.Split(params, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 {
				return "", nil, fmt.Errorf("type %q: parameter %q is not a non-negative integer", src, strings.TrimSpace(p))
			}
			nums = append(nums, n)
		}
	}
	return name, nums, nil
}

// Field is a named, typed column.
type Field struct {
	Name string
	Type Type
}

// Schema is an ordered list of columns.
type Schema struct {
	Fields []Field
}

// NewSchema builds a schema from fields.
func NewSchema(fields ...Field) Schema { return Schema{Fields: fields} }

// Len is the number of columns.
func (s Schema) Len() int { return len(s.Fields) }

// Index returns the position of the column named name, compared without
// regard to case as SQL identifiers are, or -1.
func (s Schema) Index(name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// Names lists the column names in order.
func (s Schema) Names() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

func (s Schema) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		parts[i] = f.Name + " " + f.Type.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
