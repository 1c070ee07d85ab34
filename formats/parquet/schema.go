package parquet

import (
	"fmt"
	"math"
	"reflect"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/etld/etld/pipeline/row"
)

// The Parquet schema of a SQL schema, as Flink's ParquetSchemaConverter
// and the Parquet specification's logical types lay it out:
//
//	BOOLEAN                 BOOLEAN
//	TINYINT, SMALLINT, INT  INT32 with INT(8), INT(16), INT(32)
//	BIGINT                  INT64
//	FLOAT, DOUBLE           FLOAT, DOUBLE
//	DECIMAL(p, s)           DECIMAL(p, s) on INT32 (p <= 9), INT64 (p <= 18)
//	                        or the fewest FIXED_LEN_BYTE_ARRAY bytes
//	STRING                  BYTE_ARRAY STRING, dictionary encoded
//	BYTES                   BYTE_ARRAY
//	DATE                    INT32 DATE
//	TIME(p)                 INT32 TIME(MILLIS), local
//	TIMESTAMP(p)            INT64 TIMESTAMP(unit), isAdjustedToUTC false
//	TIMESTAMP_LTZ(p)        INT64 TIMESTAMP(unit), isAdjustedToUTC true
//	ARRAY<T>                LIST: group (LIST) { repeated group list { element } }
//	MAP<K, V>, MULTISET<K>  MAP: group (MAP) { repeated group key_value { key; value } }
//	ROW<...>                a group of the fields, in order
//
// NOT NULL makes a field required, every other one is optional; a MAP's
// key is required, as the specification wants. The unit of a TIMESTAMP is
// millis for a precision up to 3, micros up to 6 and nanos above, unless
// the timestamp_unit option fixes one for every column.

// unit is a TIMESTAMP column's unit: how many per second.
type unit int64

const (
	millis unit = 1e3
	micros unit = 1e6
	nanos  unit = 1e9
)

func (u unit) node() pq.TimeUnit {
	switch u {
	case millis:
		return pq.Millisecond
	case micros:
		return pq.Microsecond
	}
	return pq.Nanosecond
}

func (u unit) String() string {
	switch u {
	case millis:
		return "millis"
	case micros:
		return "micros"
	}
	return "nanos"
}

// unitOf is the unit a TIMESTAMP(precision) column is written in; fixed,
// when not 0, is the timestamp_unit option's.
func unitOf(precision int, fixed unit) unit {
	switch {
	case fixed != 0:
		return fixed
	case precision <= 3:
		return millis
	case precision <= 6:
		return micros
	}
	return nanos
}

// decimalBytes is the fewest bytes that hold every unscaled value of a
// DECIMAL of precision p in two's complement: the least n with
// 2^(8n-1) > 10^p (9 bytes for DECIMAL(19), 16 for DECIMAL(38); no power
// of two comes near enough a power of ten for float64 to err).
func decimalBytes(p int) int {
	n := 1
	for math.Ldexp(1, 8*n-1) <= math.Pow10(p) {
		n++
	}
	return n
}

// nodeOf is the Parquet node of a column of type t.
func nodeOf(t row.Type, fixed unit) (pq.Node, error) {
	var n pq.Node
	switch t.ID {
	case row.Boolean:
		n = pq.Leaf(pq.BooleanType)
	case row.Int:
		n = pq.Int(t.IntBits())
	case row.BigInt:
		n = pq.Int(64)
	case row.Float:
		n = pq.Leaf(pq.FloatType)
	case row.Double:
		n = pq.Leaf(pq.DoubleType)
	case row.Decimal:
		switch {
		case t.Precision <= 9:
			n = pq.Decimal(t.Scale, t.Precision, pq.Int32Type)
		case t.Precision <= 18:
			n = pq.Decimal(t.Scale, t.Precision, pq.Int64Type)
		default:
			n = pq.Decimal(t.Scale, t.Precision, pq.FixedLenByteArrayType(decimalBytes(t.Precision)))
		}
	case row.String:
		n = pq.Encoded(pq.String(), &pq.RLEDictionary)
	case row.Bytes:
		n = pq.Leaf(pq.ByteArrayType)
	case row.Date:
		n = pq.Date()
	case row.Time:
		n = pq.TimeAdjusted(pq.Millisecond, false)
	case row.Timestamp, row.TimestampLTZ:
		n = pq.TimestampAdjusted(unitOf(t.Precision, fixed).node(), t.ID == row.TimestampLTZ)
	case row.Array:
		elem, err := nodeOf(t.Elem(), fixed)
		if err != nil {
			return nil, err
		}
		n = pq.List(elem)
	case row.Map:
		kt := t.Key()
		kt.NotNull = true
		key, err := nodeOf(kt, fixed)
		if err != nil {
			return nil, err
		}
		value, err := nodeOf(t.Elem(), fixed)
		if err != nil {
			return nil, err
		}
		n = pq.Map(key, value)
	case row.Struct:
		g, err := groupOf(t.Fields(), fixed)
		if err != nil {
			return nil, err
		}
		n = g
	default:
		return nil, fmt.Errorf("type %s has no Parquet type", t)
	}
	if t.NotNull {
		return pq.Required(n), nil
	}
	return pq.Optional(n), nil
}

// groupOf is the group of fields, in their order.
func groupOf(fields []row.Field, fixed unit) (pq.Node, error) {
	g := group{fields: make([]pq.Field, len(fields))}
	seen := map[string]int{}
	for i, f := range fields {
		if j, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("fields %d and %d are both named %q", j+1, i+1, f.Name)
		}
		seen[f.Name] = i
		n, err := nodeOf(f.Type, fixed)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		g.fields[i] = field{Node: n, name: f.Name}
	}
	return g, nil
}

// group is a Parquet group whose fields keep the order of the SQL
// schema: parquet-go's own Group is a map, which it sorts by name.
type group struct{ fields []pq.Field }

func (g group) ID() int                     { return 0 }
func (g group) String() string              { return fmt.Sprintf("group(%d fields)", len(g.fields)) }
func (g group) Type() pq.Type               { return pq.Group{}.Type() }
func (g group) Optional() bool              { return false }
func (g group) Repeated() bool              { return false }
func (g group) Required() bool              { return true }
func (g group) Leaf() bool                  { return false }
func (g group) Fields() []pq.Field          { return g.fields }
func (g group) Encoding() encoding.Encoding { return nil }
func (g group) Compression() compress.Codec { return nil }
func (g group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// field names a node in a group.
type field struct {
	pq.Node
	name string
}

func (f field) Name() string { return f.name }

// Value is parquet-go's way into Go values, which etld never writes.
func (f field) Value(reflect.Value) reflect.Value { return reflect.Value{} }
