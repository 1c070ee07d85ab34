package udfop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// pairing emits an updating input's changes of which some rows failed
// (and went to on_error) so that nothing stale stays downstream, as
// runtime.Calc does for a filter: an update whose new row failed
// retracts its old row (-D), one whose old row failed adds its new row
// (+I). It holds a -U until the change after it arrives.
type pairing struct {
	pending    row.Row
	pendingOK  bool
	hasPending bool
}

func (p *pairing) emit(k row.Kind, r row.Row, ok bool, out operator.Emitter) {
	if p.hasPending && k != row.UpdateAfter {
		p.flush(out)
	}
	switch k {
	case row.Insert, row.Delete:
		if ok {
			out.Emit(k, r)
		}
	case row.UpdateBefore:
		p.pending, p.pendingOK, p.hasPending = r, ok, true
	case row.UpdateAfter:
		if !p.hasPending {
			if ok {
				out.Emit(row.UpdateAfter, r)
			}
			return
		}
		old, oldOK := p.pending, p.pendingOK
		p.pending, p.hasPending = nil, false
		switch {
		case oldOK && ok:
			out.Emit(row.UpdateBefore, old)
			out.Emit(row.UpdateAfter, r)
		case oldOK:
			out.Emit(row.Delete, old)
		case ok:
			out.Emit(row.Insert, r)
		}
	}
}

// flush emits a -U whose +U never came as the retraction it is.
func (p *pairing) flush(out operator.Emitter) {
	if p.hasPending && p.pendingOK {
		out.Emit(row.Delete, p.pending)
	}
	p.pending, p.hasPending = nil, false
}
