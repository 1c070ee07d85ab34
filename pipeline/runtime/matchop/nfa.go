package matchop

// The NFA, compiled from the pattern the way Flink's NFACompiler compiles
// the CEP pattern that its SQL planner builds: every variable follows the
// one before it with strict contiguity; `*` is oneOrMore().optional(),
// `+` oneOrMore(), `?` optional(), {n,m} times(n, m) and {n,} timesOrMore(n),
// each consecutive, and greedy unless reluctant, optional (`?`) or of a
// fixed count.

// condKind is the condition on an edge.
type condKind uint8

const (
	condTrue    condKind = iota
	condTake             // the variable's DEFINE condition
	condNotTake          // a greedy PROCEED: the variable's condition fails
)

// edge is a TAKE (consume the row under the state's variable, go to to)
// or a PROCEED (go to to without consuming), with its condition on the
// variable v.
type edge struct {
	take bool
	cond condKind
	v    int
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

// term adds a term's states in front of sink and returns its first.
func (n *nfa) term(t Term, sink int) int {
	optional := t.Min == 0
	from, to := max(t.Min, 1), t.Max
	greedy := t.Greedy && !(t.Min == 0 && t.Max == 1) && t.Min != t.Max
	proceed := condTrue
	if greedy {
		proceed = condNotTake
	}
	if t.Max == Unbounded {
		loop := n.add(nstate{v: t.Var})
		n.states[loop].edges = []edge{{cond: proceed, v: t.Var, to: sink}, {take: true, cond: condTake, v: t.Var, to: loop}}
		return n.times(t.Var, loop, sink, from, from, optional, proceed)
	}
	return n.times(t.Var, sink, sink, from, to, optional, proceed)
}

// times is Flink's createTimesState: to-from optional states at the end,
// from-1 mandatory ones before them, and the head.
func (n *nfa) times(v, last, proceedTo, from, to int, optional bool, proceed condKind) int {
	for i := from; i < to; i++ {
		last = n.single(v, last, proceedTo, true, proceed)
	}
	for i := 0; i < from-1; i++ {
		last = n.single(v, last, proceedTo, false, proceed)
	}
	return n.single(v, last, proceedTo, optional, proceed)
}

func (n *nfa) single(v, sink, proceedTo int, optional bool, proceed condKind) int {
	s := nstate{v: v, edges: []edge{{take: true, cond: condTake, v: v, to: sink}}}
	if optional {
		s.edges = append(s.edges, edge{cond: proceed, v: v, to: proceedTo})
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
