package matchop

// The NFA, compiled from the pattern the way Flink's NFACompiler compiles
// the CEP pattern that its SQL planner builds: every variable follows the
// one before it with strict contiguity; `*` is oneOrMore().optional(),
// `+` oneOrMore(), `?` optional(), {n,m} times(n, m) and {n,} timesOrMore(n),
// each consecutive, and greedy unless reluctant, optional (`?`) or of a
// fixed count.

// edge is a TAKE (consume the row under the state's variable, go to to)
// or a PROCEED (go to to without consuming). Its condition is variable
// v's DEFINE condition (v -1: TRUE) and, for every variable in not, that
// variable's condition failing: a greedy variable adds itself to the
// edges of the state after it (Flink's updateWithGreedyCondition), so a
// row its condition accepts cannot leave it.
type edge struct {
	take bool
	v    int
	not  []int
	to   int
}

// nstate is a state: its variable, its edges in Flink's order, and
// whether it is the final state.
type nstate struct {
	v     int
	edges []edge
	final bool
}

type nfa struct {
	states []nstate
	start  int
}

// compileNFA builds the states from the last term to the first; state 0
// is the final one.
func compileNFA(terms []Term) *nfa {
	n := &nfa{states: []nstate{{v: -1, final: true}}}
	sink := 0
	for i := len(terms) - 1; i >= 0; i-- {
		sink = n.term(terms[i], sink)
	}
	n.start = sink
	return n
}

func (n *nfa) add(s nstate) int {
	n.states = append(n.states, s)
	return len(n.states) - 1
}

// greedyProperty reports whether Flink's planner makes a term greedy: a
// greedy quantifier that is neither `?` nor of a fixed count.
func greedyProperty(t Term) bool {
	return t.Greedy && !(t.Min == 0 && t.Max == 1) && t.Min != t.Max
}

// term adds a term's states in front of sink and returns its first.
func (n *nfa) term(t Term, sink int) int {
	optional := t.Min == 0
	from, to := max(t.Min, 1), t.Max
	greedy := greedyProperty(t)
	if t.Max == Unbounded {
		// createLooping: PROCEED to the sink, TAKE back to itself.
		loop := n.add(nstate{v: t.Var})
		n.states[loop].edges = []edge{{v: -1, to: sink}, {take: true, v: t.Var, to: loop}}
		if greedy {
			n.greedyOn(sink, t.Var)
		}
		return n.times(t.Var, loop, sink, from, from, optional)
	}
	if greedy && from != to {
		n.greedyOn(sink, t.Var)
	}
	return n.times(t.Var, sink, sink, from, to, optional)
}

// greedyOn makes every edge of state s require that variable v's
// condition fails.
func (n *nfa) greedyOn(s, v int) {
	for i := range n.states[s].edges {
		e := &n.states[s].edges[i]
		e.not = append(e.not, v)
	}
}

// times is Flink's createTimesState: to-from optional states at the end,
// from-1 mandatory ones before them, and the head.
func (n *nfa) times(v, last, proceedTo, from, to int, optional bool) int {
	for i := from; i < to; i++ {
		last = n.single(v, last, proceedTo, true)
	}
	for i := 0; i < from-1; i++ {
		last = n.single(v, last, proceedTo, false)
	}
	return n.single(v, last, proceedTo, optional)
}

func (n *nfa) single(v, sink, proceedTo int, optional bool) int {
	s := nstate{v: v, edges: []edge{{take: true, v: v, to: sink}}}
	if optional {
		s.edges = append(s.edges, edge{v: -1, to: proceedTo})
	}
	return n.add(s)
}

// canBeEmpty reports whether the pattern can match no row: Flink refuses
// such patterns.
func canBeEmpty(terms []Term) bool {
	for _, t := range terms {
		if t.Min > 0 {
			return false
		}
	}
	return true
}
