package expr

import (
	"fmt"
	"math"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// domain is how two comparable values are compared.
type domain uint8

const (
	domInt    domain = iota // Int64(): integers, BOOLEAN, DATE days, timestamp micros
	domFloat                // toFloat(): anything with FLOAT or DOUBLE
	domDec                  // exact numbers with a DECIMAL among them
	domString               // Str(): STRING, BYTES
)

// Outcomes of a comparison, indexing a [4]bool truth table.
const (
	less      = 0
	equal     = 1
	greater   = 2
	unordered = 3 // a NaN took part
)

// truth is the table of an operator: which outcomes make it TRUE. Any
// comparison with NaN is false but <>, as in Java.
func truth(op sql.BinaryOp) [4]bool {
	switch op {
	case sql.OpEq:
		return [4]bool{equal: true}
	case sql.OpNe:
		return [4]bool{less: true, greater: true, unordered: true}
	case sql.OpLt:
		return [4]bool{less: true}
	case sql.OpLe:
		return [4]bool{less: true, equal: true}
	case sql.OpGt:
		return [4]bool{greater: true}
	case sql.OpGe:
		return [4]bool{greater: true, equal: true}
	}
	return [4]bool{}
}

// flip mirrors an operator: a < b is b > a.
func flip(op sql.BinaryOp) sql.BinaryOp {
	switch op {
	case sql.OpLt:
		return sql.OpGt
	case sql.OpLe:
		return sql.OpGe
	case sql.OpGt:
		return sql.OpLt
	case sql.OpGe:
		return sql.OpLe
	}
	return op
}

func ordInt(a, b int64) int {
	switch {
	case a < b:
		return less
	case a > b:
		return greater
	}
	return equal
}

func ordFloat(a, b float64) int {
	switch {
	case a < b:
		return less
	case a > b:
		return greater
	case a == b:
		return equal
	}
	return unordered
}

func ordString(a, b string) int { return strings.Compare(a, b) + 1 }

func ordDec(a, b row.Value) int {
	if a.WideDecimal() || b.WideDecimal() {
		return row.CompareDecimals(a, b) + 1
	}
	return decCmp(a.Int64(), a.Scale(), b.Int64(), b.Scale()) + 1
}

func ordFloatV(a, b row.Value) int { return ordFloat(toFloat(a), toFloat(b)) }
func ordIntV(a, b row.Value) int   { return ordInt(a.Int64(), b.Int64()) }
func ordStrV(a, b row.Value) int   { return ordString(a.Str(), b.Str()) }

// compareDomain says how values of types a and b compare, or why they
// cannot be.
func compareDomain(a, b row.Type) (domain, error) {
	switch {
	case a.ID.Numeric() && b.ID.Numeric():
		switch {
		case isApprox(a.ID) || isApprox(b.ID):
			return domFloat, nil
		case a.ID == row.Decimal || b.ID == row.Decimal:
			return domDec, nil
		}
		return domInt, nil
	case a.ID == row.String && b.ID == row.String, a.ID == row.Bytes && b.ID == row.Bytes:
		return domString, nil
	case a.ID == row.Boolean && b.ID == row.Boolean:
		return domInt, nil
	case a.ID == b.ID && (a.ID.Temporal() || a.ID == row.Time || isInterval(a.ID)):
		return domInt, nil
	case isTimestamp(a.ID) && isTimestamp(b.ID):
		return domInt, nil
	}
	return 0, fmt.Errorf("cannot compare %s with %s", typeName(a), typeName(b))
}

// comparable brings l and r to types compareDomain accepts: a STRING
// constant against a number, BOOLEAN or time becomes that type (at plan
// time, so a bad constant is a plan error), and DATE against a timestamp
// becomes a timestamp.
func (c *compiler) comparable(l, r *node) (*node, *node, error) {
	// A STRING constant converts to a TIMESTAMP_LTZ through castKernel
	// below, in the session zone, as Flink's literal does (ltz29-compare-*).
	// A TIMESTAMP or DATE against one is refused under a zone: Flink
	// compares neither as the TIMESTAMP's instant there nor as the LTZ's
	// wall clock at a DST overlap (2024-11-03 01:30 PST is neither equal
	// to nor after the TIMESTAMP 01:30 in Los_Angeles), a rule not yet
	// known.
	if c.zone != nil && (l.t.ID == row.TimestampLTZ || r.t.ID == row.TimestampLTZ) && zoneConv(l.t.ID, r.t.ID) && l.t.ID != row.String && r.t.ID != row.String {
		return nil, nil, c.unzonedErr("comparing " + typeName(l.t) + " with " + typeName(r.t))
	}
	conv := func(s, other *node) (*node, error) {
		if !s.konst || s.t.ID != row.String || other.t.ID == row.String || other.t.ID == row.Null {
			return s, nil
		}
		if !other.t.ID.Numeric() && !other.t.ID.Temporal() && other.t.ID != row.Time && other.t.ID != row.Boolean {
			return s, nil
		}
		to := other.t
		if to.ID == row.Decimal || to.ID.Integral() {
			// Compare with the constant's own value, not a rounded one.
			to = row.Type{ID: row.Double}
			if d, err := row.ParseText(s.val.Str(), row.Type{ID: row.Decimal, Precision: maxPrec, Scale: decimalScaleOf(s.val.Str())}); err == nil {
				return constNode(s.e, row.Type{ID: row.Decimal, Precision: maxPrec, Scale: d.Scale(), NotNull: true}, d), nil
			}
		}
		if s.val.IsNull() {
			return constNode(s.e, to, row.NullValue), nil
		}
		k, err := castKernel(s.t, to, c.zone)
		if err != nil {
			return nil, err
		}
		v, err := k(s.val)
		if err != nil {
			return nil, fmt.Errorf("cannot compare %s with %s: %v", typeName(other.t), exprString(s.e)(), err)
		}
		return constNode(s.e, to, v), nil
	}
	var err error
	if l, err = conv(l, r); err != nil {
		return nil, nil, err
	}
	if r, err = conv(r, l); err != nil {
		return nil, nil, err
	}
	dateToTs := func(d, ts *node) *node {
		if d.t.ID != row.Date || !isTimestamp(ts.t.ID) {
			return d
		}
		ev := d.eval
		id := ts.t.ID
		n := &node{t: row.Type{ID: id, Precision: 0, NotNull: d.t.NotNull}, col: -1, e: d.e, konst: d.konst}
		n.eval = func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			return tsValue(id, int64(v.Days())*microsPerDay), nil
		}
		if d.konst && !d.val.IsNull() {
			n.val = tsValue(id, int64(d.val.Days())*microsPerDay)
		}
		return n
	}
	return dateToTs(l, r), dateToTs(r, l), nil
}

// decimalScaleOf counts the fraction digits of a decimal text, for
// comparing with a STRING constant exactly.
func decimalScaleOf(s string) int {
	s = strings.TrimSpace(s)
	if _, frac, ok := strings.Cut(s, "."); ok {
		return min(len(frac), maxPrec)
	}
	return 0
}

// comparison compiles l op r for the six comparison operators. The common
// shapes, a column against a constant and a column against a column, get
// closures that read the row directly.
func (c *compiler) comparison(op sql.BinaryOp, l, r *node) (evalFn, error) {
	if l.t.ID.Nested() || r.t.ID.Nested() {
		return nestedComparison(op, l, r)
	}
	l, r, err := c.comparable(l, r)
	if err != nil {
		return nil, err
	}
	if l.t.ID == row.Null || r.t.ID == row.Null {
		return nullEval(l, r), nil
	}
	dom, err := compareDomain(l.t, r.t)
	if err != nil {
		return nil, err
	}
	if l.konst && !r.konst {
		l, r, op = r, l, flip(op)
	}
	if r.konst && r.val.IsNull() {
		return constEval(row.NullValue), nil
	}
	if r.konst && l.col >= 0 {
		if f := columnConstCompare(dom, op, l, r.val); f != nil {
			return f, nil
		}
	}
	if r.konst {
		if f := exprConstCompare(dom, op, l.eval, r.val); f != nil {
			return f, nil
		}
	}
	return valueCompare(dom, op, l, r), nil
}

// columnConstCompare is column l op the constant k, reading the row and
// comparing in the domain's own Go type; nil for a domain without one
// (DECIMAL).
func columnConstCompare(dom domain, op sql.BinaryOp, l *node, k row.Value) evalFn {
	i, want := l.col, truth(op)
	switch dom {
	case domInt:
		c := k.Int64()
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return v, nil
			}
			return boolOf(want[ordInt(v.Int64(), c)]), nil
		}
	case domFloat:
		c := toFloat(k)
		if l.t.ID == row.Double {
			return func(rw row.Row) (row.Value, error) {
				v := rw[i]
				if v.IsNull() {
					return v, nil
				}
				return boolOf(want[ordFloat(math.Float64frombits(uint64(v.Int64())), c)]), nil
			}
		}
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return v, nil
			}
			return boolOf(want[ordFloat(toFloat(v), c)]), nil
		}
	case domString:
		c := k.Str()
		if op == sql.OpEq || op == sql.OpNe {
			eq := op == sql.OpEq
			return func(rw row.Row) (row.Value, error) {
				v := rw[i]
				if v.IsNull() {
					return v, nil
				}
				return boolOf((v.Str() == c) == eq), nil
			}
		}
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return v, nil
			}
			return boolOf(want[ordString(v.Str(), c)]), nil
		}
	}
	return nil
}

// exprConstCompare is any expression le op the constant k: one closure
// call for the expression, the comparison inline.
func exprConstCompare(dom domain, op sql.BinaryOp, le evalFn, k row.Value) evalFn {
	want := truth(op)
	switch dom {
	case domDec:
		return decConstCompare(want, le, k)
	case domInt:
		c := k.Int64()
		return func(rw row.Row) (row.Value, error) {
			v, err := le(rw)
			if err != nil || v.IsNull() {
				return v, err
			}
			return boolOf(want[ordInt(v.Int64(), c)]), nil
		}
	case domFloat:
		c := toFloat(k)
		return func(rw row.Row) (row.Value, error) {
			v, err := le(rw)
			if err != nil || v.IsNull() {
				return v, err
			}
			return boolOf(want[ordFloat(toFloat(v), c)]), nil
		}
	case domString:
		c := k.Str()
		return func(rw row.Row) (row.Value, error) {
			v, err := le(rw)
			if err != nil || v.IsNull() {
				return v, err
			}
			return boolOf(want[ordString(v.Str(), c)]), nil
		}
	}
	return nil
}

// decConstCompare is le op k (want: truth's table) where a DECIMAL takes
// part: k is rescaled once to every scale an int64 decimal has, where it
// fits, so that a value that fits an int64 (its scale is its type's, the
// same on every row) compares as one integer with another, exactly; a
// wide value, or a scale k does not fit at (finer than k's own, or k too
// large there), compares as ordDec does. The tables are read only: the
// closure runs on several goroutines at once (a fused Calc).
func decConstCompare(want [4]bool, le evalFn, k row.Value) evalFn {
	var at [len(pow10)]int64
	var ok [len(pow10)]bool
	if !k.WideDecimal() {
		for s := k.Scale(); s < len(at); s++ {
			at[s], ok[s] = rescale(k.Int64(), k.Scale(), s) // exact: no digit dropped
		}
	}
	return func(rw row.Row) (row.Value, error) {
		v, err := le(rw)
		if err != nil || v.IsNull() {
			return v, err
		}
		if s := v.Scale(); s < len(at) && ok[s] && !v.WideDecimal() {
			return boolOf(want[ordInt(v.Int64(), at[s])]), nil
		}
		return boolOf(want[ordDec(v, k)]), nil
	}
}

// valueCompare is l op r for any two operands, comparing row.Values: two
// columns read directly, anything else through the operands' closures.
func valueCompare(dom domain, op sql.BinaryOp, l, r *node) evalFn {
	want := truth(op)
	ord := ordIntV
	switch dom {
	case domFloat:
		ord = ordFloatV
	case domDec:
		ord = ordDec
	case domString:
		ord = ordStrV
	}
	if l.col >= 0 && r.col >= 0 {
		i, j := l.col, r.col
		return func(rw row.Row) (row.Value, error) {
			a, b := rw[i], rw[j]
			if a.IsNull() || b.IsNull() {
				return row.NullValue, nil
			}
			return boolOf(want[ord(a, b)]), nil
		}
	}
	le, re := l.eval, r.eval
	return func(rw row.Row) (row.Value, error) {
		a, err := le(rw)
		if err != nil || a.IsNull() {
			return a, err
		}
		b, err := re(rw)
		if err != nil || b.IsNull() {
			return b, err
		}
		return boolOf(want[ord(a, b)]), nil
	}
}

func (c *compiler) between(e *sql.Between) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	lo, err := c.compile(e.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := c.compile(e.Hi)
	if err != nil {
		return nil, err
	}
	lower, upper := sql.OpGe, sql.OpLe
	if e.Not {
		lower, upper = sql.OpLt, sql.OpGt
	}
	a, err := c.comparison(lower, x, lo)
	if err != nil {
		return nil, errAt(e.OpAt, "BETWEEN: %v", err)
	}
	b, err := c.comparison(upper, x, hi)
	if err != nil {
		return nil, errAt(e.OpAt, "BETWEEN: %v", err)
	}
	t := row.Type{ID: row.Boolean, NotNull: x.t.NotNull && lo.t.NotNull && hi.t.NotNull}
	// x NOT BETWEEN lo AND hi is x < lo OR x > hi.
	stop := !e.Not // AND stops at FALSE, OR at TRUE
	f := func(r row.Row) (row.Value, error) {
		v, err := a(r)
		if err != nil {
			return v, err
		}
		if !v.IsNull() && v.Bool() != stop {
			return v, nil
		}
		w, err := b(r)
		if err != nil {
			return w, err
		}
		switch {
		case !w.IsNull() && w.Bool() != stop:
			return w, nil
		case v.IsNull() || w.IsNull():
			return row.NullValue, nil
		}
		return boolOf(stop), nil
	}
	return c.finish(e, t, f, x, lo, hi)
}

// inList compiles x [NOT] IN (list). A list of constants becomes a hash
// set built once; otherwise it is a chain of equalities. NULL rules: x
// NULL gives NULL; no match with a NULL in the list gives NULL.
func (c *compiler) inList(e *sql.InList) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	list, err := c.compileAll(e.List)
	if err != nil {
		return nil, err
	}
	t := row.Type{ID: row.Boolean, NotNull: x.t.NotNull}
	allConst := true
	eqs := make([]evalFn, len(list))
	for i, n := range list {
		eq, err := c.comparison(sql.OpEq, x, n)
		if err != nil {
			return nil, errAt(n.e.Pos(), "IN: %v", err)
		}
		eqs[i] = eq
		allConst = allConst && n.konst
		t.NotNull = t.NotNull && n.t.NotNull
	}
	neg := e.Not
	if allConst && x.t.ID != row.Null {
		if f := c.inSet(x, list, neg); f != nil {
			return c.finish(e, t, f, x)
		}
	}
	f := func(r row.Row) (row.Value, error) {
		sawNull := false
		for _, eq := range eqs {
			v, err := eq(r)
			if err != nil {
				return v, err
			}
			if v.IsNull() {
				sawNull = true
			} else if v.Bool() {
				return boolOf(!neg), nil
			}
		}
		if sawNull {
			return row.NullValue, nil
		}
		return boolOf(neg), nil
	}
	return c.finish(e, t, f, append([]*node{x}, list...)...)
}

// inSet builds the hash-set form of IN, or returns nil when the values do
// not share a domain with a simple key.
func (c *compiler) inSet(x *node, list []*node, neg bool) evalFn {
	hasNull := false
	vals := make([]row.Value, 0, len(list))
	var dom domain
	for i, n := range list {
		l, r, err := c.comparable(x, n)
		if err != nil {
			return nil
		}
		if r.val.IsNull() || r.t.ID == row.Null {
			hasNull = true
			continue
		}
		d, err := compareDomain(l.t, r.t)
		if err != nil || (i > 0 && d != dom) || l.t.ID != x.t.ID {
			return nil
		}
		dom = d
		vals = append(vals, r.val)
	}
	ev := x.eval
	result := func(v row.Value, found bool) (row.Value, error) {
		switch {
		case found:
			return boolOf(!neg), nil
		case hasNull:
			return row.NullValue, nil
		}
		return boolOf(neg), nil
	}
	switch dom {
	case domInt:
		set := make(map[int64]struct{}, len(vals))
		for _, v := range vals {
			set[v.Int64()] = struct{}{}
		}
		return func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			_, ok := set[v.Int64()]
			return result(v, ok)
		}
	case domFloat:
		set := make(map[float64]struct{}, len(vals))
		for _, v := range vals {
			set[toFloat(v)] = struct{}{}
		}
		return func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			_, ok := set[toFloat(v)]
			return result(v, ok)
		}
	case domString:
		set := make(map[string]struct{}, len(vals))
		for _, v := range vals {
			set[v.Str()] = struct{}{}
		}
		return func(r row.Row) (row.Value, error) {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return v, err
			}
			_, ok := set[v.Str()]
			return result(v, ok)
		}
	}
	return nil
}
