package aggop

import (
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// UserAgg is an aggregate function of the pipeline file's own (a
// WebAssembly module's, pipeline/udf): its accumulator is bytes the
// function makes and reads, nil a group's empty one. The store calls it
// many groups at a time: it queues the changes of the groups and hands
// them over together when it needs a result, a merge, a release or a
// snapshot, so that an operator that folds a whole batch before it reads
// its results (batch mode, mini-batches, windows) calls the function once
// per batch.
type UserAgg interface {
	// Update applies changes in order: change i adds (retracts, when
	// add[i] is false) args[i] to accs[group[i]]. It returns the
	// accumulators after all of them, and each one's result: the store
	// reads the result of every group it changes, and one call for both
	// halves what a streaming aggregate costs per row.
	Update(accs [][]byte, group []int, args []row.Value, add []bool) ([][]byte, []row.Value, error)
	// Merge folds others[i] into accs[i] (window slices) and returns
	// the results.
	Merge(accs, others [][]byte) ([][]byte, error)
	// Result gives each accumulator's value.
	Result(accs [][]byte) ([]row.Value, error)
}

// userAcc is a group's accumulator of a user aggregate, and its result
// while no change came after it.
type userAcc struct {
	acc   []byte
	res   row.Value
	fresh bool
	// queued: the slot is in its queue's dirty list.
	queued bool
}

// userChange is a queued change of a user aggregate.
type userChange struct {
	id  int32
	v   row.Value
	add bool
}

// userQueue is the changes of one user aggregate not yet applied.
type userQueue struct {
	changes []userChange
	// dirty are the slots whose result is stale: queued or merged into.
	dirty []int32
}

// userAcc returns a's accumulator in slot id.
func (s *Store) userAcc(id int32, a *aggSlot) *userAcc {
	p := &s.exts[int(id)*s.extW+a.ext]
	u, _ := (*p).(*userAcc)
	if u == nil {
		u = &userAcc{}
		*p = u
	}
	return u
}

// userStep queues a change of user aggregate a in slot id.
func (s *Store) userStep(id int32, a *aggSlot, v row.Value, add bool) {
	q := &s.user[a.user]
	q.changes = append(q.changes, userChange{id: id, v: row.DetachValue(v), add: add})
	s.userStale(id, a)
}

// userStale marks a's result in slot id stale, to be computed at the
// next flush.
func (s *Store) userStale(id int32, a *aggSlot) {
	u := s.userAcc(id, a)
	u.fresh = false
	if !u.queued {
		u.queued = true
		q := &s.user[a.user]
		q.dirty = append(q.dirty, id)
	}
}

// Err is the first failure of a user aggregate function: the operator
// fails with it (the group's state and the rows it counts would disagree
// if a change were dropped). Check returns it too.
func (s *Store) Err() error { return s.userErr }

// flushUser applies every queued change of the user aggregates, one call
// per aggregate, and computes the results of the groups they changed.
func (s *Store) flushUser() {
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.kind != accUser || s.userErr != nil {
			continue
		}
		q := &s.user[a.user]
		if len(q.changes) > 0 {
			s.applyUser(a, q.changes)
			clear(q.changes)
			q.changes = q.changes[:0]
		}
		// The slots whose result is still stale: merged into.
		stale := q.dirty[:0]
		for _, id := range q.dirty {
			if u := s.userAcc(id, a); u.fresh {
				u.queued = false
			} else {
				stale = append(stale, id)
			}
		}
		if len(stale) > 0 {
			s.userResults(a, stale)
		}
		q.dirty = q.dirty[:0]
	}
}

// applyUser hands changes of a to its function.
func (s *Store) applyUser(a *aggSlot, changes []userChange) {
	index := map[int32]int{}
	var ids []int32
	var accs [][]byte
	group := make([]int, len(changes))
	args := make([]row.Value, len(changes))
	add := make([]bool, len(changes))
	for i, c := range changes {
		g, ok := index[c.id]
		if !ok {
			g = len(ids)
			index[c.id] = g
			ids = append(ids, c.id)
			accs = append(accs, s.userAcc(c.id, a).acc)
		}
		group[i], args[i], add[i] = g, c.v, c.add
	}
	out, res, err := a.call.User.Update(accs, group, args, add)
	if err == nil && (len(out) != len(ids) || len(res) != len(ids)) {
		err = fmt.Errorf("%d accumulators and %d results back for %d", len(out), len(res), len(ids))
	}
	if err != nil {
		s.userErr = fmt.Errorf("%s: %w", a.call, err)
		return
	}
	for g, id := range ids {
		u := s.userAcc(id, a)
		u.acc, u.res, u.fresh = out[g], res[g], true
	}
}

// userResults computes the results of a in the slots ids.
func (s *Store) userResults(a *aggSlot, ids []int32) {
	accs := make([][]byte, len(ids))
	for i, id := range ids {
		accs[i] = s.userAcc(id, a).acc
	}
	res, err := a.call.User.Result(accs)
	if err == nil && len(res) != len(ids) {
		err = fmt.Errorf("%d results for %d accumulators", len(res), len(ids))
	}
	if err != nil {
		s.userErr = fmt.Errorf("%s: %w", a.call, err)
		return
	}
	for i, id := range ids {
		u := s.userAcc(id, a)
		u.res, u.fresh, u.queued = res[i], true, false
	}
}

// userResult is a's result in slot id.
func (s *Store) userResult(id int32, a *aggSlot) row.Value {
	u := s.userAcc(id, a)
	if !u.fresh {
		s.flushUser()
		if !u.fresh && s.userErr == nil {
			// A slot no change reached (its rows filtered out): the
			// empty accumulator's result.
			s.userResults(a, []int32{id})
		}
	}
	return u.res
}

// userMerge folds a's accumulator of src into dst's.
func (s *Store) userMerge(dst, src int32, a *aggSlot) {
	s.flushUser()
	if s.userErr != nil {
		return
	}
	from := s.userAcc(src, a)
	if from.acc == nil {
		return // an empty accumulator adds nothing
	}
	to := s.userAcc(dst, a)
	out, err := a.call.User.Merge([][]byte{to.acc}, [][]byte{from.acc})
	if err == nil && len(out) != 1 {
		err = errors.New("no accumulator back")
	}
	if err != nil {
		s.userErr = fmt.Errorf("%s: merge: %w", a.call, err)
		return
	}
	to.acc = out[0]
	s.userStale(dst, a)
}

// hasUser reports whether the store has a user aggregate.
func (s *Store) hasUser() bool { return len(s.user) > 0 }
