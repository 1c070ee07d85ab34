package joinop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A regular Join's state cut in key groups, for the runtime's KeyedTwo,
// which runs it as several workers, both inputs split by the join key,
// and restores it with another number of them (operator.KeyGrouped). A
// group's part is a snapshot (SnapshotTo's layout) of the rows of its
// join keys on both sides and of a batch join's held changes of its
// keys; group 0's also carries what belongs to no key (a NOT IN's rows
// with a NULL key and its counts, which the planner keeps on one
// worker). RestoreGroups joins parts into one snapshot. A row's key is
// row.KeyOf of its side's key columns, which the split hashes: the
// group a side's row is in is that of its key's bytes in the index.

// SnapshotGroups implements operator.KeyGrouped.
func (j *Join) SnapshotGroups(part func(g int, b []byte) error) error {
	type entry struct {
		side int
		ref  rowRef
	}
	var rows [operator.KeyGroups][]entry
	var has [operator.KeyGroups]bool
	group := map[int32]uint8{} // by key id: the sides share the index
	for side, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		for kid, ref := range s.eachRow {
			g := uint8(0)
			if side < 2 {
				var ok bool
				if g, ok = group[kid]; !ok {
					g = uint8(operator.KeyGroupOf(s.index.bytes(kid)))
					group[kid] = g
				}
			}
			rows[g] = append(rows[g], entry{side, ref})
			has[g] = true
		}
	}
	// A direct join's right rows are its probe table's: each group's
	// entries encoded here, and counted.
	var direct [operator.KeyGroups][]byte
	var ndirect [operator.KeyGroups]int
	var kbuf []byte
	if j.direct {
		for r, count := range j.hash.each {
			kbuf = row.KeyOf(kbuf[:0], r, j.spec.RightKeys)
			g := operator.KeyGroupOf(kbuf)
			direct[g] = row.AppendRow(direct[g], r)
			direct[g] = binary.AppendUvarint(direct[g], uint64(count))
			direct[g] = binary.AppendUvarint(direct[g], 0)
			ndirect[g]++
			has[g] = true
		}
	}
	var held, nullRight [operator.KeyGroups][]row.Change
	for i, cs := range [][]row.Change{j.held, j.nullRight} {
		keys := j.spec.LeftKeys
		if i == 1 {
			keys = j.spec.RightKeys
		}
		for _, c := range cs {
			g := 0
			if len(c.Row) > maxCol(keys) {
				kbuf = row.KeyOf(kbuf[:0], c.Row, keys)
				g = operator.KeyGroupOf(kbuf)
			}
			if i == 0 {
				held[g] = append(held[g], c)
			} else {
				nullRight[g] = append(nullRight[g], c)
			}
			has[g] = true
		}
	}
	has[0] = has[0] || j.rightRows != 0 || j.rightNulls != 0 || j.settled
	var buf []byte
	for g := range operator.KeyGroups {
		if !has[g] {
			continue
		}
		buf = append(buf[:0], j.stateVersion())
		if j.settled {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		for side, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
			if side == 1 && j.direct {
				buf = binary.AppendUvarint(buf, uint64(ndirect[g]))
				buf = append(buf, direct[g]...)
				continue
			}
			n := 0
			for _, e := range rows[g] {
				if e.side == side {
					n++
				}
			}
			buf = binary.AppendUvarint(buf, uint64(n))
			for _, e := range rows[g] {
				if e.side != side {
					continue
				}
				count, assoc := s.counts(e.ref)
				buf = s.appendRow(buf, e.ref)
				buf = binary.AppendUvarint(buf, uint64(count))
				buf = binary.AppendUvarint(buf, uint64(assoc))
				buf = s.appendTime(buf, e.ref)
			}
		}
		var rr, rn int64
		if g == 0 {
			rr, rn = j.rightRows, j.rightNulls
		}
		buf = binary.AppendVarint(buf, rr)
		buf = binary.AppendVarint(buf, rn)
		for _, cs := range [][]row.Change{held[g], nullRight[g]} {
			buf = binary.AppendUvarint(buf, uint64(len(cs)))
			for _, c := range cs {
				buf = append(buf, byte(c.Kind))
				buf = row.AppendRow(buf, c.Row)
			}
		}
		if err := part(g, buf); err != nil {
			return err
		}
	}
	return nil
}

func maxCol(cols []int) int {
	m := -1
	for _, c := range cols {
		m = max(m, c)
	}
	return m
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts into
// one snapshot, section by section, and restores that.
func (j *Join) RestoreGroups(parts [][]byte) error {
	v := j.stateVersion()
	var (
		settled               bool
		sides                 [3][]byte
		nsides                [3]int
		rightRows, rightNulls int64
		changes               [2][]byte
		nchanges              [2]int
	)
	for i, p := range parts {
		d := row.NewDecoder(p)
		pv := d.Byte()
		if i == 0 {
			v = pv
		}
		if pv != v || pv != JoinStateVersion && pv != joinTTLStateVersion {
			return fmt.Errorf("join: key group part %d: version %d, want %d", i, pv, v)
		}
		timed := pv == joinTTLStateVersion
		settled = d.Byte() == 1 || settled
		// raw reads what read reads, and returns its bytes.
		raw := func(read func()) []byte {
			start := len(p) - d.Len()
			read()
			return p[start : len(p)-d.Len()]
		}
		for s := range sides {
			n := d.Count(1)
			sides[s] = append(sides[s], raw(func() {
				for range n {
					d.Row()
					d.Uvarint()
					d.Uvarint()
					if timed {
						d.Varint()
					}
				}
			})...)
			nsides[s] += n
		}
		rightRows += d.Varint()
		rightNulls += d.Varint()
		for c := range changes {
			n := d.Count(2)
			changes[c] = append(changes[c], raw(func() {
				for range n {
					d.Byte()
					d.Row()
				}
			})...)
			nchanges[c] += n
		}
		if err := d.End(); err != nil {
			return fmt.Errorf("join: key group part %d: %w", i, err)
		}
	}
	snap := []byte{v, 0}
	if settled {
		snap[1] = 1
	}
	for s := range sides {
		snap = binary.AppendUvarint(snap, uint64(nsides[s]))
		snap = append(snap, sides[s]...)
	}
	snap = binary.AppendVarint(snap, rightRows)
	snap = binary.AppendVarint(snap, rightNulls)
	for c := range changes {
		snap = binary.AppendUvarint(snap, uint64(nchanges[c]))
		snap = append(snap, changes[c]...)
	}
	return j.Restore(snap)
}

var _ operator.KeyGrouped = (*Join)(nil)
