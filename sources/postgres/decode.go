package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pglogrepl"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// message handles one pgoutput message of the stream.
func (st *streamer) message(ctx context.Context, data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fatalf("decode a pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		st.txn, st.n, st.commitTime = m.FinalLSN, 0, m.CommitTime
		st.skipping = m.FinalLSN < st.skipDone
		st.skipUpTo = 0
		if m.FinalLSN == st.skipTxn {
			st.skipUpTo = st.skipN
		}
	case *pglogrepl.CommitMessage:
		st.txn, st.n = 0, 0
		if st.skipping {
			return nil
		}
		st.done = m.TransactionEndLSN
		if !st.add(ctx, streamItem{kind: itemCommit, lsn: m.TransactionEndLSN}) || !st.flush(ctx) {
			return ctx.Err()
		}
	case *pglogrepl.RelationMessage:
		return st.relation(ctx, m)
	case *pglogrepl.InsertMessage:
		return st.change(ctx, 'I', m.RelationID, 0, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return st.change(ctx, 'U', m.RelationID, m.OldTupleType, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return st.change(ctx, 'D', m.RelationID, m.OldTupleType, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if c := st.rels[id]; c != nil && !st.skipping {
				return fatalf("table %s was truncated (transaction committed at %s): the source cannot retract the rows it removed, which downstream results still hold; reload the pipeline from nothing (reset its state: etld state reset) to read the table anew", c.table, st.txn)
			}
		}
	}
	return nil
}

// relation takes a table's definition: it maps the declared columns onto
// the stream's, and compares it with the last one seen. A change to a
// declared column (or the key) is an error naming it; a change to other
// columns is logged and taken.
func (st *streamer) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	i, ok := st.byName[pgconf.Table{Schema: m.Namespace, Name: m.RelationName}.String()]
	if !ok {
		return nil
	}
	c := st.s.caps[i]
	def := make([]string, len(m.Columns))
	for j, col := range m.Columns {
		def[j] = col.Name + " " + strconv.FormatUint(uint64(col.DataType), 10) + "/" + strconv.FormatInt(int64(col.TypeModifier), 10)
	}
	if c.relID != 0 && c.relID != m.RelationID {
		return fatalf("table %s was dropped and created again (its relation id went from %d to %d at the transaction committed at %s): the source cannot retract the old table's rows; reload the pipeline from nothing (reset its state: etld state reset)", c.table, c.relID, m.RelationID, st.txn)
	}
	if c.relDef != nil && !slices.Equal(c.relDef, def) {
		changes, used := diffDefinitions(c, c.relDef, def)
		if used {
			return fatalf("table %s changed in the transaction committed at %s: %s; the declared schema no longer matches the table: change the pipeline's schema (and reset its state with etld state reset, or keep it if the change keeps the columns' values), then start it again", c.table, st.txn, strings.Join(changes, "; "))
		}
		st.s.logger.Info("a captured table changed in columns the source does not read; going on", "table", c.name, "changes", strings.Join(changes, "; "))
	}
	fieldAt := make([]int, len(c.fields))
	for k, f := range c.fields {
		fieldAt[k] = -1
		for j, col := range m.Columns {
			if col.Name == f.col.Name {
				fieldAt[k] = j
				if col.DataType != f.col.OID {
					return fatalf("column %s of table %s is %s in the stream (the transaction committed at %s) and %s in the catalog: the table changed between them; change the pipeline's schema if needed and reset its state (etld state reset) to read the table anew", pgconf.Quote(f.col.Name), c.table, typeName(col.DataType, col.TypeModifier), st.txn, f.col.Type)
				}
			}
		}
		if fieldAt[k] < 0 {
			return fatalf("table %s has no column %s in the stream (the transaction committed at %s): it was dropped or renamed; change the pipeline's schema and reset its state (etld state reset) to read the table anew", c.table, pgconf.Quote(f.col.Name), st.txn)
		}
	}
	keyAt := make([]int, len(c.key))
	for k, kc := range c.key {
		keyAt[k] = slices.IndexFunc(m.Columns, func(col *pglogrepl.RelationMessageColumn) bool { return col.Name == kc.Name })
		if keyAt[k] < 0 {
			return fatalf("table %s has no key column %s in the stream (the transaction committed at %s)", c.table, pgconf.Quote(kc.Name), st.txn)
		}
	}
	c.relID, c.relDef, c.fieldAt, c.keyAt = m.RelationID, def, fieldAt, keyAt
	st.rels[m.RelationID] = c
	if !st.add(ctx, streamItem{kind: itemRelation, table: i, def: def}) {
		return ctx.Err()
	}
	return nil
}

// diffDefinitions names the changes from one definition of a table to
// another, and whether one touches a column the source reads.
func diffDefinitions(c *capture, old, cur []string) ([]string, bool) {
	split := func(def []string) ([]string, map[string]string) {
		var names []string
		types := map[string]string{}
		for _, d := range def {
			i := strings.LastIndexByte(d, ' ')
			names = append(names, d[:i])
			types[d[:i]] = d[i+1:]
		}
		return names, types
	}
	oldNames, oldTypes := split(old)
	curNames, curTypes := split(cur)
	read := map[string]bool{}
	for _, f := range c.fields {
		read[f.col.Name] = true
	}
	for _, k := range c.key {
		read[k.Name] = true
	}
	var out []string
	used := false
	for _, n := range oldNames {
		t, ok := curTypes[n]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("column %s was dropped (or renamed)", pgconf.Quote(n)))
		case t != oldTypes[n]:
			out = append(out, fmt.Sprintf("column %s changed type from %s to %s", pgconf.Quote(n), typeText(oldTypes[n]), typeText(t)))
		default:
			continue
		}
		used = used || read[n]
	}
	for _, n := range curNames {
		if _, ok := oldTypes[n]; !ok {
			out = append(out, fmt.Sprintf("column %s was added (%s)", pgconf.Quote(n), typeText(curTypes[n])))
		}
	}
	return out, used
}

// typeText names the "oid/typmod" of a definition.
func typeText(t string) string {
	oid, mod, _ := strings.Cut(t, "/")
	o, _ := strconv.ParseUint(oid, 10, 32)
	m, _ := strconv.ParseInt(mod, 10, 32)
	return typeName(uint32(o), int32(m))
}

// typeName names a type by its oid: the built-in types the source maps,
// and the oid of any other.
func typeName(oid uint32, typmod int32) string {
	names := map[uint32]string{16: "boolean", 17: "bytea", 20: "bigint", 21: "smallint", 23: "integer", 25: "text",
		114: "json", 700: "real", 701: "double precision", 1042: "character", 1043: "character varying",
		1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz", 1700: "numeric", 2950: "uuid", 3802: "jsonb"}
	n, ok := names[oid]
	if !ok {
		n = fmt.Sprintf("type oid %d", oid)
	}
	switch {
	case typmod < 0:
	case oid == 1700:
		n += fmt.Sprintf("(%d,%d)", (typmod-4)>>16, (typmod-4)&0xffff)
	case oid == 1042 || oid == 1043:
		n += fmt.Sprintf("(%d)", typmod-4)
	default:
		n += fmt.Sprintf("(%d)", typmod)
	}
	return n
}

// change turns an insert, update or delete of a captured table into
// changes: +I, -U and +U, -D, each left out when the snapshot holds its
// effect already, and queues those not handed on before.
func (st *streamer) change(ctx context.Context, kind byte, rel uint32, oldType uint8, old, cur *pglogrepl.TupleData) error {
	c := st.rels[rel]
	if c == nil || st.skipping {
		return nil
	}
	if st.s.upsert {
		return st.upsertChange(ctx, c, kind, oldType, old, cur)
	}
	if kind != 'I' && oldType != pglogrepl.UpdateMessageTupleTypeOld {
		what := map[byte]string{'U': "an update", 'D': "a delete"}[kind]
		return fatalf("%s of table %s (transaction committed at %s) carries no whole old row: the table's REPLICA IDENTITY is no longer FULL; run ALTER TABLE %s REPLICA IDENTITY FULL (the changes since are lost to the source: reset the pipeline's state (etld state reset) to read the table anew)", what, c.table, st.txn, c.table.Quoted())
	}
	o := origin{c: c, lsn: uint64(st.txn), commitMicros: st.commitTime.UnixMicro()}
	var items [2]streamItem
	n := 0
	image := func(k row.Kind, tup, prev *pglogrepl.TupleData) {
		item, inSnap := st.image(o, k, tup, prev)
		if !inSnap {
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
		if st.keyMoved(c, old, cur) {
			// An update of the key: a row leaves and another comes, as
			// Debezium tells it. -U/+U would pair rows of two keys, and
			// an upsert sink, which drops -U, would keep the old key's.
			image(row.Delete, old, nil)
			image(row.Insert, cur, old)
			break
		}
		image(row.UpdateBefore, old, nil)
		image(row.UpdateAfter, cur, old)
		// One image left out by the snapshot: the other stands alone.
		if n == 1 && items[0].kind == itemChange {
			switch items[0].change.Kind {
			case row.UpdateBefore:
				items[0].change.Kind = row.Delete
			case row.UpdateAfter:
				items[0].change.Kind = row.Insert
			}
		}
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

// image makes the item of one row image (prev: the old row, whose values
// stand in for unchanged TOASTed ones), and says whether the snapshot
// holds it already.
func (st *streamer) image(o origin, k row.Kind, tup, prev *pglogrepl.TupleData) (streamItem, bool) {
	c := o.c
	keys, err := st.values(c, c.keyAt, tup, prev)
	keys = slices.Clone(keys) // values reuses its slice for the fields below
	var key []keyPart
	if err == nil && c.orderable() && pglogrepl.LSN(o.lsn) < c.window.max {
		if key, err = parseKey(keys, c.keyKinds); err == nil && c.window.inSnapshot(pglogrepl.LSN(o.lsn), key, c.keyKinds) {
			return streamItem{}, true
		}
	}
	var r row.Row
	if err == nil {
		var texts []string
		if texts, err = st.values(c, c.fieldAt, tup, prev); err == nil {
			r, err = st.s.build.build(nil, o, texts, st.present, keys)
		}
	}
	if err != nil {
		return streamItem{kind: itemBad, bad: &connector.BadRecord{
			Position: fmt.Sprintf("postgres table %s, transaction committed at %s, change %d", c.table, pglogrepl.LSN(o.lsn), st.n+1),
			Raw:      []byte(tupleText(tup)),
			Err:      err,
		}}, false
	}
	return streamItem{kind: itemChange, change: row.Change{Kind: k, Row: r}}, false
}

// values are the texts of a tuple's columns at the positions at (in
// st.texts and st.present, reused).
func (st *streamer) values(c *capture, at []int, tup, prev *pglogrepl.TupleData) ([]string, error) {
	st.texts, st.present = st.texts[:0], st.present[:0]
	for _, j := range at {
		if tup == nil || j >= len(tup.Columns) {
			return nil, fmt.Errorf("the row has %d columns, and column %d was read", columnCount(tup), j+1)
		}
		col := tup.Columns[j]
		if col.DataType == pglogrepl.TupleDataTypeToast && prev != nil && j < len(prev.Columns) {
			col = prev.Columns[j]
		}
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
			st.texts, st.present = append(st.texts, ""), append(st.present, false)
		case pglogrepl.TupleDataTypeText:
			st.texts, st.present = append(st.texts, string(col.Data)), append(st.present, true)
		default:
			return nil, fmt.Errorf("table %s: a value of kind %q (an unchanged TOASTed value without the old row)", c.table, col.DataType)
		}
	}
	return st.texts, nil
}

func columnCount(t *pglogrepl.TupleData) int {
	if t == nil {
		return 0
	}
	return len(t.Columns)
}

// tupleText shows a tuple for a dead letter: its values' texts.
func tupleText(t *pglogrepl.TupleData) string {
	if t == nil {
		return ""
	}
	parts := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
			parts[i] = "NULL"
		case pglogrepl.TupleDataTypeText:
			parts[i] = string(col.Data)
		default:
			parts[i] = "?"
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
