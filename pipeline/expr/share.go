package expr

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Common subexpressions: the filter and the SELECT list of one Calc often
// write the same call twice (Nexmark q21 extracts the channel id with one
// REGEXP_EXTRACT in the WHERE and again in a CASE branch). Share compiles
// such expressions again so that each repeated deterministic call is
// evaluated at most once per row, as Flink's code generation reuses a
// repeated RexCall's result.
//
// The value is kept in a memo after the input's columns in the row the
// expressions read, and computed where the first evaluation that reaches
// it asks for it, never sooner: a call written only in a CASE branch, on
// the right of AND or OR, or in a lazy argument (COALESCE, IF) is still
// evaluated only when the row reaches it, so it fails no row it did not
// fail before. A later evaluation of the same call over the same row
// reads the memo. A failure is not kept: the next evaluation computes the
// call again and fails the same way, as it did before.
//
// Only what gives the same value for the same row is shared: a call whose
// compiling reads the clock or is random (NOW(), PROCTIME(), UUID(), any
// call over one of them) is compiled as it was. A pipeline file's own
// functions are not compiled here (the planner runs them in a node of
// their own, whose results a Calc reads as columns).

// maxShared is how many subexpressions one Share keeps: a bit each in
// the memo's first value.
const maxShared = 64

// Shared is expressions compiled by Share.
type Shared struct {
	// Exprs are the expressions given to Share, in order, those
	// compiled again reading and writing the memo.
	Exprs []*Compiled
	// At is the index of the memo's first value in the rows Exprs read:
	// one past the last input column they read. Width is the memo's
	// number of values. A row the Exprs evaluate holds the input's first
	// At columns, then Width values of which the first is NULL for each
	// new row (the others need no clearing): a row of its own per
	// goroutine, since evaluating writes the memo.
	At, Width int
}

// Share compiles cs again, when they repeat a deterministic
// subexpression (a function call, CAST, CASE, LIKE, TRIM or EXTRACT
// written more than once), so that it is evaluated at most once per row.
// cs must be compiled over the same input (one Calc's filter and SELECT
// list); an expression the planner made by hand (no SQL text) is kept as
// it is, and reads the row as before. Share returns nil when nothing is
// repeated; it never changes cs.
func Share(cs []*Compiled) (*Shared, error) {
	counts := map[string]int{}
	for _, c := range cs {
		if c != nil && c.src != nil {
			countCandidates(c.src, counts)
		}
	}
	// A second occurrence of a repeated call reads the memo: what it
	// holds is not evaluated there, so count again without it.
	seen := map[string]int{}
	again := map[string]int{}
	for _, c := range cs {
		if c != nil && c.src != nil {
			countEvaluated(c.src, counts, seen, again)
		}
	}
	memo := &memoTable{entries: map[string]*memoEntry{}}
	for k, n := range again {
		if n > 1 {
			memo.entries[k] = &memoEntry{slot: -1}
		}
	}
	if len(memo.entries) == 0 {
		return nil, nil
	}
	// The memo goes after every column any of cs reads, as compiled or
	// as the planner redirected its paths (FieldPath.ReadAt).
	at := 0
	for _, c := range cs {
		if c == nil {
			continue
		}
		for _, i := range c.Reads {
			at = max(at, i+1)
		}
		for _, p := range c.all {
			at = max(at, p.at+1)
		}
	}
	memo.flag = at
	out := &Shared{Exprs: make([]*Compiled, len(cs)), At: at}
	for i, c := range cs {
		if c == nil || c.src == nil {
			out.Exprs[i] = c
			continue
		}
		nc, err := compileWith(c.src, c.scope, c.opts, memo)
		if err != nil {
			return nil, err
		}
		if len(nc.all) != len(c.all) {
			// Compiling is deterministic: this would be a bug; keep c.
			out.Exprs[i] = c
			continue
		}
		for j, p := range c.all {
			nc.all[j].at = p.at
		}
		out.Exprs[i] = nc
	}
	if memo.slots == 0 {
		return nil, nil
	}
	out.Width = 1 + memo.slots
	return out, nil
}

// candidate reports whether e is a kind of subexpression Share may keep:
// those that cost more than reading the memo.
func candidate(e sql.Expr) bool {
	switch e := e.(type) {
	case *sql.Call:
		return !IsAggregate(e.Name) && e.Filter == nil && !e.Distinct && !e.Star
	case *sql.Cast, *sql.Like, *sql.Case, *sql.Trim, *sql.Extract:
		return true
	}
	return false
}

// shareKey is e's text: two subexpressions of the same text over the
// same input compile to the same computation.
func shareKey(e sql.Expr) string { return sql.Format(e) }

// countCandidates counts every candidate subexpression of e by its text.
func countCandidates(e sql.Expr, counts map[string]int) {
	if e == nil {
		return
	}
	if candidate(e) {
		counts[shareKey(e)]++
	}
	for _, x := range e.Children() {
		countCandidates(x, counts)
	}
}

// countEvaluated counts the candidates evaluated when those written more
// than once (counts) are each evaluated once: the subexpressions of a
// repeated one's later occurrences are not.
func countEvaluated(e sql.Expr, counts, seen, again map[string]int) {
	if e == nil {
		return
	}
	if candidate(e) {
		k := shareKey(e)
		again[k]++
		if counts[k] > 1 {
			seen[k]++
			if seen[k] > 1 {
				return
			}
		}
	}
	for _, x := range e.Children() {
		countEvaluated(x, counts, seen, again)
	}
}

// memoTable is the subexpressions Share keeps, by text.
type memoTable struct {
	entries map[string]*memoEntry
	// flag is the index of the memo's first value, whose bit k says
	// that slot k holds its value for this row; slot k is at flag+1+k.
	flag  int
	slots int
}

type memoEntry struct {
	slot int // -1 until its first occurrence compiled
	t    row.Type
	off  bool // not shared: it reads the clock, or is a constant or a column
}

// compile compiles e, reading and writing the memo when it is a
// subexpression kept.
func (m *memoTable) compile(c *compiler, e sql.Expr) (*node, error) {
	if !candidate(e) {
		return c.compileNode(e)
	}
	ent := m.entries[shareKey(e)]
	if ent == nil || ent.off {
		return c.compileNode(e)
	}
	v := c.volatiles
	n, err := c.compileNode(e)
	if err != nil {
		return nil, err
	}
	switch {
	case c.volatiles != v || n.konst || n.col >= 0 || n.path != nil:
		ent.off = true
		return n, nil
	case ent.slot >= 0 && ent.t != n.t:
		return n, nil // not the same computation after all
	case ent.slot < 0:
		if m.slots == maxShared {
			ent.off = true
			return n, nil
		}
		ent.slot, ent.t = m.slots, n.t
		m.slots++
	}
	return &node{t: n.t, eval: memoEval(n.eval, m.flag, m.flag+1+ent.slot, uint64(1)<<ent.slot), col: -1, e: e}, nil
}

// memoEval is f evaluated once per row: the value is kept in r[slot],
// and bit in r[flag] says it is there.
func memoEval(f evalFn, flag, slot int, bit uint64) evalFn {
	return func(r row.Row) (row.Value, error) {
		if uint64(r[flag].Int64())&bit != 0 {
			return r[slot], nil
		}
		v, err := f(r)
		if err == nil {
			// f may have kept values of its own: read the flag again.
			r[slot] = v
			r[flag] = row.BigIntValue(int64(uint64(r[flag].Int64()) | bit))
		}
		return v, err
	}
}
