package matchop

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
)

const stateVersion = 1

// Snapshot encodes the clock (watermark, time type, late count), the
// arrival and row counters, then each partition in key order: its key
// and partition columns, its waiting rows, the rows its matches hold
// (each once, by sequence number), its partial matches in order and its
// held completed matches (each queue in its array order), each match as
// its state, start and rows.
func (m *Match) Snapshot() ([]byte, error) {
	buf := aggop.AppendClock(stateVersion, m.wm, m.timeID, m.dropped)
	buf = binary.AppendUvarint(buf, m.arrival)
	buf = binary.AppendUvarint(buf, m.seq)
	keys := slices.Sorted(maps.Keys(m.parts))
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		buf = m.appendPart(buf, m.parts[k])
	}
	return buf, nil
}

func (m *Match) appendPart(buf []byte, p *part) []byte {
	buf = row.AppendString(buf, p.key)
	buf = row.AppendRow(buf, p.keyRow)
	buf = binary.AppendUvarint(buf, uint64(len(p.pending)))
	for _, w := range p.pending {
		buf = binary.AppendVarint(buf, w.ts)
		buf = binary.AppendUvarint(buf, w.arrival)
		buf = row.AppendRow(buf, w.r)
	}
	events := map[uint64]*event{}
	for _, pm := range slices.Concat(p.partials.items, p.completed.items) {
		for s := pm.last; s != nil; s = s.prev {
			events[s.ev.seq] = s.ev
		}
	}
	seqs := make([]uint64, 0, len(events))
	for s := range events {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	buf = binary.AppendUvarint(buf, uint64(len(seqs)))
	for _, s := range seqs {
		buf = binary.AppendUvarint(buf, s)
		buf = binary.AppendVarint(buf, events[s].ts)
		buf = row.AppendRow(buf, events[s].r)
	}
	for _, list := range [][]*partial{p.partials.items, p.completed.items} {
		buf = binary.AppendUvarint(buf, uint64(len(list)))
		for _, pm := range list {
			buf = binary.AppendUvarint(buf, uint64(pm.state))
			buf = binary.AppendUvarint(buf, pm.startSeq)
			buf = binary.AppendVarint(buf, pm.startTs)
			rows := rowsOf(nil, pm.last)
			buf = binary.AppendUvarint(buf, uint64(len(rows)))
			for _, r := range rows {
				buf = binary.AppendUvarint(buf, r.ev.seq)
				buf = binary.AppendUvarint(buf, uint64(r.v))
			}
		}
	}
	return buf
}

// Restore replaces the operator's state with a snapshot's.
func (m *Match) Restore(snap []byte) error {
	d := m.Decoder(snap)
	wm, timeID, dropped, err := aggop.ReadClock(d, stateVersion, "match_recognize")
	if err != nil {
		return err
	}
	m.wm, m.timeID, m.dropped = wm, timeID, dropped
	m.arrival, m.seq = d.Uvarint(), d.Uvarint()
	m.parts = map[string]*part{}
	for range d.Count(1) {
		p, err := m.readPart(d)
		if err != nil {
			return err
		}
		m.parts[p.key] = p
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("match_recognize: restore: %w", err)
	}
	return nil
}

func (m *Match) readPart(d *row.Decoder) (*part, error) {
	p := &part{key: d.KeyStr(), keyRow: d.Row()}
	for range d.Count(1) {
		p.pending = append(p.pending, pendRow{ts: d.Varint(), arrival: d.Uvarint(), r: d.Row()})
	}
	events := map[uint64]*event{}
	for range d.Count(1) {
		ev := &event{seq: d.Uvarint(), ts: d.Varint()}
		ev.r = d.Row()
		events[ev.seq] = ev
	}
	for i := range 2 {
		var list []*partial
		for range d.Count(1) {
			pm := &partial{state: int(d.Uvarint()), startSeq: d.Uvarint(), startTs: d.Varint()}
			if pm.state < 0 || pm.state >= len(m.nfa.states) {
				return nil, fmt.Errorf("match_recognize: restore: state %d of %d", pm.state, len(m.nfa.states))
			}
			for range d.Count(1) {
				ev, v := events[d.Uvarint()], int(d.Uvarint())
				if ev == nil || v >= len(m.spec.Vars) {
					return nil, fmt.Errorf("match_recognize: restore: a match holds an unknown row or variable")
				}
				pm.last = &step{ev: ev, v: v, prev: pm.last}
			}
			list = append(list, pm)
		}
		// The queues' arrays as they were: their order decides ties.
		if i == 0 {
			p.partials = pq{items: list}
		} else {
			p.completed = pq{items: list}
		}
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("match_recognize: restore: %w", err)
		}
	}
	return p, nil
}
