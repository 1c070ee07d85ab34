package runtime

import (
	"slices"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// Late rows of a keyed operator (a window aggregate): each worker says
// which change of its share it dropped as late, and Keyed, once all are
// done with the batch, reports them by their change in the batch the
// node gave it, in input order, as one instance would.

// keyedLate is a worker's late rows of the current share.
type keyedLate struct {
	rows []int // indices in the worker's share
}

// ReportLate implements operator.LateReporter.
func (k *Keyed) ReportLate(report func(i int)) {
	if len(k.workers) == 1 {
		if lr, ok := k.workers[0].op.(operator.LateReporter); ok {
			lr.ReportLate(report)
		}
		return
	}
	k.lateReport = report
	for _, w := range k.workers {
		if lr, ok := w.op.(operator.LateReporter); ok {
			lr.ReportLate(func(i int) { w.late.rows = append(w.late.rows, i) })
		}
	}
}

// reportLate reports the late rows the workers dropped in their shares
// of the batch just processed (Keyed.from maps them back).
func (k *Keyed) reportLate() {
	if k.lateReport == nil {
		return
	}
	all := k.lateAll[:0]
	for _, w := range k.workers {
		for _, i := range w.late.rows {
			if i >= 0 && i < len(w.from) {
				all = append(all, int(w.from[i]))
			}
		}
		w.late.rows = w.late.rows[:0]
	}
	slices.Sort(all)
	for _, i := range all {
		k.lateReport(i)
	}
	k.lateAll = all
}

var _ operator.LateReporter = (*Keyed)(nil)
