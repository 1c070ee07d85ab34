package udf

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Registry holds a pipeline's functions by name; a name may have several
// declarations (overloads) that differ in their parameter types.
type Registry struct {
	byName map[string][]*Function
	all    []*Function
}

// Load loads the declared functions: compiles each module and checks its
// exports, parses each script. taken reports a name SQL already gives a
// meaning (a built-in function), which a declaration may not take. The
// errors point at the declarations; the registry holds the functions that
// loaded.
func Load(ctx context.Context, decls []*spec.Function, taken func(name string) bool) (*Registry, spec.List) {
	r := &Registry{byName: map[string][]*Function{}}
	var errs spec.List
	for _, d := range decls {
		if d.Name == "" {
			continue
		}
		if taken != nil && taken(d.Name) {
			errs.Addf(d.Pos, d.Path+".name", "%q is the name of a built-in SQL function, which a query would call instead; name the function otherwise", d.Name)
			continue
		}
		f, err := newFunction(d)
		if err != nil {
			errs.Addf(d.Pos, d.Path, "%v", err)
			continue
		}
		if prev := r.overload(f); prev != nil {
			errs.Addf(d.Pos, d.Path, "function %s is declared twice with these parameter types (first at %s)", f.Signature(), prev.Decl.Pos)
			continue
		}
		if others := r.byName[strings.ToLower(f.Name)]; len(others) > 0 && others[0].Kind != f.Kind {
			errs.Addf(d.Pos, d.Path+".kind", "function %s is declared as a %s function at %s and as a %s function here: overloads are of one kind", f.Name, others[0].Kind, others[0].Decl.Pos, f.Kind)
			continue
		}
		if err := f.load(ctx); err != nil {
			pos, path := d.Pos, d.Path
			switch {
			case d.Language == "wasm":
				pos, path = d.WasmPos, d.Path+".wasm"
			case d.CodePos.IsValid():
				pos, path = d.CodePos, d.Path+".code"
			}
			var placed *spec.Error
			if errors.As(err, &placed) {
				errs.Add(placed)
			} else {
				errs.Addf(pos, path, "function %s: %v", f.Name, err)
			}
			continue
		}
		key := strings.ToLower(f.Name)
		r.byName[key] = append(r.byName[key], f)
		r.all = append(r.all, f)
	}
	return r, errs
}

// newFunction checks a declaration's types and makes its Function.
func newFunction(d *spec.Function) (*Function, error) {
	f := &Function{Name: d.Name, Language: d.Language, Deterministic: d.Deterministic, NullTolerant: d.NullTolerant, Timeout: d.Timeout, Decl: d}
	if f.Timeout == 0 {
		f.Timeout = DefaultTimeout
	}
	switch d.Kind {
	case "table":
		f.Kind = Table
	case "aggregate":
		f.Kind = Aggregate
	default:
		f.Kind = Scalar
	}
	var bad []error
	for _, p := range d.Params {
		if err := CheckType(p.Type); err != nil {
			bad = append(bad, fmt.Errorf("parameter %s: %w", p.Name, err))
		}
		f.Params = append(f.Params, p.Type.Nullable())
	}
	f.Returns = d.Returns
	for _, c := range d.Columns {
		if err := CheckType(c.Type); err != nil {
			bad = append(bad, fmt.Errorf("result column %s: %w", c.Name, err))
		}
		f.Columns = append(f.Columns, row.Field{Name: c.Name, Type: c.Type.Nullable()})
	}
	if f.Kind != Table && f.Returns.ID != row.Null {
		if err := CheckType(f.Returns); err != nil {
			bad = append(bad, fmt.Errorf("result: %w", err))
		}
	}
	if f.Kind == Aggregate && f.Language == "javascript" {
		bad = append(bad, errors.New("an aggregate function is a WebAssembly module's: a JavaScript function is scalar or table"))
	}
	if f.Kind == Aggregate && len(f.Params) == 0 {
		bad = append(bad, errors.New("an aggregate function takes at least one parameter"))
	}
	return f, errors.Join(bad...)
}

// load compiles or parses the function's code.
func (f *Function) load(ctx context.Context) error {
	var err error
	switch f.Language {
	case "wasm":
		f.impl, err = loadWasm(ctx, f)
	case "javascript":
		f.impl, err = loadJS(f)
	default:
		err = fmt.Errorf("unknown language %q", f.Language)
	}
	return err
}

// overload returns the declaration of f's name with f's parameter types.
func (r *Registry) overload(f *Function) *Function {
	for _, g := range r.byName[strings.ToLower(f.Name)] {
		if len(g.Params) != len(f.Params) {
			continue
		}
		same := true
		for i := range g.Params {
			same = same && g.Params[i] == f.Params[i]
		}
		if same {
			return g
		}
	}
	return nil
}

// Functions lists the loaded functions in file order.
func (r *Registry) Functions() []*Function {
	if r == nil {
		return nil
	}
	return r.all
}

// Lookup returns the declarations of name (any case), nil for a name no
// function has.
func (r *Registry) Lookup(name string) []*Function {
	if r == nil {
		return nil
	}
	return r.byName[strings.ToLower(name)]
}

// Resolve finds the declaration of name that takes arguments of types
// args: the one whose parameters they convert to at the least cost (the
// same type costs nothing; a wider number, DATE to TIMESTAMP, NULL to
// anything cost more). It is an error when none takes them, or when two
// take them at the same cost.
func (r *Registry) Resolve(name string, args []row.Type) (*Function, error) {
	cands := r.Lookup(name)
	var best *Function
	bestCost, tie := -1, false
	for _, f := range cands {
		if len(f.Params) != len(args) {
			continue
		}
		cost := 0
		for i, p := range f.Params {
			c := convertCost(args[i], p)
			if c < 0 {
				cost = -1
				break
			}
			cost += c
		}
		switch {
		case cost < 0:
		case best == nil || cost < bestCost:
			best, bestCost, tie = f, cost, false
		case cost == bestCost:
			tie = true
		}
	}
	got := make([]string, len(args))
	for i, t := range args {
		got[i] = typeText(t)
	}
	if tie {
		return nil, fmt.Errorf("the call %s(%s) matches several declarations equally well; CAST an argument to pick one (%s)", cands[0].Name, strings.Join(got, ", "), signatures(cands))
	}
	if best == nil {
		return nil, fmt.Errorf("function %s takes %s, not (%s)", cands[0].Name, signatures(cands), strings.Join(got, ", "))
	}
	return best, nil
}

func typeText(t row.Type) string {
	if t.ID == row.Null {
		return "NULL"
	}
	return t.Nullable().String()
}

func signatures(fs []*Function) string {
	var s []string
	for _, f := range fs {
		types := make([]string, len(f.Params))
		for i, t := range f.Params {
			types[i] = t.String()
		}
		s = append(s, "("+strings.Join(types, ", ")+")")
	}
	sort.Strings(s)
	return strings.Join(s, " or ")
}

// numericRank orders the numeric types by the widening SQL does
// implicitly (Flink's implicit casts): TINYINT < SMALLINT < INT <
// BIGINT < DECIMAL < FLOAT < DOUBLE.
func numericRank(t row.Type) int {
	switch t.ID {
	case row.Int:
		return t.IntBits() / 8 // 1, 2, 4
	case row.BigInt:
		return 5
	case row.Decimal:
		return 6
	case row.Float:
		return 7
	case row.Double:
		return 8
	}
	return 0
}

// convertCost is what an argument of type from costs to pass as a
// parameter of type to: 0 the same type, more for an implicit widening,
// -1 when SQL would need a CAST.
func convertCost(from, to row.Type) int {
	from, to = from.Nullable(), to.Nullable()
	switch {
	case from.ID == row.Null:
		return 1
	case from == to:
		return 0
	case from.ID == to.ID && !from.ID.Nested():
		// VARCHAR(n) to STRING, another DECIMAL or timestamp precision.
		return 1
	}
	if a, b := numericRank(from), numericRank(to); a > 0 && b > 0 {
		if a < b {
			return b - a
		}
		return -1
	}
	switch {
	case from.ID == row.Date && to.ID == row.Timestamp, from.ID == row.Timestamp && to.ID == row.TimestampLTZ:
		return 1
	case from.ID == row.Date && to.ID == row.TimestampLTZ:
		return 2
	}
	return -1
}

// Close releases the compiled modules.
func (r *Registry) Close(ctx context.Context) error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, f := range r.all {
		if f.impl != nil {
			errs = append(errs, f.impl.close(ctx))
		}
	}
	return errors.Join(errs...)
}
