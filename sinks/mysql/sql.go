package mysql

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// quote makes an identifier safe to splice into SQL: backticks around it,
// a backtick inside doubled. Values never go into SQL text; they are
// parameters.
func quote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// server is what SELECT VERSION() says about the server.
type server struct {
	version             string
	mariadb             bool
	major, minor, patch int
}

// parseVersion reads VERSION(): "10.11.19-MariaDB-0+deb12u1",
// "8.0.36", "5.7.44-log", "8.0.36-0ubuntu0.22.04.1".
func parseVersion(v string) server {
	s := server{version: v, mariadb: strings.Contains(strings.ToLower(v), "mariadb")}
	num := v
	if i := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		num = v[:i]
	}
	parts := strings.SplitN(num, ".", 3)
	nums := []*int{&s.major, &s.minor, &s.patch}
	for i, p := range parts {
		*nums[i], _ = strconv.Atoi(p)
	}
	return s
}

// rowAlias reports whether the server takes INSERT ... AS new ON DUPLICATE
// KEY UPDATE c = new.c: MySQL from 8.0.20, where VALUES(c) is deprecated.
// MariaDB has no row alias and keeps VALUES().
func (s server) rowAlias() bool {
	if s.mariadb {
		return false
	}
	return s.major > 8 || (s.major == 8 && (s.minor > 0 || s.patch >= 20))
}

func (s server) String() string {
	if s.mariadb {
		return "MariaDB " + s.version
	}
	return "MySQL " + s.version
}

// statements builds the SQL text of the sink's statements.
type statements struct {
	table string   // quoted
	cols  []string // quoted, in schema order
	key   []int    // upsert key columns
	alias bool     // MySQL >= 8.0.20 row alias
}

// insert is a multi-row INSERT of n rows; with upsert, one that updates
// the non-key columns of a row whose key exists.
func (st *statements) insert(n int, upsert bool) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(st.table)
	b.WriteString(" (")
	b.WriteString(strings.Join(st.cols, ", "))
	b.WriteString(") VALUES ")
	tuple := "(" + strings.Repeat("?, ", len(st.cols)-1) + "?)"
	b.Grow(n * (len(tuple) + 2))
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	if !upsert {
		return b.String()
	}
	if st.alias {
		b.WriteString(" AS `new`")
	}
	b.WriteString(" ON DUPLICATE KEY UPDATE ")
	update := st.nonKey()
	if len(update) == 0 {
		// Every column is in the key: nothing to update, but the clause
		// needs an assignment; this one changes nothing.
		update = st.key
	}
	for i, c := range update {
		if i > 0 {
			b.WriteString(", ")
		}
		col := st.cols[c]
		b.WriteString(col)
		if st.alias {
			b.WriteString(" = `new`.")
			b.WriteString(col)
		} else {
			b.WriteString(" = VALUES(")
			b.WriteString(col)
			b.WriteString(")")
		}
	}
	return b.String()
}

// delete removes n rows by key: WHERE k IN (?, ?) for one key column,
// WHERE (k1, k2) IN ((?, ?), (?, ?)) for several.
func (st *statements) delete(n int) string {
	var b strings.Builder
	b.WriteString("DELETE FROM ")
	b.WriteString(st.table)
	b.WriteString(" WHERE ")
	tuple := "?"
	if len(st.key) == 1 {
		b.WriteString(st.cols[st.key[0]])
	} else {
		b.WriteString("(")
		for i, k := range st.key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(st.cols[k])
		}
		b.WriteString(")")
		tuple = "(" + strings.Repeat("?, ", len(st.key)-1) + "?)"
	}
	b.WriteString(" IN (")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	b.WriteString(")")
	return b.String()
}

// deleteAll empties the table: the one-row result of a global aggregate
// (upsert with an empty key) is replaced as a whole.
func (st *statements) deleteAll() string { return "DELETE FROM " + st.table }

func (st *statements) nonKey() []int {
	var out []int
	for i := range st.cols {
		isKey := false
		for _, k := range st.key {
			isKey = isKey || k == i
		}
		if !isKey {
			out = append(out, i)
		}
	}
	return out
}

// maxPlaceholders is the protocol's limit on parameters per statement.
const maxPlaceholders = 65535

// The longest VARCHAR (utf8mb4) and VARBINARY columns create_table
// makes; a longer declared length becomes LONGTEXT or LONGBLOB.
const (
	maxVarchar   = 16383
	maxVarbinary = 65535
)

// keyChars is the most characters create_table gives a text key column
// of no declared length, when the index has room for more.
const keyChars = 255

// columnType is the MySQL type create_table gives a column (the package
// doc's mapping). keyBytes is the share of the index a text key column
// of no declared length may take (Sink.keyTextBytes): a key must be an
// indexable type, VARCHAR or VARBINARY, within the index's bytes.
func columnType(t row.Type, key bool, keyBytes int) (string, error) {
	var s string
	switch t.ID {
	case row.Boolean:
		s = "BOOLEAN"
	case row.Int:
		s = map[int]string{8: "TINYINT", 16: "SMALLINT", 32: "INT"}[t.IntBits()]
	case row.BigInt:
		s = "BIGINT"
	case row.Float:
		s = "FLOAT"
	case row.Double:
		s = "DOUBLE"
	case row.Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case row.String:
		switch {
		case t.Length > 0 && t.Length <= maxVarchar:
			s = fmt.Sprintf("VARCHAR(%d)", t.Length)
		case key:
			s = fmt.Sprintf("VARCHAR(%d)", min(keyChars, keyBytes/4))
		default:
			s = "LONGTEXT"
		}
		s += " CHARACTER SET utf8mb4"
	case row.Bytes:
		switch {
		case t.Length > 0 && t.Length <= maxVarbinary:
			s = fmt.Sprintf("VARBINARY(%d)", t.Length)
		case key:
			s = fmt.Sprintf("VARBINARY(%d)", min(keyChars, keyBytes))
		default:
			s = "LONGBLOB"
		}
	case row.Date:
		s = "DATE"
	case row.Timestamp, row.TimestampLTZ:
		s = fmt.Sprintf("DATETIME(%d)", min(t.Precision, 6))
	default:
		return "", fmt.Errorf("type %s has no MySQL column type; CAST it to a concrete type in the query", t)
	}
	if t.NotNull || key {
		s += " NOT NULL"
	}
	return s, nil
}

// compatible lists, per etld type, the information_schema DATA_TYPEs of a
// column that holds its values without loss of meaning. Text columns also
// take numbers, dates and times, as their text form.
var compatible = map[row.TypeID][]string{
	row.Boolean:      {"tinyint", "smallint", "mediumint", "int", "bigint", "bit", "decimal"},
	row.Int:          {"tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double"},
	row.BigInt:       {"tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double"},
	row.Float:        {"float", "double", "decimal"},
	row.Double:       {"float", "double", "decimal"},
	row.Decimal:      {"decimal", "float", "double"},
	row.String:       {"enum", "set", "json"},
	row.Bytes:        {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"},
	row.Date:         {"date", "datetime", "timestamp"},
	row.Timestamp:    {"datetime", "timestamp"},
	row.TimestampLTZ: {"datetime", "timestamp"},
}

var textTypes = []string{"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}

// columnTakes reports whether a column of information_schema DATA_TYPE dt
// can hold values of type t.
func columnTakes(dt string, t row.TypeID) bool {
	dt = strings.ToLower(dt)
	for _, c := range textTypes {
		if dt == c && t != row.Bytes {
			return true
		}
	}
	for _, c := range compatible[t] {
		if dt == c {
			return true
		}
	}
	return false
}

// arg converts a value into a driver parameter, and returns about how many
// bytes it takes on the wire. DECIMAL goes as its exact text; FLOAT as
// the float64 nearest its shortest decimal form, so 0.1f is stored as 0.1.
func arg(v row.Value) (any, int) {
	switch v.Type() {
	case row.Null:
		return nil, 1
	case row.Boolean:
		return v.Bool(), 1
	case row.Int, row.BigInt:
		return v.Int64(), 8
	case row.Float:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float64(), 'g', -1, 32), 64)
		return f, 8
	case row.Double:
		f := v.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			// MySQL has no infinities or NaN; the server rejects the text
			// with an error number, and the row goes to on_error.
			return strconv.FormatFloat(f, 'g', -1, 64), 8
		}
		return f, 8
	case row.Decimal:
		s := v.Text(row.Type{})
		return s, len(s)
	case row.String, row.Bytes:
		return v.Str(), len(v.Str()) + 9
	case row.Date:
		return v.Time().Format("2006-01-02"), 4
	case row.Timestamp, row.TimestampLTZ:
		return v.Time(), 12
	}
	s := v.Text(row.Type{})
	return s, len(s)
}
