package mysql

import (
	"context"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A snapshot resumed as of a later position does not replay what the
// run before the restored checkpoint handed on after it: that run read
// the rest of a table as of an earlier position (and maybe the binlog
// after it), the resumed one reads it as of the new position and passes
// over the binlog's changes before that. An upsert sink, which commits
// its batches between checkpoints, may hold that run's rows. A row the
// new snapshot has (it existed at the new position) is written over; but
// a row deleted (or whose key moved) between the two positions is in
// neither the new snapshot nor the changes handed on, and would stay in
// the sink for good.
//
// So a resumed attempt first reads the binlog from where it will be read
// after the snapshot up to the attempt's position, and for each key of a
// captured table whose last change there is one the binlog read will
// pass over, and which deletes the row, hands on +I then -D of that row
// (the image before the deletion) in one batch. Downstream holds no row
// of such a key (the part of the table it lies in is read as of a
// position after the deletion), so to a stateful operator the pair
// changes nothing, while an upsert sink deletes the key. Doing it again
// after another crash is as harmless.

// staleChange is the last change of a key in the binlog scanned, when it
// deletes a row the binlog read will pass over.
type staleChange struct {
	m    *rowMapper
	img  []any
	pos  binlogPos
	gtid string
	opTS int64
}

// staleRows scans the binlog from from up to to and returns the +I/-D
// pairs of the rows deleted there that the binlog read will pass over
// and no later change of the scan re-creates.
func (s *CDC) staleRows(ctx context.Context, from, to binlogPos) ([]row.Change, error) {
	if from.File == "" || from.compare(to) >= 0 {
		return nil, nil
	}
	cfg, err := s.syncerConfig()
	if err != nil {
		return nil, err
	}
	bl := &binlogReader{syncer: replication.NewBinlogSyncer(cfg), cur: from, mappers: map[uint64]*rowMapper{}}
	defer func() {
		bl.syncer.Close()
		s.bl = nil
	}()
	// The row mappers live on the binlog reader; the binlog proper is
	// read only once the snapshot is done.
	s.bl = bl
	if bl.stream, err = bl.syncer.StartSync(mysql.Position{Name: from.File, Pos: from.Pos}); err != nil {
		return nil, classifyBinlog(err)
	}
	last := map[string]*staleChange{}
	var order []string
	for bl.cur.compare(to) < 0 {
		ev, err := bl.stream.GetEvent(ctx)
		if err != nil {
			return nil, classifyBinlog(err)
		}
		h := ev.Header
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			next := binlogPos{File: string(e.NextLogName), Pos: uint32(e.Position)}
			if h.LogPos != 0 || next.File != bl.cur.File {
				bl.cur = next
			}
			continue
		case *replication.FormatDescriptionEvent, *replication.HeartbeatEvent:
			continue
		case *replication.MariadbGTIDEvent:
			bl.inTxn, bl.txnStart, bl.txnGTID = true, binlogPos{File: bl.cur.File, Pos: h.LogPos - h.EventSize}, e.GTID.String()
			bl.opTS = int64(h.Timestamp) * 1_000_000
		case *replication.GTIDEvent:
			bl.inTxn, bl.txnStart, bl.txnGTID = true, binlogPos{File: bl.cur.File, Pos: h.LogPos - h.EventSize}, ""
			if next, err := e.GTIDNext(); err == nil {
				bl.txnGTID = next.String()
			}
			bl.opTS = int64(h.Timestamp) * 1_000_000
		case *replication.XIDEvent:
			bl.inTxn = false
		case *replication.RowsEvent:
			if !bl.inTxn {
				bl.inTxn, bl.txnStart = true, binlogPos{File: bl.cur.File, Pos: h.LogPos - h.EventSize}
				bl.opTS = int64(h.Timestamp) * 1_000_000
			}
			order = append(order, s.staleKeys(ctx, ev, e, last)...)
		}
		if h.LogPos > bl.cur.Pos {
			bl.cur.Pos = h.LogPos
		}
	}
	var out []row.Change
	for _, k := range order {
		c := last[k]
		if c == nil {
			continue
		}
		delete(last, k) // a key listed twice goes out once
		r, err := c.m.convert(c.img, s.slab)
		if err != nil {
			bad := connector.BadRecord{Position: fmt.Sprintf("mysql binlog %s, table %s, row %s", c.pos, c.m.table.name, keyText(c.m.table, c.m.key(c.img))), Raw: []byte(c.m.rowText(c.img)), Err: err}
			if err := s.reject(bad); err != nil {
				return nil, err
			}
			continue
		}
		del := make(row.Row, len(r))
		copy(del, r)
		s.fillMeta(r, changeMeta{table: c.m.table.name, kind: row.Insert, opTS: c.opTS, pos: c.pos, gtid: c.gtid})
		s.fillMeta(del, changeMeta{table: c.m.table.name, kind: row.Delete, opTS: c.opTS, pos: c.pos, gtid: c.gtid})
		out = append(out, row.Change{Kind: row.Insert, Row: r}, row.Change{Kind: row.Delete, Row: del})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// staleKeys notes the row changes of a rows event in last: a row deleted
// by a change the binlog read will pass over, by key; any other change
// of a key forgets it. It returns the keys it noted.
func (s *CDC) staleKeys(ctx context.Context, ev *replication.BinlogEvent, e *replication.RowsEvent, last map[string]*staleChange) []string {
	ti := s.captured(e.Table)
	if ti == nil {
		return nil
	}
	m, err := s.mapper(e.Table, ti, ev.Header)
	if err != nil {
		// The binlog read meets the same event and fails there, naming
		// it.
		return nil
	}
	bl := s.bl
	pos := binlogPos{File: bl.cur.File, Pos: ev.Header.LogPos - ev.Header.EventSize}
	step := 1
	if e.Type() == replication.EnumRowsEventTypeUpdate {
		step = 2
	}
	var noted []string
	keyOf := func(img []any) string { return ti.name.String() + "\x00" + keyText(ti, m.key(img)) }
	for i := 0; i+step <= len(e.Rows); i += step {
		images := e.Rows[i : i+step]
		switch e.Type() {
		case replication.EnumRowsEventTypeInsert:
			delete(last, keyOf(images[0]))
		case replication.EnumRowsEventTypeUpdate:
			before, after := keyOf(images[0]), keyOf(images[1])
			if before != after {
				noted = append(noted, s.noteDeleted(ctx, m, images[0], before, pos, last)...)
			}
			delete(last, after)
		case replication.EnumRowsEventTypeDelete:
			noted = append(noted, s.noteDeleted(ctx, m, images[0], keyOf(images[0]), pos, last)...)
		}
	}
	return noted
}

// noteDeleted notes the row img deleted, if the binlog read will pass
// over its deletion; else forgets its key (the binlog read hands the
// deletion on).
func (s *CDC) noteDeleted(ctx context.Context, m *rowMapper, img []any, key string, pos binlogPos, last map[string]*staleChange) []string {
	at, ok, err := s.readAsOf(ctx, m, img)
	if err == nil && ok && s.bl.txnStart.compare(at) >= 0 {
		delete(last, key)
		return nil
	}
	// Not read yet (it will be as of a position after this change), or
	// read as of a later position: the binlog read passes over it. On
	// an error the pair is handed on anyway: it is harmless.
	bl := s.bl
	last[key] = &staleChange{m: m, img: img, pos: pos, gtid: bl.txnGTID, opTS: bl.opTS}
	return []string{key}
}
