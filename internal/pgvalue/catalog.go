package pgvalue

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/pgconf"
)

// Querier is a connection or a pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Column is a table column as the catalog describes it.
type Column struct {
	Name string
	// Type is the column's type as PostgreSQL writes it (format_type):
	// numeric(10,2), timestamp with time zone, integer[]. Cast is the
	// same without its modifier (numeric, character varying): a cast of
	// text to it parses the text, and the assignment to the column then
	// checks the modifier as an INSERT does (an explicit cast to
	// varchar(3) would cut a longer text instead of refusing it).
	Type, Cast string
	// Base is the name of the column's type (pg_type.typname), of the
	// element type for an array, and of the underlying type for a
	// domain: int4, numeric, timestamptz, text, jsonb.
	Base string
	// Category is Base's pg_type.typcategory: N numeric, S string, D
	// date/time, B boolean, U user-defined (json, uuid), E enum, ...
	Category byte
	// Array: a one-dimensional or more array of Base.
	Array bool
	// OID and Typmod are the column's type and modifier, as the
	// replication stream's Relation messages give them.
	OID    uint32
	Typmod int32
	// NotNull: NOT NULL. Defaulted: an insert may leave the column out
	// (a default, an identity, a generated column). Generated: a
	// generated column, which an insert must leave out.
	NotNull, Defaulted, Generated bool
}

// Columns returns the columns of table in order, none when the table
// does not exist.
func Columns(ctx context.Context, q Querier, t pgconf.Table) ([]Column, error) {
	rows, err := q.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), format_type(a.atttypid, NULL),
		b.typname, b.typcategory::text, t.typcategory = 'A', a.atttypid::int8, a.atttypmod,
		a.attnotnull, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '', a.attgenerated <> ''
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_type t0 ON t0.oid = a.atttypid
		JOIN pg_type t ON t.oid = CASE WHEN t0.typtype = 'd' THEN t0.typbasetype ELSE t0.oid END
		JOIN pg_type b ON b.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE t.oid END
		WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
			AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, t.Schema, t.Name)
	if err != nil {
		return nil, fmt.Errorf("read the columns of table %s: %w", t, err)
	}
	var out []Column
	for rows.Next() {
		var c Column
		var cat string
		var oid int64
		if err := rows.Scan(&c.Name, &c.Type, &c.Cast, &c.Base, &cat, &c.Array, &oid, &c.Typmod, &c.NotNull, &c.Defaulted, &c.Generated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the columns of table %s: %w", t, err)
		}
		if cat != "" {
			c.Category = cat[0]
		}
		c.OID = uint32(oid)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of table %s: %w", t, err)
	}
	return out, nil
}

// UniqueKeys returns the column sets of the table's primary key and its
// unique indexes without a predicate (those ON CONFLICT can name), each
// in index order, the primary key first.
func UniqueKeys(ctx context.Context, q Querier, t pgconf.Table) ([][]string, error) {
	rows, err := q.Query(ctx, `SELECT i.indisprimary, array_agg(a.attname ORDER BY k.ord)
		FROM pg_index i
		JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE n.nspname = $1 AND c.relname = $2 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid, i.indisprimary
		ORDER BY i.indisprimary DESC, i.indexrelid`, t.Schema, t.Name)
	if err != nil {
		return nil, fmt.Errorf("read the indexes of table %s: %w", t, err)
	}
	var out [][]string
	for rows.Next() {
		var primary bool
		var cols []string
		if err := rows.Scan(&primary, &cols); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the indexes of table %s: %w", t, err)
		}
		out = append(out, cols)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the indexes of table %s: %w", t, err)
	}
	return out, nil
}

// SameColumns reports whether two column sets are equal, in any order.
func SameColumns(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, "\x00") == strings.Join(y, "\x00")
}

// Match finds the column of cols named name: the exact name, else the
// one name that equals it without regard to case (a table made with
// unquoted names has them in lower case; a query's columns keep the
// case they were written in). It returns -1 when none or several do.
func Match(cols []Column, name string) int {
	found := -1
	for i, c := range cols {
		if c.Name == name {
			return i
		}
		if strings.EqualFold(c.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}
