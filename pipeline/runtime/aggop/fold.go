package aggop

import "github.com/etld/etld/pipeline/row"

// Folding a batch in passes, for the operators that accumulate a whole
// batch of inserts before they read a result (batch mode and
// mini-batches of GroupAgg, window aggregates): Check one column at a
// time over the batch (FirstBad), then each aggregate over all the rows
// in a loop of its own kind (FoldInserts), instead of Check and Update
// row after row, which pay an aggregate's dispatch once a row.

// FirstBad returns the index of the first of changes whose aggregate
// arguments or FILTER values Check refuses, or that lacks a column they
// read, or len(changes): Check's tests, one column at a time. A user
// aggregate's failure (Err) is the caller's.
func (s *Store) FirstBad(changes []row.Change) int {
	bad := len(changes)
	for i, a := range s.Aggs {
		if a.kind != accRows && !s.argCheckedBefore(i) {
			bad = a.firstBadArg(changes[:bad])
		}
		if a.call.HasFilter {
			f := a.call.Filter
			for i := range changes[:bad] {
				if r := changes[i].Row; f >= len(r) || !r[f].IsNull() && r[f].Type() != row.Boolean {
					bad = i
					break
				}
			}
		}
	}
	return bad
}

// FoldInserts accumulates changes[i].Row, an insert FirstBad passes, into
// slot ids[i]: the state Update(ids[i], changes[i].Row, true) change
// after change leaves, each aggregate's values seen in the changes'
// order.
func (s *Store) FoldInserts(ids []int32, changes []row.Change) {
	s.foldInserts(ids[:len(changes)], changes)
}
