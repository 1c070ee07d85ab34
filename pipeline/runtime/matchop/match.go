package matchop

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Match is the MATCH_RECOGNIZE operator (Flink's CepOperator in event
// time). A row that arrives behind the watermark is late: dropped and
// counted (Dropped, "late"), as Flink drops it.
type Match struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	spec              Spec
	nfa               *nfa
	define            []*cexpr
	measures          []*cexpr
	width             int
	wm                int64
	timeID            row.TypeID
	parts             map[string]*part
	arrival           uint64
	seq               uint64
	dropped           int64
	kbuf              []byte
	// scratch of the NFA's step
	rows      []mrow
	stack     []int
	condCache []condResult
}

// New builds the operator; a spec Flink would refuse is an error.
func New(s Spec) (*Match, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if canBeEmpty(s.Terms) {
		return nil, fmt.Errorf("patterns that can produce empty matches are not supported: there must be at least one non-optional state")
	}
	m := &Match{spec: s, nfa: compileNFA(s.Terms), wm: operator.NoWatermark, parts: map[string]*part{}}
	m.width = s.TimeCol + 1
	for _, k := range s.Keys {
		m.width = max(m.width, k+1)
	}
	for _, o := range s.Order {
		m.width = max(m.width, o.Col+1)
	}
	for _, d := range s.Define {
		var c *cexpr
		if d != nil {
			var err error
			if c, err = newCExpr(d); err != nil {
				return nil, err
			}
			m.widen(d)
		}
		m.define = append(m.define, c)
	}
	for _, e := range s.Measures {
		c, err := newCExpr(e)
		if err != nil {
			return nil, err
		}
		m.widen(e)
		m.measures = append(m.measures, c)
	}
	return m, nil
}

func (m *Match) widen(e *Expr) {
	for _, nv := range e.Navs {
		m.width = max(m.width, nv.Col+1)
	}
}

// Dropped counts late rows.
func (m *Match) Dropped() (int64, string) { return m.dropped, "late" }

// StateEntries implements StateSizer: the rows waiting for the watermark
// and the partial matches of every partition.
func (m *Match) StateEntries() int64 {
	var n int
	for _, p := range m.parts {
		n += len(p.pending) + len(p.partials.items) + len(p.completed.items)
	}
	return int64(n)
}

func (m *Match) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("match_recognize", in, out, func(_ int, c *row.Change) error {
		return m.add(c.Kind, c.Row)
	})
}

func (m *Match) add(k row.Kind, r row.Row) error {
	if k != row.Insert {
		return fmt.Errorf("input planned as insert-only carries a %s change", k)
	}
	if len(r) < m.width {
		return fmt.Errorf("row has %d columns, want at least %d", len(r), m.width)
	}
	tv := r[m.spec.TimeCol]
	switch id := tv.Type(); {
	case id == row.Null:
		return fmt.Errorf("event time column %d is NULL", m.spec.TimeCol)
	case id != row.Timestamp && id != row.TimestampLTZ:
		return fmt.Errorf("event time column %d has type %s, want TIMESTAMP or TIMESTAMP_LTZ", m.spec.TimeCol, id)
	case m.timeID == row.Null:
		m.timeID = id
	}
	ts := tv.Micros()
	if !m.spec.Batch && ts < m.wm {
		m.dropped++
		return nil
	}
	m.kbuf = row.KeyOf(m.kbuf[:0], r, m.spec.Keys)
	p := m.parts[string(m.kbuf)]
	if p == nil {
		p = m.newPart(string(m.kbuf), r)
	}
	p.pending = append(p.pending, pendRow{ts: ts, arrival: m.arrival, r: row.Detach(r)})
	m.arrival++
	return nil
}

func (m *Match) newPart(key string, r row.Row) *part {
	kr := make(row.Row, len(m.spec.Keys))
	for i, k := range m.spec.Keys {
		kr[i] = row.DetachValue(r[k])
	}
	p := &part{key: key, keyRow: kr, partials: pq{items: []*partial{{state: m.nfa.start}}}}
	m.parts[key] = p
	return p
}

// Watermark runs the rows below the watermark through their partitions'
// NFAs.
func (m *Match) Watermark(wm int64, out operator.Emitter) error {
	if wm <= m.wm || (m.spec.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	m.wm = wm
	return m.runBelow(wm, out)
}

// Finish runs every row still waiting.
func (m *Match) Finish(out operator.Emitter) error {
	m.wm = operator.MaxWatermark
	return m.runBelow(operator.MaxWatermark, out)
}

// due is a partition with rows below the watermark, and its next one.
type due struct {
	p *part
	n int // rows of p.pending already run
}

// runBelow runs the rows below wm, each partition's in its own order, the
// partitions' interleaved by time and arrival: the output is then the
// same however the watermarks cut the input. (Flink fires one timer per
// key, which runs all of that key's rows up to the watermark; the rows
// and each key's matches are the same, only their interleaving across
// keys differs.)
func (m *Match) runBelow(wm int64, out operator.Emitter) error {
	below := func(r pendRow) bool { return r.ts < wm || wm == operator.MaxWatermark }
	next := func(d *due) pendRow { return d.p.pending[d.n] }
	heap := state.NewHeap(func(a, b *due) bool {
		x, y := next(a), next(b)
		return x.ts < y.ts || x.ts == y.ts && x.arrival < y.arrival
	})
	for _, p := range m.parts {
		if len(p.pending) == 0 {
			continue
		}
		m.sortPending(p)
		if below(p.pending[0]) {
			heap.Push(due{p: p})
		}
	}
	emit := func(p *part, rows []mrow) error { return m.emit(p, rows, out) }
	for heap.Len() > 0 {
		d := heap.Pop()
		r := next(&d)
		m.seq++
		if err := m.feed(d.p, &event{seq: m.seq, ts: r.ts, r: r.r}, emit); err != nil {
			return err
		}
		d.n++
		if d.n < len(d.p.pending) && below(next(&d)) {
			heap.Push(d)
			continue
		}
		clear(d.p.pending[:d.n])
		d.p.pending = d.p.pending[d.n:]
	}
	// Flink advances each key's NFA to the watermark after its rows: a
	// partial match WITHIN has timed out lets the matches it held back go
	// (partitions in key order, so the output's order is fixed).
	if m.spec.Within > 0 {
		var held []*part
		for _, p := range m.parts {
			m.expire(p, wm-1)
			if len(p.completed.items) > 0 {
				held = append(held, p)
			}
		}
		slices.SortFunc(held, func(a, b *part) int { return cmp.Compare(a.key, b.key) })
		for _, p := range held {
			if err := m.emitCompleted(p, emit); err != nil {
				return err
			}
		}
	}
	for k, p := range m.parts {
		if len(p.pending) == 0 && len(p.completed.items) == 0 && len(p.partials.items) == 1 && p.partials.items[0].startSeq == 0 {
			delete(m.parts, k)
		}
	}
	return nil
}

// sortPending orders a partition's waiting rows by time, ORDER BY and
// arrival.
func (m *Match) sortPending(p *part) {
	slices.SortFunc(p.pending, func(a, b pendRow) int {
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		for _, o := range m.spec.Order {
			c := row.Compare(a.r[o.Col], b.r[o.Col])
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.arrival, b.arrival)
	})
}

// emit writes a match's row: the partition columns, then the measures
// over the match, each seeing the match's last row as its current row.
func (m *Match) emit(p *part, rows []mrow, out operator.Emitter) error {
	o := make(row.Row, 0, len(p.keyRow)+len(m.measures))
	o = append(o, p.keyRow...)
	last := rows[len(rows)-1].ev.r
	for _, c := range m.measures {
		v, err := c.eval(last, rows, nil, -1)
		if err != nil {
			return err
		}
		o = append(o, row.DetachValue(v))
	}
	out.Emit(row.Insert, o)
	return nil
}

var (
	_ operator.Operator   = (*Match)(nil)
	_ operator.Counters   = (*Match)(nil)
	_ operator.StateSizer = (*Match)(nil)
)
