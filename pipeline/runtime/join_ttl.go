package runtime

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"
)

// State TTL of a regular join (see ttl.go), as Flink's join state views
// with a state TTL: every stored row of either side has its own time,
// set when the row is added, its count changes or (an outer side's row)
// its number of matches changes; probing it from the other side does not
// refresh it. An expired row is absent: it matches nothing, and a
// retraction of it still joins with the other side's live rows (Flink's
// StreamingJoinOperator emits the retraction whether or not its own
// state held the row). Expiry emits nothing: a NULL-padded row of an
// expired outer row is never retracted. A NOT IN's count of right rows
// drops with its expired rows; right rows with a NULL key are only
// counted and never expire. Batch mode has no TTL.

// joinRef names one stored row of a side: its join key and identity.
type joinRef struct{ key, id string }

// SetStateTTL implements TTLSetter.
func (j *Join) SetStateTTL(c StateTTL) {
	if c.TTL <= 0 || j.spec.Batch {
		return
	}
	j.ttl = c
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.set(c)
		s.appendOnly = false // a row's age is kept by its identity
	}
	if j.spec.NullAware {
		j.sides[1].onExpire = func(e *joinEntry) { j.rightRows -= int64(e.count) }
	}
}

// SweepEvery implements Sweeper.
func (j *Join) SweepEvery() time.Duration { return sweepEvery(j.ttl.TTL) }

// Sweep implements Sweeper.
func (j *Join) Sweep() {
	if j.ttl.TTL > 0 {
		j.tick()
		j.sweep(quietSweep)
	}
}

func (j *Join) tick() {
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.tick()
	}
}

func (j *Join) sweep(budget int) {
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.sweep(budget, func(r joinRef) bool {
			s.dropRow(r.key, r.id)
			return true
		})
	}
}

// touch records a write of the row id of key.
func (s *joinSide) touch(key, id string) {
	if s.ttl.on() {
		s.ttl.touch(joinRef{key, id})
	}
}

// live returns key's rows, first dropping those that expired.
func (s *joinSide) live(key string) *joinRows {
	m := s.rows.get(key)
	if m == nil {
		return &noJoinRows
	}
	if !s.ttl.on() {
		return m
	}
	for id := range m.all {
		s.expireRow(key, id)
	}
	if m = s.rows.get(key); m == nil {
		return &noJoinRows
	}
	return m
}

// noJoinRows is the rows of a key without any.
var noJoinRows joinRows

// expireRow drops row id of key if it expired and reports whether it
// did.
func (s *joinSide) expireRow(key, id string) bool {
	if !s.ttl.expired(joinRef{key, id}) {
		return false
	}
	s.dropRow(key, id)
	return true
}

// dropRow removes an expired row.
func (s *joinSide) dropRow(key, id string) {
	m := s.rows.get(key)
	s.ttl.drop(joinRef{key, id})
	if m == nil {
		return
	}
	e := m.get(id)
	if e == nil {
		return
	}
	m.del(id)
	s.size--
	if m.len() == 0 {
		s.rows.remove(key)
	}
	if s.onExpire != nil {
		s.onExpire(e)
	}
}

// joinTTLStateVersion is the version-1 layout with each stored row's
// last write (milliseconds) after its match count.
const joinTTLStateVersion = 2

func (j *Join) stateVersion() byte {
	if j.ttl.TTL > 0 {
		return joinTTLStateVersion
	}
	return joinStateVersion
}

func (s *joinSide) appendTime(buf []byte, key, id string) []byte {
	if !s.ttl.on() {
		return buf
	}
	at, _ := s.ttl.at(joinRef{key, id})
	return binary.AppendVarint(buf, at)
}

// joinTimes gathers a restored side's times, to set them in time order.
type joinTimes struct {
	s    *joinSide
	refs []joinRef
	ats  []int64
}

// restoreTimes prepares side s, new for a restore, for its times.
func (j *Join) restoreTimes(s *joinSide) *joinTimes {
	if j.ttl.TTL > 0 {
		s.ttl.set(j.ttl)
		s.ttl.tick()
	}
	return &joinTimes{s: s}
}

func (t *joinTimes) note(key, id string, at int64) {
	if t.s.ttl.on() {
		t.refs = append(t.refs, joinRef{key, id})
		t.ats = append(t.ats, at)
	}
}

// apply sets the times of a snapshot that has them; rows of one without
// keep the restore time that adding them gave.
func (t *joinTimes) apply(timed bool) {
	if !timed || !t.s.ttl.on() {
		return
	}
	order := make([]int, len(t.refs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(t.ats[a], t.ats[b]) })
	for _, i := range order {
		t.s.ttl.touchAt(t.refs[i], t.ats[i])
	}
}

var (
	_ TTLSetter = (*Join)(nil)
	_ Sweeper   = (*Join)(nil)
)
