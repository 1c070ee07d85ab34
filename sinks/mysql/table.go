package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// tableColumn is a column as information_schema describes it.
type tableColumn struct {
	name, dataType, columnType string
	// hasDefault: an insert may leave the column out (a default, NULL,
	// auto_increment or a generated value).
	hasDefault bool
}

// prepareTable checks that the table exists and can take the sink's rows,
// or creates it with create_table: true. Every problem is an error at
// start naming the column, not a failure at the first row.
func (s *Sink) prepareTable(ctx context.Context) error {
	cols, err := s.columns(ctx)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		if !s.createTable {
			return fmt.Errorf("table %s does not exist in %s; create it, or set create_table: true to have the sink create it", quote(s.table), s.target)
		}
		ddl, err := s.createDDL()
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("create table %s: %w", quote(s.table), err)
		}
		s.logger.Info("created table", "table", s.table, "target", s.target)
		if cols, err = s.columns(ctx); err != nil {
			return err
		}
	}
	if err := s.checkColumns(cols); err != nil {
		return err
	}
	if s.mode == connector.Upsert && len(s.key) > 0 {
		return s.checkUniqueKey(ctx)
	}
	return nil
}

func (s *Sink) columns(ctx context.Context) ([]tableColumn, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE,
		COLUMN_DEFAULT IS NOT NULL OR IS_NULLABLE = 'YES' OR EXTRA LIKE '%auto_increment%' OR EXTRA LIKE '%GENERATED%'
		FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, s.table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of table %s: %w", quote(s.table), err)
	}
	defer rows.Close()
	var out []tableColumn
	for rows.Next() {
		var c tableColumn
		if err := rows.Scan(&c.name, &c.dataType, &c.columnType, &c.hasDefault); err != nil {
			return nil, fmt.Errorf("read the columns of table %s: %w", quote(s.table), err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of table %s: %w", quote(s.table), err)
	}
	return out, nil
}

// checkColumns matches the input's columns with the table's, by name
// without regard to case as MySQL does.
func (s *Sink) checkColumns(cols []tableColumn) error {
	byName := make(map[string]tableColumn, len(cols))
	var names []string
	for _, c := range cols {
		byName[strings.ToLower(c.name)] = c
		names = append(names, c.name+" "+c.columnType)
	}
	used := map[string]bool{}
	for _, f := range s.schema.Fields {
		c, ok := byName[strings.ToLower(f.Name)]
		if !ok {
			return fmt.Errorf("table %s has no column %s for the input's column %s %s (the table has: %s)", quote(s.table), quote(f.Name), f.Name, f.Type, strings.Join(names, ", "))
		}
		used[strings.ToLower(c.name)] = true
		if !columnTakes(c.dataType, f.Type.ID) {
			return fmt.Errorf("column %s of table %s is %s, which cannot hold the input's %s values (see the type mapping in the mysql sink's documentation); change the column or CAST in the query", quote(c.name), quote(s.table), c.columnType, f.Type)
		}
	}
	for _, c := range cols {
		if !used[strings.ToLower(c.name)] && !c.hasDefault {
			return fmt.Errorf("column %s of table %s is NOT NULL without a default, and the input has no such column (its columns: %s): every insert would fail", quote(c.name), quote(s.table), strings.Join(s.schema.Names(), ", "))
		}
	}
	return nil
}

// checkUniqueKey makes sure ON DUPLICATE KEY UPDATE finds rows by the
// upsert key: the table needs a primary key or unique index on exactly
// those columns. Without one every change would insert a new row.
func (s *Sink) checkUniqueKey(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0
		ORDER BY INDEX_NAME, SEQ_IN_INDEX`, s.table)
	if err != nil {
		return fmt.Errorf("read the indexes of table %s: %w", quote(s.table), err)
	}
	defer rows.Close()
	indexes := map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return fmt.Errorf("read the indexes of table %s: %w", quote(s.table), err)
		}
		indexes[idx] = append(indexes[idx], strings.ToLower(col))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the indexes of table %s: %w", quote(s.table), err)
	}
	want := make([]string, len(s.key))
	for i, k := range s.key {
		want[i] = strings.ToLower(s.schema.Fields[k].Name)
	}
	sort.Strings(want)
	for _, cols := range indexes {
		sort.Strings(cols)
		if strings.Join(cols, "\x00") == strings.Join(want, "\x00") {
			return nil
		}
	}
	keys := make([]string, len(s.key))
	for i, k := range s.key {
		keys[i] = quote(s.schema.Fields[k].Name)
	}
	return fmt.Errorf("table %s has no PRIMARY KEY or UNIQUE index on the upsert key (%s): upserts could not find the rows to update; add one (ALTER TABLE %s ADD PRIMARY KEY (%s))", quote(s.table), strings.Join(keys, ", "), quote(s.table), strings.Join(keys, ", "))
}

// createDDL is the CREATE TABLE for create_table: true, with the upsert
// key as PRIMARY KEY.
func (s *Sink) createDDL() (string, error) {
	isKey := map[int]bool{}
	for _, k := range s.key {
		isKey[k] = true
	}
	keyText, err := s.keyTextBytes()
	if err != nil {
		return "", fmt.Errorf("create_table: %w", err)
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS ")
	b.WriteString(quote(s.table))
	b.WriteString(" (\n")
	for i, f := range s.schema.Fields {
		typ, err := columnType(f.Type, isKey[i], keyText)
		if err != nil {
			return "", fmt.Errorf("create_table: column %s: %w", f.Name, err)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(quote(f.Name))
		b.WriteString(" ")
		b.WriteString(typ)
	}
	if len(s.key) > 0 {
		b.WriteString(",\n  PRIMARY KEY (")
		for i, k := range s.key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(s.schema.Fields[k].Name))
		}
		b.WriteString(")")
	}
	b.WriteString("\n) DEFAULT CHARSET = utf8mb4")
	return b.String(), nil
}

// maxKeyBytes is what an InnoDB index holds (MySQL and MariaDB with the
// default 16 KiB pages and DYNAMIC rows): the sum of its columns' largest
// sizes in bytes, a utf8mb4 character counting 4.
const maxKeyBytes = 3072

// keyTextBytes shares what an index holds among the primary key's text
// columns of no declared length (STRING, BYTES): the bytes each may take,
// after the key's other columns took theirs; 0 without such a column.
// A key that cannot fit is an error naming its columns.
func (s *Sink) keyTextBytes() (int, error) {
	fixed, open := 0, 0
	var sizes []string
	for _, k := range s.key {
		f := s.schema.Fields[k]
		n := indexBytes(f.Type)
		if n == 0 {
			open++
			continue
		}
		if n > maxKeyBytes {
			return 0, fmt.Errorf("key column %s %s takes up to %d bytes (utf8mb4: 4 a character), and an index holds %d bytes; CAST it to a shorter type in the query, or create the table yourself", f.Name, f.Type, n, maxKeyBytes)
		}
		fixed += n
		sizes = append(sizes, fmt.Sprintf("%s %d", f.Name, n))
	}
	// A text column of no declared length is given at least 16
	// characters (64 bytes): less would refuse most values.
	if fixed+open*64 > maxKeyBytes {
		what := fmt.Sprintf("the key columns take up to %d bytes (%s)", fixed, strings.Join(sizes, ", "))
		if open > 0 {
			what += fmt.Sprintf(", leaving too little for its %d text columns of no declared length", open)
		}
		return 0, fmt.Errorf("%s, and an index holds %d bytes; CAST them to shorter types in the query, or create the table yourself", what, maxKeyBytes)
	}
	if open == 0 {
		return 0, nil
	}
	return (maxKeyBytes - fixed) / open, nil
}

// indexBytes is the largest size in bytes of a value of type t in an
// index (its column as columnType creates it); 0 for text of no declared
// length, whose length the key's share decides.
func indexBytes(t row.Type) int {
	switch t.ID {
	case row.Boolean:
		return 1
	case row.Int:
		return t.IntBits() / 8
	case row.Float:
		return 4
	case row.BigInt, row.Double:
		return 8
	case row.Decimal:
		return decimalBytes(t.Precision-t.Scale) + decimalBytes(t.Scale)
	case row.Date:
		return 3
	case row.Timestamp, row.TimestampLTZ:
		return 5 + (min(t.Precision, 6)+1)/2
	case row.String:
		return 4 * t.Length
	case row.Bytes:
		return t.Length
	}
	return 0
}

// decimalBytes is the storage of n decimal digits of a DECIMAL's integer
// or fraction part: 4 bytes for each 9, fewer for the rest.
func decimalBytes(n int) int {
	return n/9*4 + [9]int{0, 1, 1, 2, 2, 3, 3, 4, 4}[n%9]
}

// queryServer reads the server's version and max_allowed_packet.
func queryServer(ctx context.Context, db *sql.DB) (server, int, error) {
	var version string
	var packet int64
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@max_allowed_packet").Scan(&version, &packet); err != nil {
		return server{}, 0, err
	}
	return parseVersion(version), int(packet), nil
}
