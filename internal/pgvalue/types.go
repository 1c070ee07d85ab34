package pgvalue

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// The base types (pg_type.typname) each etld type is written into and
// read from.
var (
	intBases   = set("int2", "int4", "int8")
	floatBases = set("float4", "float8")
	numBases   = set("int2", "int4", "int8", "numeric", "float4", "float8")
	timeBases  = set("timestamp", "timestamptz")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Takes reports whether column c can hold values of the etld type t, as
// the sink writes them: a text column any value as its text (ARRAY, MAP
// and ROW as JSON) but BYTES, a json or jsonb column any value as JSON,
// an array column an ARRAY of what its element takes, and each scalar
// type the columns of its kind (the type mapping of the postgres sink).
func Takes(c Column, t row.Type) bool {
	if c.Array {
		if t.ID != row.Array {
			return false
		}
		elem := t.Elem()
		for elem.ID == row.Array {
			elem = elem.Elem()
		}
		return Takes(Column{Base: c.Base, Category: c.Category}, elem)
	}
	if c.Base == "json" || c.Base == "jsonb" {
		return true
	}
	if c.Category == 'S' {
		return t.ID != row.Bytes
	}
	switch t.ID {
	case row.Boolean:
		return c.Base == "bool"
	case row.Int, row.BigInt, row.Float, row.Double, row.Decimal:
		if t.ID == row.Float || t.ID == row.Double || t.ID == row.Decimal {
			return c.Base == "numeric" || floatBases[c.Base]
		}
		return numBases[c.Base]
	case row.String:
		// Its text, parsed by the column's type: a uuid, an enum's label,
		// an inet.
		return c.Category == 'U' || c.Category == 'E' || c.Category == 'I' || c.Category == 'S'
	case row.Bytes:
		return c.Base == "bytea"
	case row.Date:
		return c.Base == "date" || timeBases[c.Base]
	case row.Time:
		return c.Base == "time" || c.Base == "timetz"
	case row.Timestamp, row.TimestampLTZ:
		return timeBases[c.Base]
	}
	return false
}

// Gives reports whether values of column c read as the etld type t, as
// the CDC source reads them: any column as STRING (its text), and each
// etld type from the columns of its kind (the type mapping of the
// postgres source).
func Gives(c Column, t row.Type) bool {
	if t.ID == row.String {
		return true
	}
	json := !c.Array && (c.Base == "json" || c.Base == "jsonb")
	switch t.ID {
	case row.Array:
		if json {
			return true
		}
		if !c.Array {
			return false
		}
		elem := t.Elem()
		for elem.ID == row.Array {
			elem = elem.Elem()
		}
		return Gives(Column{Base: c.Base, Category: c.Category}, elem)
	case row.Map, row.Struct:
		return json
	}
	if c.Array {
		return false
	}
	switch t.ID {
	case row.Boolean:
		return c.Base == "bool"
	case row.Int, row.BigInt:
		return intBases[c.Base]
	case row.Float, row.Double, row.Decimal:
		return numBases[c.Base]
	case row.Bytes:
		return c.Base == "bytea"
	case row.Date:
		return c.Base == "date"
	case row.Time:
		return c.Base == "time"
	case row.Timestamp:
		return c.Base == "timestamp"
	case row.TimestampLTZ:
		return c.Base == "timestamptz"
	}
	return false
}

// DDLType is the column type create_table makes for the etld type t.
// PostgreSQL has no TINYINT (SMALLINT holds it) and keeps at most
// microseconds; an ARRAY of scalars is an array column, an ARRAY of
// composites, a MAP and a ROW are jsonb.
func DDLType(t row.Type) (string, error) {
	switch t.ID {
	case row.Boolean:
		return "boolean", nil
	case row.Int:
		if t.IntBits() < 32 {
			return "smallint", nil
		}
		return "integer", nil
	case row.BigInt:
		return "bigint", nil
	case row.Float:
		return "real", nil
	case row.Double:
		return "double precision", nil
	case row.Decimal:
		return fmt.Sprintf("numeric(%d, %d)", t.Precision, t.Scale), nil
	case row.String:
		if t.Length > 0 {
			return fmt.Sprintf("varchar(%d)", t.Length), nil
		}
		return "text", nil
	case row.Bytes:
		return "bytea", nil
	case row.Date:
		return "date", nil
	case row.Time:
		return fmt.Sprintf("time(%d)", min(t.Precision, 6)), nil
	case row.Timestamp:
		return fmt.Sprintf("timestamp(%d)", min(t.Precision, 6)), nil
	case row.TimestampLTZ:
		return fmt.Sprintf("timestamp(%d) with time zone", min(t.Precision, 6)), nil
	case row.Array:
		if t.Elem().ID.Nested() {
			return "jsonb", nil
		}
		elem, err := DDLType(t.Elem())
		if err != nil {
			return "", err
		}
		return elem + "[]", nil
	case row.Map, row.Struct:
		return "jsonb", nil
	}
	return "", fmt.Errorf("no PostgreSQL column type for %s", t)
}
