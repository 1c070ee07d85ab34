package joinop

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of a regular join, as Flink's join state views with a state
// TTL: every stored row of either side has its own time, set when the
// row is added, its count changes or (an outer side's row) its number of
// matches changes; probing it from the other side does not refresh it.
// An expired row is absent: it matches nothing, and a retraction of it
// still joins with the other side's live rows (Flink's
// StreamingJoinOperator emits the retraction whether or not its own
// state held the row). Expiry emits nothing: a NULL-padded row of an
// expired outer row is never retracted. A NOT IN's count of right rows
// drops with its expired rows; right rows with a NULL key are only
// counted and never expire. Batch mode has no TTL. The times are kept by
// row id (joinSide's rows have ids).

// SetStateTTL implements TTLSetter. A batch join keeps no ages: its
// result is final only at the end of its input, so nothing it holds may
// expire before.
func (j *Join) SetStateTTL(c operator.StateTTL) {
	if !j.spec.Batch {
		j.Expiry.SetStateTTL(c)
	}
}

// armTTL makes the sides keep their rows' ages.
func (j *Join) armTTL(c operator.StateTTL) {
	j.ttl = c
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.Set(c)
		s.appendOnly = false // a row's age is kept by its identity
	}
	if j.spec.NullAware {
		j.sides[1].onExpire = func(count int64) { j.rightRows -= count }
	}
}

func (j *Join) tick() {
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.Tick()
	}
}

func (j *Join) sweep(budget int) {
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s.ttl.Sweep(budget, func(rid int32) bool {
			s.dropRow(rid, true)
			return true
		})
	}
}

// touch records a write of row rid.
func (s *joinSide) touch(ref rowRef) {
	if s.ttl.On() {
		s.ttl.Touch(int32(ref))
	}
}

// live returns the id of key (another side's cur) and whether it has
// rows, first dropping those that expired.
func (s *joinSide) live(key joinKey) (int32, bool) {
	kid, ok := s.index.find(key)
	if ok {
		ok = s.expire(kid)
	}
	return kid, ok
}

// expire drops key id kid's expired rows and reports whether the key is
// still in the index (the other side may hold it).
func (s *joinSide) expire(kid int32) bool {
	if !s.ttl.On() {
		return true
	}
	for ref := range s.rows(kid) {
		if rid := int32(ref); s.ttl.Expired(rid) {
			s.dropRow(rid, true)
		}
	}
	return s.index.has(kid)
}

// joinTTLStateVersion is the version-1 layout with each stored row's
// last write (milliseconds) after its match count.
const joinTTLStateVersion = 2

func (j *Join) stateVersion() byte {
	if j.Expiring() {
		return joinTTLStateVersion
	}
	return JoinStateVersion
}

func (s *joinSide) appendTime(buf []byte, ref rowRef) []byte {
	if !s.ttl.On() {
		return buf
	}
	rid := int32(ref)
	var at int64
	if s.ttl.Linked(rid) {
		at = s.ttl.At[rid]
	}
	return binary.AppendVarint(buf, at)
}

// joinTimes gathers a restored side's times, to set them in time order.
type joinTimes struct {
	s    *joinSide
	rids []int32
	ats  []int64
}

// restoreTimes prepares side s, new for a restore, for its times.
func (j *Join) restoreTimes(s *joinSide) *joinTimes {
	if j.Expiring() {
		s.ttl.Set(j.ttl)
		s.ttl.Tick()
	}
	return &joinTimes{s: s}
}

func (t *joinTimes) note(ref rowRef, at int64) {
	if t.s.ttl.On() {
		t.rids = append(t.rids, int32(ref))
		t.ats = append(t.ats, at)
	}
}

// apply sets the times of a snapshot that has them; rows of one without
// keep the restore time that adding them gave.
func (t *joinTimes) apply(timed bool) {
	if !timed || !t.s.ttl.On() {
		return
	}
	order := make([]int, len(t.rids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(t.ats[a], t.ats[b]) })
	for _, i := range order {
		t.s.ttl.TouchAt(t.rids[i], t.ats[i])
	}
}

var (
	_ operator.TTLSetter = (*Join)(nil)
	_ operator.Sweeper   = (*Join)(nil)
)
