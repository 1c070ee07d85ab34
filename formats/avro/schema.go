package avro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/row"
)

// Flink's names for the schema it derives from a table: a record named
// record in this namespace, its nested records named after the path to
// them (record_address).
const (
	derivedName      = "record"
	derivedNamespace = "org.apache.flink.avro.generated"
)

// DeriveSchema returns the Avro schema Flink derives from a table's
// columns (AvroSchemaConverter.convertToSchema): a record whose fields
// are the columns, a nullable column a union of null and its type with
// default null; DECIMAL as bytes with logical type decimal, DATE as int
// date, TIME as int time-millis, TIMESTAMP and TIMESTAMP_LTZ as long
// timestamp-millis (precision up to 3) or timestamp-micros.
func DeriveSchema(schema row.Schema) (string, error) {
	var b strings.Builder
	if err := writeRecord(&b, derivedName, derivedNamespace, schema.Fields); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeRecord(b *strings.Builder, name, namespace string, fields []row.Field) error {
	b.WriteString(`{"type":"record","name":`)
	b.WriteString(strconv.Quote(name))
	if namespace != "" {
		b.WriteString(`,"namespace":`)
		b.WriteString(strconv.Quote(namespace))
	}
	b.WriteString(`,"fields":[`)
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if !validName(f.Name) {
			return fmt.Errorf("column %q: not a valid Avro field name (letters, digits and _, not starting with a digit)", f.Name)
		}
		b.WriteString(`{"name":`)
		b.WriteString(strconv.Quote(f.Name))
		b.WriteString(`,"type":`)
		if err := writeType(b, f.Type, name+"_"+f.Name); err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		if !f.Type.NotNull {
			b.WriteString(`,"default":null`)
		}
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return nil
}

// writeType writes t's Avro type, a union with null when t is nullable;
// name is the name a record type gets.
func writeType(b *strings.Builder, t row.Type, name string) error {
	if !t.NotNull {
		b.WriteString(`["null",`)
		defer b.WriteByte(']')
	}
	switch t.ID {
	case row.Boolean:
		b.WriteString(`"boolean"`)
	case row.Int:
		b.WriteString(`"int"`)
	case row.BigInt:
		b.WriteString(`"long"`)
	case row.Float:
		b.WriteString(`"float"`)
	case row.Double:
		b.WriteString(`"double"`)
	case row.String:
		b.WriteString(`"string"`)
	case row.Bytes:
		b.WriteString(`"bytes"`)
	case row.Decimal:
		fmt.Fprintf(b, `{"type":"bytes","logicalType":"decimal","precision":%d,"scale":%d}`, t.Precision, t.Scale)
	case row.Date:
		b.WriteString(`{"type":"int","logicalType":"date"}`)
	case row.Time:
		b.WriteString(`{"type":"int","logicalType":"time-millis"}`)
	case row.Timestamp, row.TimestampLTZ:
		if t.Precision <= 3 {
			b.WriteString(`{"type":"long","logicalType":"timestamp-millis"}`)
		} else {
			b.WriteString(`{"type":"long","logicalType":"timestamp-micros"}`)
		}
	case row.Array:
		b.WriteString(`{"type":"array","items":`)
		if err := writeType(b, t.Elem(), name); err != nil {
			return err
		}
		b.WriteByte('}')
	case row.Map:
		if t.Key().ID != row.String {
			return fmt.Errorf("%s: an Avro map's keys are strings", t)
		}
		b.WriteString(`{"type":"map","values":`)
		if err := writeType(b, t.Elem(), name); err != nil {
			return err
		}
		b.WriteByte('}')
	case row.Struct:
		return writeRecord(b, name, "", t.Fields())
	default:
		return fmt.Errorf("type %s has no Avro counterpart", t)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Parse parses an Avro schema's JSON text. Each parse has its own cache of
// named types, so that two writer schemas that define a record of the same
// name differently never mix.
func Parse(text string) (avro.Schema, error) {
	s, err := avro.ParseBytesWithCache([]byte(text), "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("not an Avro schema: %w", err)
	}
	return s, nil
}

// compact returns the schema's JSON text without insignificant blanks, as
// it is registered.
func compact(text string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(text)) != nil {
		return text
	}
	return b.String()
}

// deref follows a reference to the named type it names.
func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

// logical returns the logical type of a primitive or fixed schema, or "".
func logical(s avro.Schema) avro.LogicalType {
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return ls.Logical().Type()
	}
	return ""
}

// fieldIndex finds the field for a column: by name, or by one of its
// aliases, or failing both by name in any case; -1 when none.
func fieldIndex(fields []*avro.Field, name string) int {
	for i, f := range fields {
		if f.Name() == name {
			return i
		}
	}
	for i, f := range fields {
		for _, a := range f.Aliases() {
			if a == name {
				return i
			}
		}
	}
	for i, f := range fields {
		if strings.EqualFold(f.Name(), name) {
			return i
		}
	}
	return -1
}
