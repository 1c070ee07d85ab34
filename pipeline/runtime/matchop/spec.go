// Package matchop runs MATCH_RECOGNIZE as Flink does (its CEP library's
// NFA behind the SQL planner's CepOperator): per partition key, rows wait
// until the watermark passes their event time, then enter the NFA in
// event-time order; every match found is one output row of the partition
// key and the measures.
//
// The NFA is Flink's: each pattern variable becomes one or more states
// with TAKE edges (consume the row under the variable), PROCEED edges
// (move on without consuming) and their conditions; every partial match is
// kept and advanced in parallel, every edge of the state after a greedy
// variable requires that the row fails that variable's condition (so a
// greedy variable keeps every row it accepts), and the AFTER MATCH SKIP strategy
// prunes partial and completed matches by where they started. A completed
// match is emitted only once no partial match that started earlier is
// still open, so matches come out in the order of their first rows.
package matchop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
)

// AnyVar is Nav.Var for an unqualified column: every variable's rows.
const AnyVar = -1

// Unbounded is Term.Max for a quantifier without an upper bound.
const Unbounded = -1

// Term is one variable of the pattern with its quantifier: Min to Max
// rows, greedy or reluctant.
type Term struct {
	Var      int
	Min, Max int
	Greedy   bool
}

// NavFunc is what a Nav computes over the rows of a variable.
type NavFunc uint8

const (
	// NavLast is LAST(v.col, Offset); v.col itself is LAST(v.col, 0).
	NavLast NavFunc = iota
	// NavFirst is FIRST(v.col, Offset).
	NavFirst
	// NavAgg is an aggregate (Agg) over the rows of v.
	NavAgg
)

// Nav is a value an expression reads from the rows of a match: column Col
// of a row of variable Var (AnyVar: any variable), or an aggregate over
// those rows. In a DEFINE condition the rows are the partial match's plus
// the row being decided on, when it is of Var (or Var is AnyVar).
type Nav struct {
	Func   NavFunc
	Var    int
	Offset int
	Col    int
	Agg    aggop.AggCall // NavAgg: its Arg is the column
}

// Expr is a DEFINE condition or a measure: Eval over the current row (a
// measure's: the match's last row) followed by the values of Navs.
type Expr struct {
	Eval func(r row.Row) (row.Value, error)
	// Base is how many columns of the current row Eval sees before the
	// Navs' values (0: all of them); columns after it are arguments only
	// Navs read.
	Base int
	Navs []Nav
	// Text is the expression as written, for errors.
	Text string
}

// SkipKind is the AFTER MATCH SKIP strategy.
type SkipKind uint8

// The strategies.
const (
	SkipToNextRow SkipKind = iota
	SkipPastLastRow
	SkipToFirst
	SkipToLast
)

// Spec is a MATCH_RECOGNIZE: partition by Keys, order by the event time in
// TimeCol and then Order, the pattern's Terms over Vars, each variable's
// condition (Define[v], nil for TRUE), the Measures emitted after the
// keys, the skip strategy (SkipVar for TO FIRST/LAST) and WITHIN (Within
// microseconds, 0 for none).
type Spec struct {
	Keys     []int
	TimeCol  int
	Order    []OrderKey
	Vars     []string
	Terms    []Term
	Define   []*Expr
	Measures []*Expr
	Skip     SkipKind
	SkipVar  int
	Within   int64
	// Batch: the input is bounded and read whole; late rows cannot occur.
	Batch bool
}

// OrderKey is an ORDER BY column after the time attribute.
type OrderKey struct {
	Col  int
	Desc bool
}

func (s *Spec) validate() error {
	if len(s.Terms) == 0 || len(s.Define) != len(s.Vars) {
		return fmt.Errorf("match: %d terms, %d variables, %d conditions", len(s.Terms), len(s.Vars), len(s.Define))
	}
	for _, t := range s.Terms {
		if t.Var < 0 || t.Var >= len(s.Vars) || t.Min < 0 || t.Max != Unbounded && (t.Max < t.Min || t.Max == 0) {
			return fmt.Errorf("match: bad term %+v", t)
		}
	}
	if (s.Skip == SkipToFirst || s.Skip == SkipToLast) && (s.SkipVar < 0 || s.SkipVar >= len(s.Vars)) {
		return fmt.Errorf("match: bad skip variable %d", s.SkipVar)
	}
	if s.TimeCol < 0 || s.Within < 0 {
		return fmt.Errorf("match: time column %d, within %d", s.TimeCol, s.Within)
	}
	return nil
}
