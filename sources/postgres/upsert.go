package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/pipeline/row"
)

// With changelog_mode upsert the source emits an upsert changelog, as
// Flink CDC's postgres-cdc does with 'changelog-mode' = 'upsert': +I,
// +U with the new row and no -U, -D with the key (and the other columns
// when the table logs them). A table then needs no REPLICA IDENTITY
// FULL: the default identity (the primary key) logs the key of an
// updated or deleted row, which is all the source emits of it. The
// planner puts a changelog normalization after the source
// (connector.UpsertSource), keyed by the declared key, which keeps the
// last row of each key in checkpoints and emits -U/+U and whole -D for a
// filter, an aggregate or a join downstream.

// Upsert reports whether the source emits an upsert changelog.
func (s *Source) Upsert() bool { return s.upsert }

// UpsertKey takes the declared key's column names; Open checks them.
func (s *Source) UpsertKey(names []string) { s.upsertKey = names }

// checkIdentity reads the table's replica identity for changelog_mode
// upsert: its columns must be the key the source reads, so that a
// delete's old row carries them.
func (c *capture) checkIdentity(ctx context.Context, conn *pgx.Conn) error {
	var ident string
	var cols []string
	err := conn.QueryRow(ctx, `SELECT c.relreplident::text,
			coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_index i
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
				WHERE i.indrelid = c.oid AND CASE c.relreplident WHEN 'd' THEN i.indisprimary ELSE i.indisreplident END), '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, c.table.Schema, c.table.Name).Scan(&ident, &cols)
	if err != nil {
		return fmt.Errorf("read the replica identity of table %s: %w", c.table, err)
	}
	keys := make([]string, len(c.key))
	for i, k := range c.key {
		keys[i] = k.Name
	}
	switch {
	case len(c.key) == 0:
		return fmt.Errorf("table %s has no primary key (or unique index of NOT NULL columns): changelog_mode upsert needs one to key its rows by", c.table)
	case ident == "f":
		return nil
	case ident == "n" || len(cols) == 0:
		return fmt.Errorf("table %s has REPLICA IDENTITY NOTHING (or DEFAULT without a primary key): its deletes carry no key; run ALTER TABLE %s REPLICA IDENTITY DEFAULT with a primary key, or FULL", c.table, c.table.Quoted())
	case !slices.Equal(sorted(cols), sorted(keys)):
		return fmt.Errorf("table %s logs the old rows' columns %s (its replica identity) and the source keys its rows by %s: make the replica identity the primary key (ALTER TABLE %s REPLICA IDENTITY DEFAULT) or FULL", c.table, strings.Join(cols, ", "), strings.Join(keys, ", "), c.table.Quoted())
	}
	return nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// checkUpsertKey checks the declared key against what a -D carries: a
// table's key columns and the metadata columns, never another column
// (NULL in a -D of the default identity, so that the normalization
// would find no row for it). The key must identify a row: every key
// column of the table, or row_key (with table_name and schema_name when
// the tables differ in them).
func (s *Source) checkUpsertKey() error {
	meta := map[string]string{}
	for _, m := range s.build.meta {
		meta[s.schema.Fields[m.pos].Name] = m.key
	}
	var fields []string
	has := map[string]bool{}
	for _, name := range s.upsertKey {
		if k, ok := meta[name]; ok {
			has[k] = true
			continue
		}
		fields = append(fields, name)
	}
	want := "the table's key columns, or its row_key metadata column"
	if len(s.caps) > 1 {
		want = "its row_key, table_name (and schema_name) metadata columns"
	}
	if len(s.upsertKey) == 0 {
		return fmt.Errorf("changelog_mode upsert keys the rows by the source's key: declare `key:` as %s", want)
	}
	for _, c := range s.caps {
		var keyCols []string
		for _, k := range c.key {
			keyCols = append(keyCols, k.Name)
		}
		var declared []string
		for _, name := range fields {
			i := slices.IndexFunc(c.fields, func(f field) bool { return c.out < 0 && f.name == name })
			if i < 0 || !slices.Contains(keyCols, c.fields[i].col.Name) {
				return fmt.Errorf("key column %s is not a key column of table %s (%s): changelog_mode upsert keys the rows by what a delete carries, %s", name, c.table, strings.Join(keyCols, ", "), want)
			}
			declared = append(declared, c.fields[i].col.Name)
		}
		if has[metaRowKey] {
			continue
		}
		if len(s.caps) > 1 || !slices.Equal(sorted(declared), sorted(keyCols)) {
			return fmt.Errorf("the key [%s] does not identify a row of table %s: changelog_mode upsert needs %s", strings.Join(s.upsertKey, ", "), c.table, want)
		}
	}
	if len(s.caps) > 1 {
		schemas := map[string]bool{}
		for _, c := range s.caps {
			schemas[c.table.Schema] = true
		}
		if !has[metaTable] || len(schemas) > 1 && !has[metaSchema] {
			return fmt.Errorf("the key [%s] does not tell the tables' rows apart: changelog_mode upsert with several tables needs %s", strings.Join(s.upsertKey, ", "), want)
		}
	}
	return nil
}

// upsertChange is change for changelog_mode upsert: +I, +U of the new
// row (and -D of the old key first when an update changed the key), -D
// of the old row (its key, under the default identity).
func (st *streamer) upsertChange(ctx context.Context, c *capture, kind byte, oldType uint8, old, cur *pglogrepl.TupleData) error {
	if kind == 'D' && old == nil {
		return fatalf("a delete of table %s (transaction committed at %s) carries no key: the table's REPLICA IDENTITY became NOTHING; make it DEFAULT (with a primary key) or FULL (the deletes since are lost to the source: reset the pipeline's state (etld state reset) to read the table anew)", c.table, st.txn)
	}
	// An unchanged TOASTed value of the new row stands in for the old
	// row's only when the old row is whole.
	var prev *pglogrepl.TupleData
	if oldType == pglogrepl.UpdateMessageTupleTypeOld {
		prev = old
	}
	o := origin{c: c, lsn: uint64(st.txn), commitMicros: st.commitTime.UnixMicro()}
	var items [2]streamItem
	n := 0
	image := func(k row.Kind, tup, prev *pglogrepl.TupleData) {
		if item, inSnap := st.image(o, k, tup, prev); !inSnap {
			items[n] = item
			n++
		}
	}
	switch kind {
	case 'I':
		image(row.Insert, cur, nil)
	case 'D':
		image(row.Delete, old, nil)
	case 'U':
		if old != nil && st.keyMoved(c, old, cur) {
			image(row.Delete, old, nil)
		}
		image(row.UpdateAfter, cur, prev)
	}
	for _, it := range items[:n] {
		st.n++
		if st.n <= st.skipUpTo {
			continue
		}
		it.txn, it.n = st.txn, st.n
		if !st.add(ctx, it) {
			return ctx.Err()
		}
	}
	return nil
}

// keyMoved reports whether an update changed the row's key.
func (st *streamer) keyMoved(c *capture, old, cur *pglogrepl.TupleData) bool {
	a, errA := st.values(c, c.keyAt, old, nil)
	a = slices.Clone(a)
	b, errB := st.values(c, c.keyAt, cur, nil)
	return errA != nil || errB != nil || !slices.Equal(a, b)
}
