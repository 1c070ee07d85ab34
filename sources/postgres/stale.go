package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/pipeline/row"
)

// A snapshot resumed in a new snapshot (a run restored mid-snapshot, or
// one whose connection broke) reads the rest of a table as of a later
// LSN, and the stream applies to those rows only the transactions that
// committed from that LSN on. A run killed after its last checkpoint
// may have handed on more of the table, read as of an earlier LSN, and
// an upsert sink, which commits between checkpoints, holds those rows. A
// row the new snapshot has is written over; but a row deleted (or whose
// key moved) between the two LSNs is in neither the new snapshot nor
// the changes handed on, and would stay in the sink for good.
//
// So such an attempt first reads the slot's changes that committed
// before its snapshot, without consuming them (the slot is confirmed
// only in the stream phase, so it holds every change since the first
// snapshot a checkpoint names), and for each key of the part of a table
// it is about to read whose last change there deletes the row, hands on
// +I then -D of that row (the image the deletion carries) in one batch.
// Nothing downstream holds such a key (its part of the table is read as
// of a position after the deletion, and the stream has not started), so
// to a stateful operator the pair changes nothing, while an upsert sink
// deletes the key. Doing it again after another crash is as harmless.

// staleScan is where the scan stands.
type staleScan struct {
	s     *Source
	upTo  pglogrepl.LSN
	reads map[int]bool      // the tables the attempt reads
	after map[int][]keyPart // and after which key (none: all of it)
	rels  map[uint32]*staleRel
	last  map[string]*staleDel
	// made is, by key, the row the last insert or update made (kept
	// with changelog_mode upsert only).
	made  map[string]*staleDel
	order []string
	txn   pglogrepl.LSN
	micro int64
	vals  streamer // for its values
}

// staleRel is a captured table as the scanned Relation message names its
// columns.
type staleRel struct {
	table          int
	fieldAt, keyAt []int
}

// staleDel is the last change of a key in the scan when it deletes the
// row: the row as it was.
type staleDel struct {
	c     *capture
	texts []string
	there []bool
	keys  []string
	txn   pglogrepl.LSN
	micro int64
}

// staleRows returns the +I/-D pairs of the rows of the tables left to
// read that transactions committed before upTo deleted last.
func (sn *snapshotter) staleRows(ctx context.Context, upTo pglogrepl.LSN) ([]row.Change, error) {
	s := sn.s
	sc := &staleScan{s: s, upTo: upTo, reads: map[int]bool{}, after: map[int][]keyPart{},
		rels: map[uint32]*staleRel{}, last: map[string]*staleDel{}, made: map[string]*staleDel{}, vals: streamer{s: s}}
	for _, t := range sn.tables {
		c := s.caps[t.table]
		if len(c.key) == 0 {
			continue // no key tells its rows apart, for an upsert sink either
		}
		sc.reads[t.table] = true
		if t.after != nil {
			k, err := parseKey(t.after, c.keyKinds)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", c.table, err)
			}
			sc.after[t.table] = k
		}
	}
	if len(sc.reads) == 0 {
		return nil, nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.cc)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// peek leaves the slot where it is; it decodes the transactions that
	// commit before upTo (and may add the one whose commit record spans
	// it, which the scan leaves out as the stream applies it).
	rows, err := conn.Query(ctx, `SELECT data FROM pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, NULL,
		'proto_version', '1', 'publication_names', $3)`, s.slot, upTo.String(), pgconf.Quote(s.publication))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		if err := sc.message(data); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return sc.pairs(), nil
}

func (sc *staleScan) message(data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("decode a pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		sc.txn, sc.micro = m.FinalLSN, m.CommitTime.UnixMicro()
	case *pglogrepl.RelationMessage:
		sc.relation(m)
	case *pglogrepl.InsertMessage:
		sc.forget(m.RelationID, m.Tuple)
	case *pglogrepl.UpdateMessage:
		if m.OldTuple != nil {
			if r := sc.rel(m.RelationID); r != nil && !slices.Equal(sc.key(r, m.OldTuple), sc.key(r, m.NewTuple)) {
				sc.note(m.RelationID, m.OldTupleType, m.OldTuple)
			}
		}
		sc.forget(m.RelationID, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		sc.note(m.RelationID, m.OldTupleType, m.OldTuple)
	}
	return nil
}

// relation maps a captured table's columns; a table whose columns the
// source reads are not all there is left out (the stream says why).
func (sc *staleScan) relation(m *pglogrepl.RelationMessage) {
	delete(sc.rels, m.RelationID)
	name := pgconf.Table{Schema: m.Namespace, Name: m.RelationName}.String()
	i := slices.IndexFunc(sc.s.caps, func(c *capture) bool { return c.name == name })
	if i < 0 || !sc.reads[i] {
		return
	}
	c := sc.s.caps[i]
	at := func(name string) int {
		return slices.IndexFunc(m.Columns, func(col *pglogrepl.RelationMessageColumn) bool { return col.Name == name })
	}
	r := &staleRel{table: i}
	for _, f := range c.fields {
		if r.fieldAt = append(r.fieldAt, at(f.col.Name)); r.fieldAt[len(r.fieldAt)-1] < 0 {
			return
		}
	}
	for _, k := range c.key {
		if r.keyAt = append(r.keyAt, at(k.Name)); r.keyAt[len(r.keyAt)-1] < 0 {
			return
		}
	}
	sc.rels[m.RelationID] = r
}

// rel is the table of a change the scan weighs: captured, left to read,
// in a transaction the stream passes over.
func (sc *staleScan) rel(id uint32) *staleRel {
	if sc.txn >= sc.upTo {
		return nil
	}
	return sc.rels[id]
}

// key is a tuple's key texts; nil when it has none.
func (sc *staleScan) key(r *staleRel, tup *pglogrepl.TupleData) []string {
	k, err := sc.vals.values(sc.s.caps[r.table], r.keyAt, tup, nil)
	if err != nil {
		return nil
	}
	return slices.Clone(k)
}

func (sc *staleScan) id(r *staleRel, key []string) string {
	return fmt.Sprint(r.table) + "\x00" + strings.Join(key, "\x00")
}

// forget drops the key of a row a change makes: the new snapshot reads
// it, or the stream hands on a later change of it.
func (sc *staleScan) forget(id uint32, tup *pglogrepl.TupleData) {
	r := sc.rel(id)
	if r == nil {
		return
	}
	k := sc.key(r, tup)
	if k == nil {
		return
	}
	key := sc.id(r, k)
	delete(sc.last, key)
	if sc.s.upsert && sc.ahead(r, k) {
		// Under the default identity a delete logs only the key: the
		// row as this change made it stands in for the one deleted.
		if texts, err := sc.vals.values(sc.s.caps[r.table], r.fieldAt, tup, nil); err == nil {
			sc.made[key] = &staleDel{texts: slices.Clone(texts), there: slices.Clone(sc.vals.present)}
		}
	}
}

// note keeps the row a change deletes, when it lies in the part of its
// table the attempt reads.
func (sc *staleScan) note(id uint32, kind uint8, tup *pglogrepl.TupleData) {
	r := sc.rel(id)
	if r == nil {
		return
	}
	c := sc.s.caps[r.table]
	k := sc.key(r, tup)
	if k == nil {
		return
	}
	if !sc.ahead(r, k) {
		return // read before: the stream applies the change
	}
	key := sc.id(r, k)
	d := &staleDel{c: c, keys: k, txn: sc.txn, micro: sc.micro}
	if kind == pglogrepl.UpdateMessageTupleTypeOld {
		texts, err := sc.vals.values(c, r.fieldAt, tup, nil)
		if err != nil {
			return // no whole row: the stream fails on it, naming it
		}
		d.texts, d.there = slices.Clone(texts), slices.Clone(sc.vals.present)
	} else {
		// Only the key: a +I of it with NULLs elsewhere would reach a
		// stateful operator downstream (an aggregate would make a group
		// of NULLs come and go). The row as the scan last saw it made
		// stands in; when the scan did not, the pair is left out and
		// the row may stay in an upsert sink (docs/design.md).
		m := sc.made[key]
		if m == nil {
			delete(sc.last, key)
			return
		}
		d.texts, d.there = m.texts, m.there
	}
	delete(sc.made, key)
	sc.last[key] = d
	sc.order = append(sc.order, key)
}

// pairs are +I then -D of each row kept, in the order of their
// deletions; a row that does not parse is left out (the stream rejects
// it the same way if it meets it).
func (sc *staleScan) pairs() []row.Change {
	var out []row.Change
	for _, k := range sc.order {
		d := sc.last[k]
		if d == nil {
			continue
		}
		delete(sc.last, k) // a key deleted twice goes out once
		r, err := sc.s.build.build(nil, origin{c: d.c, lsn: uint64(d.txn), commitMicros: d.micro}, d.texts, d.there, d.keys)
		if err != nil {
			continue
		}
		out = append(out, row.Change{Kind: row.Insert, Row: r}, row.Change{Kind: row.Delete, Row: slices.Clone(r)})
	}
	return out
}

// ahead reports whether the key lies in the part of its table the
// attempt reads: after the key the table was read up to, if any.
func (sc *staleScan) ahead(r *staleRel, k []string) bool {
	after, ok := sc.after[r.table]
	if !ok {
		return true
	}
	c := sc.s.caps[r.table]
	kp, err := parseKey(k, c.keyKinds)
	return err == nil && compareKeys(kp, after, c.keyKinds) > 0
}
