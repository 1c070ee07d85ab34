package mysql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"golang.org/x/text/encoding/charmap"

	"github.com/etld/etld/pipeline/row"
)

var timeUTC = time.UTC

// rowMapper turns the row images of one table map into rows of the
// schema: it finds each column by name, so a column added, or moved by a
// schema change, is read where the binlog now has it.
type rowMapper struct {
	schema   row.Schema
	physical []int
	table    *tableInfo
	tm       *replication.TableMapEvent
	// src parallels CDC.physical: the column of the image each is read from.
	src  []int
	conv []func(any) (row.Value, error)
	pk   []int // the image's primary key columns
	text []func(any) string
}

// mapper returns the mapper of the table map tm of captured table ti,
// made anew when the table map changed. A column of the schema that the
// table no longer has, or whose new type cannot be read as the declared
// one, is an error naming the change.
func (s *CDC) mapper(tm *replication.TableMapEvent, ti *tableInfo, h *replication.EventHeader) (*rowMapper, error) {
	if m := s.bl.mappers[tm.TableID]; m != nil && m.tm == tm {
		return m, nil
	}
	names := tm.ColumnNameString()
	if len(names) != int(tm.ColumnCount) {
		return nil, fmt.Errorf("the table map of %s names no columns: the server logged it with binlog_row_metadata other than FULL", ti.name)
	}
	byName := make(map[string]int, len(names))
	for i, n := range names {
		byName[strings.ToLower(n)] = i
	}
	prev := s.bl.mappers[tm.TableID]
	if prev == nil || prev.table != ti || !sameColumns(prev.tm, tm) {
		s.logColumns(ti, tm, prev)
	}
	m := &rowMapper{schema: s.schema, physical: s.physical, table: ti, tm: tm, src: make([]int, len(s.physical)), conv: make([]func(any) (row.Value, error), len(s.physical))}
	collations := tm.CollationMap()
	enumSet := tm.EnumSetCollationMap()
	enums, sets := tm.EnumStrValueMap(), tm.SetStrValueMap()
	unsigned := tm.UnsignedMap()
	m.text = make([]func(any) string, len(names))
	for i := range names {
		dec, err := s.decoderFor(tm, i, collations, enumSet)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s: %w", names[i], ti.name, err)
		}
		m.text[i] = textFunc(tm, i, dec, enums[i], sets[i])
	}
	for k, j := range s.physical {
		f := s.schema.Fields[j]
		i, ok := byName[strings.ToLower(f.Name)]
		if !ok {
			return nil, fmt.Errorf("table %s has no column %s any more (dropped or renamed by a schema change before binlog position %d): the schema's column cannot be filled; declare the table's columns anew and reset the pipeline's state (etld state reset)", ti.name, f.Name, h.LogPos)
		}
		if err := readable(tm, i, f.Type); err != nil {
			return nil, fmt.Errorf("column %s of %s is now %s (a schema change before binlog position %d), which cannot be read as the declared %s: %w", f.Name, ti.name, typeName(tm, i, unsigned[i]), h.LogPos, f.Type, err)
		}
		m.src[k] = i
		m.conv[k] = convFunc(f.Type, m.text[i])
	}
	for _, c := range ti.pk {
		i, ok := byName[strings.ToLower(c.name)]
		if !ok {
			return nil, fmt.Errorf("table %s has no primary key column %s any more (a schema change before binlog position %d)", ti.name, c.name, h.LogPos)
		}
		m.pk = append(m.pk, i)
	}
	s.bl.mappers[tm.TableID] = m
	return m, nil
}

// logColumns logs the columns of a captured table when the binlog first
// shows them and when a schema change altered them.
func (s *CDC) logColumns(ti *tableInfo, tm *replication.TableMapEvent, prev *rowMapper) {
	cols := make([]string, tm.ColumnCount)
	un := tm.UnsignedMap()
	for i, n := range tm.ColumnNameString() {
		cols[i] = n + " " + typeName(tm, i, un[i])
	}
	if prev == nil || prev.table != ti {
		s.logger.Debug("binlog table map", "table", ti.name.String(), "columns", strings.Join(cols, ", "))
		return
	}
	s.logger.Info("the binlog shows new columns of a captured table: reading them by name", "table", ti.name.String(), "columns", strings.Join(cols, ", "))
}

// sameColumns reports whether two table maps have the same columns.
func sameColumns(a, b *replication.TableMapEvent) bool {
	if a.ColumnCount != b.ColumnCount || string(a.ColumnType) != string(b.ColumnType) {
		return false
	}
	for i := range a.ColumnName {
		if string(a.ColumnName[i]) != string(b.ColumnName[i]) || a.ColumnMeta[i] != b.ColumnMeta[i] {
			return false
		}
	}
	return true
}

// realType is a column's type, with ENUM and SET told apart from the
// strings they are logged as.
func realType(tm *replication.TableMapEvent, i int) byte {
	t := tm.ColumnType[i]
	if t == mysql.MYSQL_TYPE_STRING {
		if rt := byte(tm.ColumnMeta[i] >> 8); rt == mysql.MYSQL_TYPE_ENUM || rt == mysql.MYSQL_TYPE_SET {
			return rt
		}
	}
	return t
}

// typeName names a column's binlog type for messages.
func typeName(tm *replication.TableMapEvent, i int, unsigned bool) string {
	name := "type " + strconv.Itoa(int(realType(tm, i)))
	switch realType(tm, i) {
	case mysql.MYSQL_TYPE_TINY:
		name = "TINYINT"
	case mysql.MYSQL_TYPE_SHORT:
		name = "SMALLINT"
	case mysql.MYSQL_TYPE_INT24:
		name = "MEDIUMINT"
	case mysql.MYSQL_TYPE_LONG:
		name = "INT"
	case mysql.MYSQL_TYPE_LONGLONG:
		name = "BIGINT"
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		name = fmt.Sprintf("DECIMAL(%d,%d)", tm.ColumnMeta[i]>>8, tm.ColumnMeta[i]&0xff)
	case mysql.MYSQL_TYPE_FLOAT:
		name = "FLOAT"
	case mysql.MYSQL_TYPE_DOUBLE:
		name = "DOUBLE"
	case mysql.MYSQL_TYPE_BIT:
		name = "BIT"
	case mysql.MYSQL_TYPE_YEAR:
		name = "YEAR"
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		name = "DATE"
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		name = "TIME"
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		name = "DATETIME"
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		name = "TIMESTAMP"
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		name = "VARCHAR"
	case mysql.MYSQL_TYPE_STRING:
		name = "CHAR"
	case mysql.MYSQL_TYPE_BLOB:
		name = "BLOB/TEXT"
	case mysql.MYSQL_TYPE_ENUM:
		name = "ENUM"
	case mysql.MYSQL_TYPE_SET:
		name = "SET"
	case mysql.MYSQL_TYPE_JSON:
		name = "JSON"
	case mysql.MYSQL_TYPE_GEOMETRY:
		name = "GEOMETRY"
	}
	if unsigned {
		name += " UNSIGNED"
	}
	return name
}

// readable checks that a column of the binlog type can be read as the
// declared type: a schema change that widens a column (INT to BIGINT, a
// longer VARCHAR) is read on; one that changes its kind is an error.
func readable(tm *replication.TableMapEvent, i int, t row.Type) error {
	rt := realType(tm, i)
	integer := rt == mysql.MYSQL_TYPE_TINY || rt == mysql.MYSQL_TYPE_SHORT || rt == mysql.MYSQL_TYPE_INT24 ||
		rt == mysql.MYSQL_TYPE_LONG || rt == mysql.MYSQL_TYPE_LONGLONG || rt == mysql.MYSQL_TYPE_YEAR || rt == mysql.MYSQL_TYPE_BIT
	number := integer || rt == mysql.MYSQL_TYPE_NEWDECIMAL || rt == mysql.MYSQL_TYPE_FLOAT || rt == mysql.MYSQL_TYPE_DOUBLE
	temporal := rt == mysql.MYSQL_TYPE_DATETIME || rt == mysql.MYSQL_TYPE_DATETIME2 || rt == mysql.MYSQL_TYPE_TIMESTAMP ||
		rt == mysql.MYSQL_TYPE_TIMESTAMP2 || rt == mysql.MYSQL_TYPE_DATE || rt == mysql.MYSQL_TYPE_NEWDATE
	var ok bool
	switch t.ID {
	case row.Boolean, row.Int, row.BigInt:
		ok = integer
	case row.Float, row.Double, row.Decimal:
		ok = number
	case row.String, row.Bytes:
		ok = rt != mysql.MYSQL_TYPE_GEOMETRY
	case row.Date, row.Timestamp, row.TimestampLTZ:
		ok = temporal
	case row.Time:
		ok = rt == mysql.MYSQL_TYPE_TIME || rt == mysql.MYSQL_TYPE_TIME2
	}
	if !ok {
		return fmt.Errorf("no %s is read from such a column", t)
	}
	return nil
}

// decoderFor returns how a character column's bytes become text: as
// they are for UTF-8, ASCII and binary, decoded from latin1 (MySQL's
// latin1 is Windows-1252). Other character sets are an error.
func (s *CDC) decoderFor(tm *replication.TableMapEvent, i int, collations, enumSet map[int]uint64) (func(string) string, error) {
	coll, ok := collations[i]
	if !ok {
		coll, ok = enumSet[i]
	}
	if !ok {
		return nil, nil
	}
	cs := s.server.charsets[coll]
	switch {
	case cs == "" || cs == "binary" || cs == "ascii" || strings.HasPrefix(cs, "utf8"):
		return nil, nil
	case cs == "latin1":
		return latin1, nil
	}
	return nil, fmt.Errorf("is in character set %s: binlog capture reads utf8mb4, utf8mb3, ascii, latin1 and binary columns", cs)
}

// latin1High maps the bytes 0x80 to 0xff of MySQL's latin1 (Windows-1252)
// to their runes.
var latin1High = func() (t [128]rune) {
	for i := range t {
		t[i] = charmap.Windows1252.DecodeByte(byte(0x80 + i))
	}
	return t
}()

// latin1 decodes a latin1 string; one of ASCII alone is returned as it
// is, without a copy.
func latin1(b string) string {
	i := 0
	for i < len(b) && b[i] < 0x80 {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	out = append(out, b[:i]...)
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x80 {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, latin1High[c-0x80])
		}
	}
	return string(out)
}

// textFunc renders a binlog value of column i as the server's text
// protocol would: the text the snapshot's values are parsed from, so
// that both read a value alike.
func textFunc(tm *replication.TableMapEvent, i int, dec func(string) string, enum, set []string) func(any) string {
	rt := realType(tm, i)
	return func(v any) string {
		switch x := v.(type) {
		case nil:
			return ""
		case string:
			if dec != nil {
				return dec(x)
			}
			return x
		case []byte:
			if dec != nil {
				return dec(string(x))
			}
			return string(x)
		case float32:
			return strconv.FormatFloat(float64(x), 'g', -1, 32)
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64)
		case int64:
			switch rt {
			case mysql.MYSQL_TYPE_ENUM:
				if x >= 1 && int(x) <= len(enum) {
					return decode(dec, enum[x-1])
				}
				return ""
			case mysql.MYSQL_TYPE_SET:
				var parts []string
				for b := 0; b < len(set) && b < 64; b++ {
					if x&(1<<b) != 0 {
						parts = append(parts, decode(dec, set[b]))
					}
				}
				return strings.Join(parts, ",")
			}
		}
		return fmt.Sprint(v)
	}
}

func decode(dec func(string) string, s string) string {
	if dec == nil {
		return s
	}
	return dec(s)
}

// convFunc reads a binlog value as type t: integers and UTF-8 strings
// directly, everything else through its text, as the snapshot does.
func convFunc(t row.Type, text func(any) string) func(any) (row.Value, error) {
	slow := func(v any) (row.Value, error) {
		if v == nil {
			return parseValue(nil, t)
		}
		return parseValue([]byte(text(v)), t)
	}
	switch t.ID {
	case row.Int, row.BigInt:
		return func(v any) (row.Value, error) {
			i, ok := asInt(v)
			if !ok {
				return slow(v)
			}
			if t.ID == row.BigInt {
				return row.BigIntValue(i), nil
			}
			bits := t.IntBits()
			if i < -(1<<(bits-1)) || i > 1<<(bits-1)-1 {
				return row.NullValue, fmt.Errorf("%d is out of the range of %s", i, t)
			}
			return row.IntValue(int32(i)), nil
		}
	case row.Double:
		return func(v any) (row.Value, error) {
			if f, ok := v.(float64); ok {
				return row.DoubleValue(f), nil
			}
			return slow(v)
		}
	case row.String:
		return func(v any) (row.Value, error) {
			switch v.(type) {
			case string, []byte:
				return row.StringValue(text(v)), nil
			}
			return slow(v)
		}
	}
	return slow
}

// asInt reads a signed integer of the binlog; an unsigned one above
// int64's range is not one.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// convert turns a row image into a row of the schema, its metadata
// columns left to fill, in memory from slab.
func (m *rowMapper) convert(img []any, slab *rowSlab) (row.Row, error) {
	r := slab.row(m.schema.Len())
	for k, j := range m.physical {
		var v any
		if i := m.src[k]; i < len(img) {
			v = img[i]
		}
		val, err := m.conv[k](v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", m.schema.Fields[j].Name, err)
		}
		r[j] = val
	}
	return r, nil
}

// rowSlab hands out the rows of a batch from one allocation: a row
// costs no allocation of its own, which matters as much as the
// decoding when the machine is busy.
type rowSlab struct{ free []row.Value }

// slabRows is how many rows of values one slab holds.
const slabRows = 256

func (s *rowSlab) row(width int) row.Row {
	if len(s.free) < width {
		s.free = make([]row.Value, width*slabRows)
	}
	r := s.free[:width:width]
	s.free = s.free[width:]
	return r
}

// key is the text of the image's primary key, nil for NULL.
func (m *rowMapper) key(img []any) []*string {
	out := make([]*string, len(m.pk))
	for k, i := range m.pk {
		if i < len(img) && img[i] != nil {
			t := m.text[i](img[i])
			out[k] = &t
		}
	}
	return out
}

// rowText is the image as text, for a dead letter.
func (m *rowMapper) rowText(img []any) string {
	parts := make([]string, len(img))
	for i, v := range img {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = m.text[i](v)
		}
	}
	return strings.Join(parts, ",")
}
