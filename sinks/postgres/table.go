package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/pgvalue"
	"github.com/etld/etld/pipeline/connector"
)

// column is the table column an input column goes into.
type column struct {
	pgvalue.Column
	target pgvalue.Target
}

// prepareTable checks that the table exists and can take the sink's rows,
// or creates it with create_table: true, and builds the statements. Every
// problem is an error at start naming the column, not a failure at the
// first row.
func (s *Sink) prepareTable(ctx context.Context, conn *pgx.Conn) error {
	cols, err := pgvalue.Columns(ctx, conn, s.table)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		if !s.createTable {
			return fmt.Errorf("table %s does not exist in %s%s; create it, or set create_table: true to have the sink create it", s.table, s.target, s.similarTable(ctx, conn))
		}
		ddl, err := s.createDDL()
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("create table %s: %w", s.table, err)
		}
		s.logger.Info("created table", "table", s.table.String(), "target", s.target)
		if cols, err = pgvalue.Columns(ctx, conn, s.table); err != nil {
			return err
		}
	}
	if err := s.checkColumns(cols); err != nil {
		return err
	}
	if s.mode == connector.Upsert && len(s.key) > 0 {
		if err := s.checkUniqueKey(ctx, conn); err != nil {
			return err
		}
	}
	s.stmts = newStatements(s.table, s.cols, s.key)
	return nil
}

// similarTable names a table that differs from the one asked for only in
// case, for the error about a missing table: PostgreSQL folds unquoted
// names to lower case, and Flink's dialect leaves them unquoted.
func (s *Sink) similarTable(ctx context.Context, conn *pgx.Conn) string {
	var schema, name string
	err := conn.QueryRow(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE lower(n.nspname) = lower($1) AND lower(c.relname) = lower($2) AND c.relkind IN ('r', 'p') LIMIT 1`,
		s.table.Schema, s.table.Name).Scan(&schema, &name)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (there is %s: names are taken as the catalog has them, case included)", pgconf.Table{Schema: schema, Name: name})
}

// checkColumns matches the input's columns with the table's and checks
// their types.
func (s *Sink) checkColumns(cols []pgvalue.Column) error {
	var names []string
	for _, c := range cols {
		names = append(names, pgconf.Quote(c.Name)+" "+c.Type)
	}
	used := make([]bool, len(cols))
	s.cols = make([]column, s.schema.Len())
	for i, f := range s.schema.Fields {
		j := pgvalue.Match(cols, f.Name)
		if j < 0 {
			return fmt.Errorf("table %s has no column %s for the input's column %s %s (the table has: %s)", s.table, pgconf.Quote(f.Name), f.Name, f.Type, strings.Join(names, ", "))
		}
		c := cols[j]
		if used[j] {
			return fmt.Errorf("the input's columns %s and another both go into column %s of table %s", f.Name, pgconf.Quote(c.Name), s.table)
		}
		used[j] = true
		if c.Generated {
			return fmt.Errorf("column %s of table %s is generated: the input's column %s cannot be written into it; leave it out of the query", pgconf.Quote(c.Name), s.table, f.Name)
		}
		if !pgvalue.Takes(c, f.Type) {
			hint := "change the column or CAST in the query"
			if f.Type.ID.Nested() {
				hint = "a json or jsonb column takes it as JSON, a text column as JSON text"
			}
			return fmt.Errorf("column %s of table %s is %s, which cannot hold the input's %s values (see the type mapping in the postgres sink's documentation); %s", pgconf.Quote(c.Name), s.table, c.Type, f.Type, hint)
		}
		s.cols[i] = column{Column: c, target: pgvalue.TargetOf(c)}
	}
	for j, c := range cols {
		if !used[j] && c.NotNull && !c.Defaulted {
			return fmt.Errorf("column %s of table %s is NOT NULL without a default, and the input has no such column (its columns: %s): every insert would fail", pgconf.Quote(c.Name), s.table, strings.Join(s.schema.Names(), ", "))
		}
	}
	return nil
}

// checkUniqueKey makes sure ON CONFLICT finds rows by the upsert key:
// the table needs a primary key or a unique index on exactly those
// columns. Without one PostgreSQL refuses the statement.
func (s *Sink) checkUniqueKey(ctx context.Context, conn *pgx.Conn) error {
	keys, err := pgvalue.UniqueKeys(ctx, conn, s.table)
	if err != nil {
		return err
	}
	want := make([]string, len(s.key))
	quoted := make([]string, len(s.key))
	for i, k := range s.key {
		want[i] = s.cols[k].Name
		quoted[i] = pgconf.Quote(s.cols[k].Name)
	}
	for _, cols := range keys {
		if pgvalue.SameColumns(cols, want) {
			return nil
		}
	}
	return fmt.Errorf("table %s has no PRIMARY KEY or UNIQUE index on the upsert key (%s): INSERT ... ON CONFLICT needs one to find the rows to update; add one (ALTER TABLE %s ADD PRIMARY KEY (%s))",
		s.table, strings.Join(quoted, ", "), s.table.Quoted(), strings.Join(quoted, ", "))
}

// createDDL is the CREATE TABLE for create_table: true, with the upsert
// key as PRIMARY KEY.
func (s *Sink) createDDL() (string, error) {
	isKey := map[int]bool{}
	for _, k := range s.key {
		isKey[k] = true
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS ")
	b.WriteString(s.table.Quoted())
	b.WriteString(" (\n")
	for i, f := range s.schema.Fields {
		typ, err := pgvalue.DDLType(f.Type)
		if err != nil {
			return "", fmt.Errorf("create_table: column %s: %w", f.Name, err)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(pgconf.Quote(f.Name))
		b.WriteString(" ")
		b.WriteString(typ)
		if isKey[i] || f.Type.NotNull {
			b.WriteString(" NOT NULL")
		}
	}
	if len(s.key) > 0 {
		b.WriteString(",\n  PRIMARY KEY (")
		for i, k := range s.key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pgconf.Quote(s.schema.Fields[k].Name))
		}
		b.WriteString(")")
	}
	b.WriteString("\n)")
	return b.String(), nil
}
