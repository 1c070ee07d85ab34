package matchop

import (
	"cmp"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// partial is a (partial or completed) match: the state it waits in, its
// rows, and the row it started at (startSeq 0: the start state, before
// any row).
type partial struct {
	state    int
	last     *step
	startSeq uint64
	startTs  int64
}

// part is one partition's state: its key, its rows waiting for the
// watermark, its partial matches (the start state's among them) and the
// completed matches held until no earlier-started partial match is open,
// both in Flink's queues (pq).
type part struct {
	key       string
	keyRow    row.Row // the partition columns, for the output
	pending   []pendRow
	partials  pq
	completed pq
}

// pendRow is a row waiting for the watermark; arrival orders rows of the
// same time and ORDER BY values.
type pendRow struct {
	ts      int64
	arrival uint64
	r       row.Row
}

// earlier orders matches as Flink's COMPUTATION_STATE_COMPARATOR does:
// by the row they started at, the start state's last.
func earlier(a, b *partial) int {
	as, bs := a.startSeq, b.startSeq
	if as == 0 {
		as = ^uint64(0)
	}
	if bs == 0 {
		bs = ^uint64(0)
	}
	return cmp.Compare(as, bs)
}

// feed runs one row through the partition's NFA and emits the matches it
// completes (Flink's NFA.advanceTime, then doProcess).
func (m *Match) feed(p *part, ev *event, out func(p *part, rows []mrow) error) error {
	if err := m.advanceTime(p, ev.ts, out); err != nil {
		return err
	}
	var next, done pq
	for _, pm := range p.partials.items {
		res, err := m.advance(pm, ev)
		if err != nil {
			return err
		}
		for _, r := range res {
			if m.nfa.states[r.state].final {
				done.offer(r)
			} else {
				next.offer(r)
			}
		}
	}
	p.partials = next
	p.completed.addAll(done.items)
	return m.emitCompleted(p, out)
}

// emitCompleted emits the completed matches that no earlier-started
// partial match holds back, earliest first, each pruning the partial and
// completed matches its skip strategy drops (Flink's
// processMatchesAccordingToSkipStrategy).
func (m *Match) emitCompleted(p *part, out func(p *part, rows []mrow) error) error {
	for c := p.completed.peek(); c != nil; c = p.completed.peek() {
		if open := p.partials.peek(); open != nil && earlier(c, open) > 0 {
			break
		}
		p.completed.poll()
		rows := rowsOf(nil, c.last)
		keep, err := m.pruning(rows)
		if err != nil {
			return err
		}
		drop := func(x *partial) bool { return x.startSeq != 0 && !keep(x.startSeq) }
		p.partials.removeIf(drop)
		p.completed.removeIf(drop)
		if err := out(p, rows); err != nil {
			return err
		}
	}
	return nil
}

// advanceTime is Flink's NFA.advanceTime at time ts (no row before it
// will come): it drops the partial matches that began Within or more
// before ts, then emits the completed matches they held back.
func (m *Match) advanceTime(p *part, ts int64, out func(p *part, rows []mrow) error) error {
	if m.spec.Within == 0 {
		return nil
	}
	m.expire(p, ts)
	return m.emitCompleted(p, out)
}

// expire drops the partial matches that began Within or more before ts.
func (m *Match) expire(p *part, ts int64) {
	var kept pq
	for _, x := range p.partials.items {
		if x.startSeq == 0 || x.startTs > ts-m.spec.Within {
			kept.offer(x)
		}
	}
	p.partials = kept
}

// advance computes what one partial match becomes with ev (Flink's
// computeNextStates): the TAKE edges reachable through PROCEED edges whose
// conditions hold, each a new partial match, plus a completed one when the
// new state reaches the final state by PROCEED edges; the start state
// stays.
func (m *Match) advance(pm *partial, ev *event) ([]*partial, error) {
	m.rows = rowsOf(m.rows, pm.last)
	m.condCache = m.condCache[:0]
	var res []*partial
	stack := append(m.stack[:0], pm.state)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := &m.nfa.states[s]
		for _, e := range st.edges {
			ok, err := m.holds(e, ev)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if !e.take {
				stack = append(stack, e.to)
				continue
			}
			np := &partial{state: e.to, last: &step{ev: ev, v: st.v, prev: pm.last}, startSeq: pm.startSeq, startTs: pm.startTs}
			if pm.startSeq == 0 {
				np.startSeq, np.startTs = ev.seq, ev.ts
			}
			res = append(res, np)
			fin, err := m.finalAfterProceed(e.to, ev)
			if err != nil {
				return nil, err
			}
			if fin {
				res = append(res, &partial{state: 0, last: np.last, startSeq: np.startSeq, startTs: np.startTs})
			}
		}
	}
	m.stack = stack
	if pm.startSeq == 0 {
		res = append(res, &partial{state: m.nfa.start})
	}
	return res, nil
}

// finalAfterProceed reports whether the final state is reachable from s
// by PROCEED edges whose conditions hold for ev, in the context of the
// partial match before it took ev (as Flink evaluates them).
func (m *Match) finalAfterProceed(s int, ev *event) (bool, error) {
	stack := []int{s}
	for len(stack) > 0 {
		st := &m.nfa.states[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, e := range st.edges {
			if e.take {
				continue
			}
			ok, err := m.holds(e, ev)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
			if m.nfa.states[e.to].final {
				return true, nil
			}
			stack = append(stack, e.to)
		}
	}
	return false, nil
}

// holds evaluates an edge's condition for ev over m.rows, each variable's
// condition once per partial match and row.
func (m *Match) holds(e edge, ev *event) (bool, error) {
	if e.v >= 0 {
		ok, err := m.cond(e.v, ev)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, v := range e.not {
		ok, err := m.cond(v, ev)
		if err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

func (m *Match) cond(v int, ev *event) (bool, error) {
	for _, c := range m.condCache {
		if c.v == v {
			return c.ok, nil
		}
	}
	ok := true
	if d := m.define[v]; d != nil {
		val, err := d.eval(ev.r, m.rows, ev.r, v)
		if err != nil {
			return false, err
		}
		ok = val.Type() == row.Boolean && val.Bool()
	}
	m.condCache = append(m.condCache, condResult{v: v, ok: ok})
	return ok, nil
}

type condResult struct {
	v  int
	ok bool
}

// pruning returns which start rows survive a match of rows under the
// skip strategy (Flink's AfterMatchSkipStrategy.prune).
func (m *Match) pruning(rows []mrow) (func(start uint64) bool, error) {
	first, last := rows[0].ev.seq, rows[len(rows)-1].ev.seq
	switch m.spec.Skip {
	case SkipPastLastRow:
		return func(s uint64) bool { return s > last }, nil
	case SkipToNextRow:
		return func(s uint64) bool { return s > first }, nil
	}
	var at uint64
	for _, r := range rows {
		if r.v == m.spec.SkipVar {
			if at == 0 || m.spec.Skip == SkipToLast {
				at = r.ev.seq
			}
		}
	}
	verb := "FIRST"
	if m.spec.Skip == SkipToLast {
		verb = "LAST"
	}
	switch {
	case at == 0:
		return nil, fmt.Errorf("could not skip to %s %s: no row of the match is mapped to it", verb, m.spec.Vars[m.spec.SkipVar])
	case at == first:
		return nil, fmt.Errorf("could not skip to the first row of a match (SKIP TO %s %s would start the next match where this one started)", verb, m.spec.Vars[m.spec.SkipVar])
	}
	return func(s uint64) bool { return s >= at }, nil
}
