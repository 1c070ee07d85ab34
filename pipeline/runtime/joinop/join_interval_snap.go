package joinop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
)

// The interval join's snapshot: Flink's state laid out per key.

const intervalJoinStateVersion = 1

// Snapshot implements Snapshotter: the clock, the two expiration times,
// then per key its bytes, NULL flag, and per side its timer and rows by
// time (row, emitted), as Flink's map of time to rows.
func (j *IntervalJoin) Snapshot() ([]byte, error) {
	buf := j.appendHead(nil, j.nullTimes, j.heldKeys())
	var rids []int32
	for kid := range j.keys {
		if j.keys[kid].used && !j.keys[kid].idle {
			buf, rids = j.appendKey(buf, int32(kid), rids)
		}
	}
	return buf, nil
}

// appendHead appends the snapshot's head: the version, the clock, the
// expiration times, the count of NULL times and of the keys that
// follow.
func (j *IntervalJoin) appendHead(buf []byte, nullTimes int64, keys int) []byte {
	buf = append(buf, intervalJoinStateVersion)
	buf = binary.AppendVarint(buf, j.wm)
	buf = binary.AppendVarint(buf, j.expiration[0])
	buf = binary.AppendVarint(buf, j.expiration[1])
	buf = binary.AppendUvarint(buf, uint64(nullTimes))
	return binary.AppendUvarint(buf, uint64(keys))
}

// appendKey appends key kid's bytes, NULL flag, and per side its timer
// and rows by time; rids is scratch.
func (j *IntervalJoin) appendKey(buf []byte, kid int32, rids []int32) ([]byte, []int32) {
	k := &j.keys[kid]
	buf = row.AppendString(buf, string(j.index.Bytes(kid)))
	buf = append(buf, b2byte(k.null))
	for side := range 2 {
		ents := j.sides[side].ents
		buf = binary.AppendVarint(buf, k.timer[side])
		rids = rids[:0]
		for rid := range j.rows(kid, side) {
			rids = append(rids, rid)
		}
		// Grouped by time, each time's rows in the order cached.
		slices.SortStableFunc(rids, func(a, b int32) int { return cmp.Compare(ents[a].at, ents[b].at) })
		times := 0
		for i, rid := range rids {
			if i == 0 || ents[rid].at != ents[rids[i-1]].at {
				times++
			}
		}
		buf = binary.AppendUvarint(buf, uint64(times))
		for i := 0; i < len(rids); {
			at := ents[rids[i]].at
			n := 1
			for i+n < len(rids) && ents[rids[i+n]].at == at {
				n++
			}
			buf = binary.AppendVarint(buf, at)
			buf = binary.AppendUvarint(buf, uint64(n))
			for _, rid := range rids[i : i+n] {
				buf = j.sides[side].store.AppendEncoded(buf, rid)
				buf = append(buf, b2byte(ents[rid].emitted))
			}
			i += n
		}
	}
	return buf, rids
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Restore implements Snapshotter.
func (j *IntervalJoin) Restore(snap []byte) error {
	d := j.Decoder(snap)
	if v := d.Byte(); v != intervalJoinStateVersion {
		return fmt.Errorf("interval join: state version %d, want %d", v, intervalJoinStateVersion)
	}
	wm, e0, e1 := d.Varint(), d.Varint(), d.Varint()
	nullTimes := int64(d.Uvarint())
	r := NewIntervalJoin(j.spec)
	var timers [2][]ijTimer
	widths := [2]int{j.spec.LeftWidth, j.spec.RightWidth}
	n := d.Count(4)
	for range n {
		key := d.KeyBytes()
		null := d.Byte() == 1
		if d.Err() != nil {
			break
		}
		if _, dup := r.index.Find(key); dup {
			d.Fail("key %x twice", key)
			break
		}
		kid := r.keyID(key, null)
		for side := range 2 {
			timer := d.Varint()
			r.keys[kid].timer[side] = timer
			if timer != 0 {
				timers[side] = append(timers[side], ijTimer{at: timer, kid: kid})
			}
			nt := d.Count(2)
			for range nt {
				t := d.Varint()
				nr := d.Count(2)
				for range nr {
					cr := d.Row()
					em := d.Byte() == 1
					if d.Err() == nil && len(cr) != widths[side] {
						d.Fail("row of %d columns on side %d, want %d", len(cr), side, widths[side])
					}
					if d.Err() != nil {
						break
					}
					r.cache(kid, side, cr, t, em)
				}
			}
		}
		if d.Err() != nil {
			break
		}
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("interval join: %w", err)
	}
	r.timers[0].Fill(timers[0])
	r.timers[1].Fill(timers[1])
	r.wm, r.expiration, r.nullTimes = wm, [2]int64{e0, e1}, nullTimes
	r.Widening, r.same = j.Widening, j.same
	*j = *r
	return nil
}
