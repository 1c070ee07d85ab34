package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/pgvalue"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// capture is one captured table: its columns and key as the catalog
// gives them, and how its rows become rows of the source's schema.
type capture struct {
	table pgconf.Table
	name  string // table.String()
	// out is the schema column a row of the table fills, a ROW of its
	// fields, when the source captures several tables; -1 when it
	// captures one and the table's columns are the schema's.
	out    int
	fields []field
	// key is the primary key's columns (or a unique index's of NOT NULL
	// columns), in index order; keyKinds how each orders, with one 0 when
	// the key has a column of no known order (the snapshot is then read
	// in one piece).
	key      []pgvalue.Column
	keyKinds []keyKind
	cols     []pgvalue.Column
	// selects are the columns the snapshot reads: the fields, then the
	// key columns that are not fields.
	selects []pgvalue.Column

	// The stream's view: the relation's id and columns as its last
	// Relation message gave them, where each field and key column is
	// among them, and the snapshot's segments.
	relID   uint32
	relDef  []string
	fieldAt []int
	keyAt   []int
	window  window
}

// field is a declared column of a captured table.
type field struct {
	name string
	typ  row.Type
	col  pgvalue.Column
	// pos is the field's place in the output: the schema column (one
	// table) or the ROW's field (several).
	pos int
}

// orderable reports whether the table's snapshot can be read in key
// order and resumed after a key.
func (c *capture) orderable() bool {
	if len(c.keyKinds) == 0 {
		return false
	}
	for _, k := range c.keyKinds {
		if k == 0 {
			return false
		}
	}
	return true
}

// check reads the table's columns, key and replica identity and matches
// the declared fields with them; every problem is an error that names
// the column and says what to do.
func (c *capture) check(ctx context.Context, conn *pgx.Conn, needFull bool) error {
	cols, err := pgvalue.Columns(ctx, conn, c.table)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("table %s does not exist", c.table)
	}
	c.cols = cols
	for i, f := range c.fields {
		j := pgvalue.Match(cols, f.name)
		if j < 0 {
			return fmt.Errorf("table %s has no column %s for the declared column %s %s (the table has: %s)", c.table, pgconf.Quote(f.name), f.name, f.typ, columnList(cols))
		}
		if !pgvalue.Gives(cols[j], f.typ) {
			return fmt.Errorf("column %s of table %s is %s, which does not read as %s (see the type mapping of the postgres source); declare it as a type it reads as, or STRING", pgconf.Quote(cols[j].Name), c.table, cols[j].Type, f.typ)
		}
		c.fields[i].col = cols[j]
	}
	keys, err := pgvalue.UniqueKeys(ctx, conn, c.table)
	if err != nil {
		return err
	}
	c.key, c.keyKinds = nil, nil
	for _, k := range keys {
		var kc []pgvalue.Column
		for _, name := range k {
			if j := pgvalue.Match(cols, name); j >= 0 && cols[j].Name == name && cols[j].NotNull {
				kc = append(kc, cols[j])
			}
		}
		if len(kc) == len(k) {
			c.key = kc
			break
		}
	}
	for _, k := range c.key {
		c.keyKinds = append(c.keyKinds, keyKindOf(k))
	}
	c.selects = nil
	for _, f := range c.fields {
		c.selects = append(c.selects, f.col)
	}
	for _, k := range c.key {
		if !c.hasField(k.Name) {
			c.selects = append(c.selects, k)
		}
	}
	if !needFull {
		return nil
	}
	var ident string
	if err := conn.QueryRow(ctx, `SELECT c.relreplident::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, c.table.Schema, c.table.Name).Scan(&ident); err != nil {
		return fmt.Errorf("read the replica identity of table %s: %w", c.table, err)
	}
	if ident != "f" {
		what := map[string]string{"d": "DEFAULT (the primary key)", "n": "NOTHING", "i": "USING INDEX"}[ident]
		return fmt.Errorf("table %s has REPLICA IDENTITY %s: its updates and deletes would carry only the key of the old row, and the source emits the whole old row (-U, -D), which a filter, an aggregate or a join downstream reads; run ALTER TABLE %s REPLICA IDENTITY FULL, or set changelog_mode: upsert (the pipeline then keeps the last row of each key)", c.table, what, c.table.Quoted())
	}
	return nil
}

func (c *capture) hasField(name string) bool {
	for _, f := range c.fields {
		if f.col.Name == name {
			return true
		}
	}
	return false
}

func columnList(cols []pgvalue.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgconf.Quote(c.Name) + " " + c.Type
	}
	return strings.Join(names, ", ")
}

// metaCol is a metadata column of the schema and the key it is filled
// from.
type metaCol struct {
	pos int
	key string
}

// Metadata keys the source offers (connector.MetadataSource), with Flink
// CDC's names where it has them.
const (
	metaTable    = "table_name"
	metaSchema   = "schema_name"
	metaDatabase = "database_name"
	metaOpTS     = "op_ts"
	metaLSN      = "lsn"
	metaRowKey   = "row_key"
)

var metadataKeys = map[string]row.Type{
	metaTable:    {ID: row.String, NotNull: true},
	metaSchema:   {ID: row.String, NotNull: true},
	metaDatabase: {ID: row.String, NotNull: true},
	metaOpTS:     {ID: row.TimestampLTZ, Precision: 3, NotNull: true},
	metaLSN:      {ID: row.BigInt, NotNull: true},
	metaRowKey:   {ID: row.String, NotNull: true},
}

// origin is where a row comes from, for its metadata columns and errors.
type origin struct {
	c *capture
	// lsn is the commit LSN of its transaction, or the snapshot's.
	lsn uint64
	// commitMicros is the commit time; 0 for a snapshot row.
	commitMicros int64
}

// builder makes rows of the source's schema.
type builder struct {
	width    int
	meta     []metaCol
	database string
	scratch  []row.Value
}

// build makes the row of a table's values, texts in the order of the
// fields (present false for NULL), and fills the metadata, into r (a row
// of the schema's width; nil: a new one). A value that does not parse is
// an error naming its column.
func (b *builder) build(r row.Row, o origin, texts []string, present []bool, keyTexts []string) (row.Row, error) {
	if r == nil {
		r = make(row.Row, b.width)
	}
	c := o.c
	vals := r
	if c.out >= 0 {
		if cap(b.scratch) < len(c.fields) {
			b.scratch = make([]row.Value, len(c.fields))
		}
		vals = b.scratch[:len(c.fields)]
	}
	for i := range c.fields {
		f := &c.fields[i]
		v := row.NullValue
		if present[i] {
			var err error
			if v, err = parseValue(texts[i], f); err != nil {
				return nil, fmt.Errorf("column %s: %w", f.name, err)
			}
		}
		vals[f.pos] = v
	}
	if c.out >= 0 {
		r[c.out] = row.StructValue(vals)
	}
	for _, m := range b.meta {
		switch m.key {
		case metaTable:
			r[m.pos] = row.StringValue(c.table.Name)
		case metaSchema:
			r[m.pos] = row.StringValue(c.table.Schema)
		case metaDatabase:
			r[m.pos] = row.StringValue(b.database)
		case metaOpTS:
			r[m.pos] = row.TimestampLTZValue(o.commitMicros)
		case metaLSN:
			r[m.pos] = row.BigIntValue(int64(o.lsn))
		case metaRowKey:
			k, _ := json.Marshal(keyTexts)
			r[m.pos] = row.StringValue(string(k))
		}
	}
	return r, nil
}

// newCaptures reads the tables option and the schema into captures: one
// table's columns are the schema's physical columns; several tables each
// fill a ROW column named after the table.
func newCaptures(cfg Config, env connector.SourceEnv) ([]*capture, []metaCol, error) {
	var names []string
	if cfg.Table != "" {
		names = []string{cfg.Table}
	}
	names = append(names, cfg.Tables...)
	var meta []metaCol
	var physical []int
	for i := range env.Schema.Fields {
		if env.Metadata != nil && env.Metadata[i] != "" {
			meta = append(meta, metaCol{pos: i, key: env.Metadata[i]})
			continue
		}
		physical = append(physical, i)
	}
	option := "table"
	if cfg.Table == "" {
		option = "tables"
	}
	var caps []*capture
	seen := map[string]bool{}
	for _, n := range names {
		t, err := pgconf.ParseTable(n)
		if err != nil {
			return nil, nil, connector.Errorf(option, "%v", err)
		}
		if len(t.Schema) > maxName || len(t.Name) > maxName {
			// PostgreSQL cuts a longer name short in SQL, so the catalog
			// finds the table, but the stream names it by the cut name:
			// its changes were passed over as another table's.
			return nil, nil, connector.Errorf(option, "table %s: a PostgreSQL name is at most %d bytes (the server cuts longer ones short); name the table as the server does", t, maxName)
		}
		if seen[t.String()] {
			return nil, nil, connector.Errorf(option, "table %s is listed twice", t)
		}
		seen[t.String()] = true
		caps = append(caps, &capture{table: t, name: t.String(), out: -1})
	}
	if len(physical) == 0 {
		return nil, nil, connector.Errorf("", "the schema lists no columns of the table: list the columns to read, e.g. `- id BIGINT`")
	}
	if cfg.Table != "" {
		c := caps[0]
		for _, i := range physical {
			f := env.Schema.Fields[i]
			c.fields = append(c.fields, field{name: f.Name, typ: f.Type, pos: i})
		}
		return caps, meta, nil
	}
	return caps, meta, rowColumns(caps, env.Schema, physical)
}

// maxName is the longest name PostgreSQL keeps (NAMEDATALEN - 1).
const maxName = 63

// rowColumns gives each of several tables its ROW column: the physical
// column named after the table (its name without the schema, compared
// as SQL names are, exact case first).
func rowColumns(caps []*capture, schema row.Schema, physical []int) error {
	taken := map[int]bool{}
	for _, c := range caps {
		sub := row.Schema{}
		for _, i := range physical {
			sub.Fields = append(sub.Fields, schema.Fields[i])
		}
		j := sub.Index(c.table.Name)
		if j < 0 {
			return connector.Errorf("tables", "table %s has no column of the schema: with several tables, each table's rows fill a ROW column named after it (`- %s ROW<id BIGINT, ...>`)", c.table, c.table.Name)
		}
		i := physical[j]
		f := schema.Fields[i]
		if f.Type.ID != row.Struct {
			return connector.Errorf("tables", "column %s is %s: with several tables, the column of table %s is a ROW of its columns", f.Name, f.Type, c.table)
		}
		if taken[i] {
			return connector.Errorf("tables", "column %s would hold two tables' rows", f.Name)
		}
		taken[i] = true
		c.out = i
		for k, ff := range f.Type.Fields() {
			c.fields = append(c.fields, field{name: ff.Name, typ: ff.Type, pos: k})
		}
	}
	for _, i := range physical {
		if !taken[i] {
			return connector.Errorf("tables", "column %s of the schema is no table's: with several tables, the schema holds one ROW column per table (named after it) and metadata columns", schema.Fields[i].Name)
		}
	}
	return nil
}

// parseValue reads a column's text as its field's type. Text and
// integers, most columns, take a path of their own: a plain decimal
// integer (what PostgreSQL writes) is read here without strconv's
// generality; anything else goes to pgvalue.Parse, which gives the same
// value or the error.
func parseValue(text string, f *field) (row.Value, error) {
	switch f.typ.ID {
	case row.String:
		return row.StringValue(text), nil
	case row.BigInt:
		if i, ok := plainInt(text); ok {
			return row.BigIntValue(i), nil
		}
	case row.Int:
		if i, ok := plainInt(text); ok {
			if bits := f.typ.IntBits(); i >= -1<<(bits-1) && i < 1<<(bits-1) {
				return row.IntValue(int32(i)), nil
			}
		}
	}
	return pgvalue.Parse(text, f.typ, f.col)
}

// plainInt reads an optional '-' and 1 to 18 decimal digits (so it
// cannot overflow an int64); false for any other text.
func plainInt(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		n = -n
	}
	return n, true
}
