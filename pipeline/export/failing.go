package export

// Expressions that fail a Flink job on a bad value. A row an expression
// fails on (text that does not parse in a CAST, a zero divisor) goes to
// etld's on_error of the source it came from; Flink fails the job. With
// on_error: fail both engines stop, so only the transforms (and computed
// columns) that read a source with skip or dead-letter list them.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/pipeline/sql"
)

// dataFailures lists, as differences, the expressions of the pipeline
// that fail Flink's job where etld sets the row aside.
func (x *exporter) dataFailures() {
	for _, s := range x.plan.Sources {
		if lenient(s.Spec) == "" || s.Table == nil {
			continue
		}
		element := "source " + s.Spec.Name
		policy := fmt.Sprintf("the on_error of source %s (%s)", s.Spec.Name, s.Spec.OnError.Policy)
		scope := &scope{}
		scope.add(s.Spec.Name, "", s.Table.Root.Schema)
		for _, c := range s.Spec.Schema {
			if c.Computed != nil {
				x.failingIn(c.Computed, parseExpr, c.Path, element, policy, scope)
			}
		}
	}
	for _, t := range x.plan.Transforms {
		tr := t.Transform
		var lenientSources []string
		for _, s := range x.sourcesRead(tr.Name, map[string]bool{}) {
			if p := lenient(s.Spec); p != "" {
				lenientSources = append(lenientSources, fmt.Sprintf("source %s (%s)", s.Spec.Name, p))
			}
		}
		if len(lenientSources) == 0 {
			continue
		}
		policy := "the on_error of " + strings.Join(lenientSources, ", ")
		x.failingIn(tr.SQL, parseQuery, tr.Path+".sql", "transform "+t.Name, policy, nil)
	}
}

// errorCalls lists each call of ERROR(reason) as a difference: Flink has
// no such function, so the script's view or table that holds one does
// not compile there, whatever the source's on_error.
func (x *exporter) errorCalls() {
	list := func(s *spec.SQL, parse func(string) (sql.Node, error), path, element string) {
		root, err := parse(s.Text)
		if err != nil {
			return
		}
		walkAST(root, func(n sql.Node) bool {
			if c, ok := n.(*sql.Call); ok && strings.EqualFold(c.Name, "ERROR") {
				p := c.Pos()
				x.differ(s.FilePos(p.Line, p.Col), path, element,
					"%s: Flink has no ERROR function and refuses the statement; etld hands the row it is evaluated on to the on_error of its source", sql.Format(c))
			}
			return true
		})
	}
	for _, s := range x.plan.Sources {
		for _, c := range s.Spec.Schema {
			if c.Computed != nil {
				list(c.Computed, parseExpr, c.Path, "source "+s.Spec.Name)
			}
		}
		if s.Spec.Watermark != nil {
			list(s.Spec.Watermark, parseExpr, s.Spec.Path+".watermark", "source "+s.Spec.Name)
		}
	}
	for _, t := range x.plan.Transforms {
		list(t.Transform.SQL, parseQuery, t.Transform.Path+".sql", "transform "+t.Name)
	}
}

// lenient is a source's on_error when it sets bad rows aside.
func lenient(s *spec.Source) string {
	if p := s.OnError.Policy; p == "skip" || p == "dead-letter" {
		return p
	}
	return ""
}

// sourcesRead returns the sources a table reads, through the transforms
// it reads.
func (x *exporter) sourcesRead(name string, seen map[string]bool) []*plan.Source {
	key := strings.ToLower(name)
	if seen[key] {
		return nil
	}
	seen[key] = true
	for _, s := range x.plan.Sources {
		if strings.EqualFold(s.Spec.Name, name) {
			return []*plan.Source{s}
		}
	}
	var out []*plan.Source
	for _, t := range x.plan.Transforms {
		if !strings.EqualFold(t.Name, name) {
			continue
		}
		q, err := sql.Parse(t.Transform.SQL.Text)
		if err != nil {
			return nil
		}
		walkAST(q, func(n sql.Node) bool {
			switch n := n.(type) {
			case *sql.TableRef:
				out = append(out, x.sourcesRead(n.Name.Name, seen)...)
			case *sql.WindowTVF:
				out = append(out, x.sourcesRead(n.Table.Name, seen)...)
			}
			return true
		})
	}
	return out
}

// failingIn lists the failing expressions of one piece of SQL: each
// SELECT's own expressions typed against the tables of its FROM (in a
// query), or against scope (an expression).
func (x *exporter) failingIn(s *spec.SQL, parse func(string) (sql.Node, error), path, element, policy string, sc *scope) {
	root, err := parse(s.Text)
	if err != nil {
		return
	}
	check := func(n sql.Node, sc *scope) {
		if what := failure(n, sc); what != "" {
			p := n.Pos()
			x.differ(s.FilePos(p.Line, p.Col), path, element, "%s fails the Flink job %s, where etld hands the row to %s", sql.Format(n), what, policy)
		}
	}
	if sc != nil {
		walkAST(root, func(n sql.Node) bool { check(n, sc); return true })
		return
	}
	walkAST(root, func(n sql.Node) bool {
		sel, ok := n.(*sql.Select)
		if !ok {
			return true
		}
		sc := x.scopeOf(sel.From)
		// The SELECT's own expressions: a subquery's are its own.
		walkAST(sel, func(m sql.Node) bool {
			if m != sql.Node(sel) {
				if _, nested := m.(*sql.Query); nested {
					return false
				}
			}
			check(m, sc)
			return true
		})
		return true
	})
}

// failure says how n fails a Flink job on a bad value ("" when it does
// not, or its types are not known here): a CAST of text to another type,
// or an integer or DECIMAL division or modulo by a divisor that may be
// zero.
func failure(n sql.Node, sc *scope) string {
	switch n := n.(type) {
	case *sql.Cast:
		if n.Try || n.Type.ID == row.String || n.Type.ID == row.Bytes {
			return ""
		}
		if c, err := expr.Compile(n.X, sc); err == nil && c.Type.ID == row.String && !c.Const {
			return fmt.Sprintf("on a value that does not parse as %s (TRY_CAST gives NULL)", n.Type)
		}
	case *sql.Binary:
		if n.Op == sql.OpDiv || n.Op == sql.OpMod {
			return zeroDivisor(n, n.R, sc)
		}
	case *sql.Call:
		if strings.EqualFold(n.Name, "MOD") && len(n.Args) == 2 {
			return zeroDivisor(n, n.Args[1], sc)
		}
	}
	return ""
}

func zeroDivisor(e, divisor sql.Expr, sc *scope) string {
	c, err := expr.Compile(e, sc)
	if err != nil || !(c.Type.ID.Integral() || c.Type.ID == row.Decimal) {
		return ""
	}
	if d, err := expr.Compile(divisor, sc); err == nil && d.Const && !d.Value.IsNull() && row.Compare(d.Value, row.IntValue(0)) != 0 {
		return ""
	}
	return "on a zero divisor (an ArithmeticException in integer or DECIMAL arithmetic)"
}

// scope resolves column names against the tables of a FROM clause, as
// far as they are known here: a reference it cannot resolve leaves the
// expression untyped, and so not listed.
type scope struct{ cols []scopeCol }

type scopeCol struct {
	quals []string
	name  string
	typ   row.Type
}

func (s *scope) add(name, alias string, schema row.Schema) {
	for _, f := range schema.Fields {
		s.cols = append(s.cols, scopeCol{quals: []string{name, alias}, name: f.Name, typ: f.Type})
	}
}

// Resolve implements expr.Scope.
func (s *scope) Resolve(qualifier, name string) (int, row.Type, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.name, name) {
			continue
		}
		if qualifier != "" && !slices.ContainsFunc(c.quals, func(q string) bool { return q != "" && strings.EqualFold(q, qualifier) }) {
			continue
		}
		if found >= 0 {
			return 0, row.Type{}, fmt.Errorf("ambiguous")
		}
		found = i
	}
	if found < 0 {
		return 0, row.Type{}, fmt.Errorf("unknown")
	}
	return found, s.cols[found].typ, nil
}

// scopeOf is the scope of a FROM clause: the sources', transforms' and
// window functions' columns; a subquery's are not known here.
func (x *exporter) scopeOf(from sql.FromItem) *scope {
	sc := &scope{}
	var add func(f sql.FromItem)
	add = func(f sql.FromItem) {
		switch f := f.(type) {
		case *sql.TableRef:
			if t := x.tableNamed(f.Name.Name); t != nil {
				sc.add(f.Name.Name, f.Alias.Name, t.Root.Schema)
			}
		case *sql.WindowTVF:
			if t := x.tableNamed(f.Table.Name); t != nil {
				sc.add(f.Table.Name, f.Alias.Name, t.Root.Schema)
				ts := row.Type{ID: row.Timestamp, Precision: 3}
				sc.add(f.Table.Name, f.Alias.Name, row.NewSchema(row.Field{Name: "window_start", Type: ts}, row.Field{Name: "window_end", Type: ts}, row.Field{Name: "window_time", Type: ts}))
			}
		case *sql.Join:
			add(f.Left)
			add(f.Right)
		}
	}
	if from != nil {
		add(from)
	}
	return sc
}

func (x *exporter) tableNamed(name string) *plan.Table {
	for _, s := range x.plan.Sources {
		if strings.EqualFold(s.Spec.Name, name) && s.Table != nil {
			return s.Table
		}
	}
	for _, t := range x.plan.Transforms {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// walkAST calls f on every node of the SQL syntax tree below root, root
// first, top-down; f returning false skips a node's children. It reads
// the tree's fields by reflection, so that a construct the parser gains
// is walked without a case of its own here.
func walkAST(root sql.Node, f func(sql.Node) bool) {
	sqlPkg := reflect.TypeFor[sql.Query]().PkgPath()
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			if v.CanInterface() {
				if n, ok := v.Interface().(sql.Node); ok && v.Kind() == reflect.Pointer {
					if !f(n) {
						return
					}
				}
			}
			visit(v.Elem())
		case reflect.Slice:
			for i := range v.Len() {
				visit(v.Index(i))
			}
		case reflect.Struct:
			if v.Type().PkgPath() != sqlPkg {
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					visit(v.Field(i))
				}
			}
		}
	}
	visit(reflect.ValueOf(root))
}
