package joinop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// An IntervalJoin's state cut in key groups, for the runtime's
// KeyedTwo, which runs it as several workers, both inputs split by the
// join key, and restores it with another number of them
// (operator.KeyGrouped). A group's part is a snapshot (Snapshot's
// layout) of the group's keys alone, each with both sides' cached rows
// and its cleanup timers; group 0's carries the count of NULL times.
// RestoreGroups joins parts into one snapshot.
//
// The clock and the two expiration times belong to no key: they are
// the shared state (operator.SharedState). The expiration times are
// more: one instance moves them as rows and timers of any key come
// (Flink's TimeIntervalJoin keeps one per operator), and a row scans
// the other side's cache or not by them, so a late row's matches
// depend on them. To decide every row as one instance does, each
// worker walks every batch whole and moves its expiration times over
// all rows (SeeInput), and after a watermark, whose timers each worker
// fires for its own keys, the workers take the times one instance
// would have (SyncShared: those a fired timer moved).

// SnapshotGroups implements operator.KeyGrouped.
func (j *IntervalJoin) SnapshotGroups(part func(g int, b []byte) error) error {
	var groups [operator.KeyGroups][]int32
	for kid := range j.keys {
		if j.keys[kid].used && !j.keys[kid].idle {
			g := operator.KeyGroupOf(j.index.Bytes(int32(kid)))
			groups[g] = append(groups[g], int32(kid))
		}
	}
	var buf []byte
	var rids []int32
	for g, kids := range groups {
		if len(kids) == 0 && (g != 0 || j.nullTimes == 0) {
			continue
		}
		nullTimes := int64(0)
		if g == 0 {
			nullTimes = j.nullTimes
		}
		buf = j.appendHead(buf[:0], nullTimes, len(kids))
		for _, kid := range kids {
			buf, rids = j.appendKey(buf, kid, rids)
		}
		if err := part(g, buf); err != nil {
			return err
		}
	}
	return nil
}

// RestoreGroups implements operator.KeyGrouped: it joins the parts'
// keys into one snapshot, with the latest clock of theirs (the shared
// state restored next sets it again) and the sum of their NULL times.
func (j *IntervalJoin) RestoreGroups(parts [][]byte) error {
	var (
		wm        = int64(operator.NoWatermark)
		exp       [2]int64
		nullTimes int64
		nkeys     int
		keys      []byte
	)
	for i, p := range parts {
		d := row.NewDecoder(p)
		if v := d.Byte(); v != intervalJoinStateVersion && d.Err() == nil {
			return fmt.Errorf("interval join: key group part %d: version %d, want %d", i, v, intervalJoinStateVersion)
		}
		pwm, e0, e1 := d.Varint(), d.Varint(), d.Varint()
		nullTimes += int64(d.Uvarint())
		nkeys += int(d.Uvarint())
		if err := d.Err(); err != nil {
			return fmt.Errorf("interval join: key group part %d: %w", i, err)
		}
		wm = max(wm, pwm)
		if i == 0 {
			exp = [2]int64{e0, e1}
		}
		keys = append(keys, p[len(p)-d.Len():]...)
	}
	r := *j
	r.wm, r.expiration = wm, exp
	snap := r.appendHead(nil, nullTimes, nkeys)
	return j.Restore(append(snap, keys...))
}

// SnapshotShared implements operator.SharedState: the clock, the
// expiration times, and which of them the last watermark moved.
func (j *IntervalJoin) SnapshotShared() ([]byte, error) {
	buf := binary.AppendVarint(nil, j.wm)
	buf = binary.AppendVarint(buf, j.expiration[0])
	buf = binary.AppendVarint(buf, j.expiration[1])
	return append(buf, b2byte(j.moved[0]), b2byte(j.moved[1])), nil
}

// RestoreShared implements operator.SharedState: the latest clock of
// the parts; each expiration time that of a part whose last watermark
// moved it, else the first part's (between calls every worker has the
// same).
func (j *IntervalJoin) RestoreShared(parts [][]byte) error {
	var exp [2]int64
	for i, p := range parts {
		d := row.NewDecoder(p)
		wm, e := d.Varint(), [2]int64{d.Varint(), d.Varint()}
		moved := [2]bool{d.Byte() == 1, d.Byte() == 1}
		if err := d.End(); err != nil {
			return fmt.Errorf("interval join: shared state %d: %w", i, err)
		}
		j.wm = max(j.wm, wm)
		for s := range 2 {
			if i == 0 || moved[s] {
				exp[s] = e[s]
			}
		}
	}
	if len(parts) > 0 {
		j.expiration = exp
	}
	j.moved = [2]bool{}
	return nil
}

// SyncShared implements operator.SyncedState: as RestoreShared, after
// a watermark each worker fired the timers of its own keys for.
func (j *IntervalJoin) SyncShared(parts [][]byte) error { return j.RestoreShared(parts) }

// SeeInput implements operator.SyncedState: it moves the other side's
// expiration time over every row of the whole batch as add does, and
// notes, for each, the time before it.
func (j *IntervalJoin) SeeInput(input int, in *row.Batch) {
	s, o := input, 1-input
	timeCol := j.spec.LeftTime
	if s == 1 {
		timeCol = j.spec.RightTime
	}
	exp := j.expire(j.opTime(), j.relSize[o])
	j.seen = j.seen[:0]
	for i := range in.Changes {
		c := &in.Changes[i]
		j.seen = append(j.seen, j.expiration[o])
		if !c.Kind.IsAdd() || len(c.Row) <= timeCol || c.Row[timeCol].IsNull() || j.spec.Lower > j.spec.Upper {
			continue
		}
		if j.expiration[o] < c.Row[timeCol].Micros()+j.relSize[s] {
			j.expiration[o] = exp
		}
	}
	j.seenOn = true
}

var _ operator.SyncedState = (*IntervalJoin)(nil)
