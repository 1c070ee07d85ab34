package expr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// builder compiles a call whose arguments are compiled and counted.
type builder func(c *compiler, e *sql.Call, args []*node) (*node, error)

// funcDef describes a scalar function.
type funcDef struct {
	min, max int // argument counts; max -1 for any number
	build    builder
	// lazyFrom is the first argument that is evaluated only sometimes
	// (IF's branches, COALESCE's fallbacks); 0 when all always are.
	lazyFrom int
	// unitArg says the call starts with a unit keyword (TIMESTAMPADD's
	// DAY, sql.Call.Unit): it reaches the builder as argument 0, a
	// constant STRING.
	unitArg bool
	// toUnit says the call may end with TO unit (FLOOR(x TO DAY),
	// sql.Call.Unit); the builder reads it from the call.
	toUnit bool
}

// funcs is the function library, filled by the funcs_*.go files.
var funcs = map[string]*funcDef{}

func register(defs map[string]*funcDef) {
	for name, d := range defs {
		funcs[name] = d
	}
}

func init() {
	register(map[string]*funcDef{
		"COALESCE": {min: 1, max: -1, lazyFrom: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.coalesce(e, a) }},
		"IFNULL":   {min: 2, max: 2, lazyFrom: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.coalesce(e, a) }},
		"IF":       {min: 3, max: 3, lazyFrom: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.ifFunc(e, a) }},
		"NULLIF":   {min: 2, max: 2, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) { return c.nullif(e, a) }},
	})
}

// IsFunction reports whether name (any case) is a built-in scalar
// function.
func IsFunction(name string) bool {
	_, ok := funcs[strings.ToUpper(name)]
	return ok
}

// functionNames lists every scalar function, for suggestions.
func functionNames() []string {
	names := make([]string, 0, len(funcs)+len(aggregates))
	for n := range funcs {
		names = append(names, n)
	}
	for n := range aggregates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *compiler) call(e *sql.Call) (*node, error) {
	name := strings.ToUpper(e.Name)
	if aggregates[name] {
		return nil, errAt(e.At, "aggregate function %s is not allowed here: aggregates belong in the SELECT list or HAVING of a query (use a subquery or transform to filter on one)", name)
	}
	if e.Filter != nil {
		return nil, errAt(e.FilterAt, "FILTER (WHERE ...) applies only to aggregate functions, not to %s", name)
	}
	def, ok := funcs[name]
	if !ok {
		msg := fmt.Sprintf("unknown function %s", name)
		if s := suggest(name, functionNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		return nil, errAt(e.At, "%s", msg)
	}
	if e.Star {
		return nil, errAt(e.At, "%s(*) is not allowed: only COUNT(*) takes *", name)
	}
	if e.Distinct {
		return nil, errAt(e.At, "DISTINCT is allowed only in aggregate calls, not in %s", name)
	}
	if def.unitArg != (e.Unit != "") && !def.toUnit {
		if def.unitArg {
			return nil, errAt(e.At, "%s needs a time unit keyword first, as in %s(DAY, ...)", name, name)
		}
		return nil, errAt(e.UnitAt, "%s does not take a time unit", name)
	}
	n := len(e.Args)
	if def.unitArg {
		n++
	}
	if n < def.min || (def.max >= 0 && n > def.max) {
		return nil, errAt(e.At, "%s takes %s, got %d", name, arity(def.min, def.max), n)
	}
	args := make([]*node, 0, n)
	if def.unitArg {
		u := &sql.Literal{At: e.UnitAt, Kind: sql.LitString, Text: e.Unit}
		args = append(args, constNode(u, row.Type{ID: row.String, NotNull: true}, row.StringValue(e.Unit)))
	}
	for _, a := range e.Args {
		var err error
		var arg *node
		if def.lazyFrom > 0 && len(args) >= def.lazyFrom {
			arg, err = c.compileLazy(a)
		} else {
			arg, err = c.compile(a)
		}
		if err != nil {
			return nil, err
		}
		args = append(args, arg)
		if isInterval(arg.t.ID) {
			return nil, errAt(a.Pos(), "%s does not take an INTERVAL argument", name)
		}
	}
	return def.build(c, e, args)
}

func arity(lo, hi int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %s", plural(lo))
	case lo == hi:
		return plural(lo)
	case hi == lo+1:
		return fmt.Sprintf("%d or %s", lo, plural(hi))
	}
	return fmt.Sprintf("%d to %s", lo, plural(hi))
}

// argError reports a wrong argument at its position.
func argError(e *sql.Call, i int, args []*node, want string) error {
	return errAt(args[i].e.Pos(), "%s argument %d must be %s, not %s", e.Name, i+1, want, typeName(args[i].t))
}

func isStringy(t row.Type) bool { return t.ID == row.String || t.ID == row.Null }
func isNumber(t row.Type) bool  { return t.ID.Numeric() || t.ID == row.Null }
func isInteger(t row.Type) bool { return t.ID.Integral() || t.ID == row.Null }

// check verifies argument types: ok reports whether argument i is
// acceptable, want describes what is.
func check(e *sql.Call, args []*node, want string, ok func(row.Type) bool, idx ...int) error {
	if len(idx) == 0 {
		for i := range args {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		if i < len(args) && !ok(args[i].t) {
			return argError(e, i, args, want)
		}
	}
	return nil
}

func allNotNull(args ...*node) bool {
	for _, a := range args {
		if !a.t.NotNull {
			return false
		}
	}
	return true
}

// fn1, fn2 and fn3 make NULL-propagating nodes: NULL in, NULL out. f's
// errors become *EvalError naming e.
func (c *compiler) fn1(e sql.Expr, t row.Type, a *node, f func(a row.Value) (row.Value, error)) (*node, error) {
	text := exprString(e)
	ae := a.eval
	g := func(r row.Row) (row.Value, error) {
		x, err := ae(r)
		if err != nil || x.IsNull() {
			return row.NullValue, err
		}
		v, err := f(x)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return v, nil
	}
	return c.finish(e, t, g, a)
}

func (c *compiler) fn2(e sql.Expr, t row.Type, a, b *node, f func(a, b row.Value) (row.Value, error)) (*node, error) {
	text := exprString(e)
	g := bin(a.eval, b.eval, func(x, y row.Value) (row.Value, error) {
		v, err := f(x, y)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return v, nil
	})
	return c.finish(e, t, g, a, b)
}

func (c *compiler) fn3(e sql.Expr, t row.Type, a, b, d *node, f func(a, b, d row.Value) (row.Value, error)) (*node, error) {
	text := exprString(e)
	ae, be, de := a.eval, b.eval, d.eval
	g := func(r row.Row) (row.Value, error) {
		x, err := ae(r)
		if err != nil || x.IsNull() {
			return row.NullValue, err
		}
		y, err := be(r)
		if err != nil || y.IsNull() {
			return row.NullValue, err
		}
		z, err := de(r)
		if err != nil || z.IsNull() {
			return row.NullValue, err
		}
		v, err := f(x, y, z)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return v, nil
	}
	return c.finish(e, t, g, a, b, d)
}

// fnN is fn1..fn3 for any number of arguments. f must not keep vals. The
// scratch slice escapes to the heap (f is not known to the compiler), so
// fnN is for string functions that allocate their result anyway.
func (c *compiler) fnN(e sql.Expr, t row.Type, args []*node, f func(vals []row.Value) (row.Value, error)) (*node, error) {
	text := exprString(e)
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	g := func(r row.Row) (row.Value, error) {
		var buf [8]row.Value
		vals := buf[:0]
		if len(evs) > len(buf) {
			vals = make([]row.Value, 0, len(evs))
		}
		for _, ev := range evs {
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			vals = append(vals, v)
		}
		v, err := f(vals)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return v, nil
	}
	return c.finish(e, t, g, args...)
}

// volatile makes a node that reads the clock: never folded, and noted in
// Compiled.Clock.
func (c *compiler) volatile(e *sql.Call, t row.Type, f evalFn) *node {
	c.volatiles++
	if c.clock == "" {
		c.clock = strings.ToUpper(e.Name) + "()"
	}
	return &node{t: t, eval: f, col: -1, e: e}
}

// constArg returns argument i's constant value, or an error saying it
// must be a constant.
func constArg(e *sql.Call, args []*node, i int, what string) (row.Value, error) {
	if !args[i].konst {
		return row.NullValue, errAt(args[i].e.Pos(), "%s argument %d (%s) must be a constant", e.Name, i+1, what)
	}
	return args[i].val, nil
}

// suggest returns the candidate closest to name when it is close enough
// to be a likely typo.
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := levenshtein(lname, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, min(3, len([]rune(name))/3))
	if bestD <= limit {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
