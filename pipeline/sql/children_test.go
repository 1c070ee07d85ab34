package sql

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// childSamples returns, for every expression node type, instances that
// between them set every field that can hold a child, and instances with
// the optional ones absent. Each child is a distinct node, so that the
// tests can tell them apart by identity.
func childSamples() []Expr {
	n := 0
	x := func() Expr { n++; return &ColumnRef{Column: Ident{Name: fmt.Sprintf("c%d", n)}} }
	sub := &Query{Selects: []*Select{{Items: []*SelectItem{{Expr: &Star{}}}}}}
	return []Expr{
		&Literal{Kind: LitInt, Text: "1"},
		&IntervalLit{Text: "5", Unit: Second},
		&ColumnRef{Column: Ident{Name: "a"}},
		&Star{},
		&Exists{Query: sub},
		&ScalarQuery{Query: sub},
		&InQuery{X: x(), Query: sub},
		&Unary{Op: OpNot, X: x()},
		&Binary{Op: OpAdd, L: x(), R: x()},
		&IsExpr{X: x(), What: IsNull},
		&Between{X: x(), Lo: x(), Hi: x()},
		&GroupingSets{Kind: GroupingSetsList, Sets: [][]Expr{{x(), x()}, nil, {x()}}},
		&InList{X: x(), List: []Expr{x(), x()}},
		&Like{X: x(), Pattern: x(), Escape: x()},
		&Like{X: x(), Pattern: x()},
		&Call{Name: "F", Args: []Expr{x(), x()}, Filter: x()},
		&Call{Name: "COUNT", Star: true},
		&Cast{X: x()},
		&Case{Operand: x(), Whens: []*When{{Cond: x(), Result: x()}, {Cond: x(), Result: x()}}, Else: x()},
		&Case{Whens: []*When{{Cond: x(), Result: x()}}},
		&Trim{Chars: x(), X: x()},
		&Trim{X: x()},
		&Extract{Unit: "YEAR", X: x()},
		&Index{X: x(), Index: x()},
		&FieldAccess{X: x(), Field: Ident{Name: "f"}},
		&Over{
			Call: &Call{Name: "SUM", Args: []Expr{x()}, Filter: x()},
			Window: &WindowSpec{
				PartitionBy: []Expr{x(), x()},
				OrderBy:     []*OrderItem{{X: x()}, {X: x(), Desc: true}},
				Frame:       &Frame{Unit: FrameRows, Preceding: &Literal{Kind: LitInt, Text: "3"}},
			},
		},
		&Over{Call: &Call{Name: "ROW_NUMBER"}, Window: &WindowSpec{}},
	}
}

// notChildren are the fields that hold an expression which is not a
// child, by path from the node (children.go says why).
var notChildren = map[string]bool{
	"Over.Window.Frame.Preceding": true,
}

// TestChildrenRebuild checks, for every sample, that a node rebuilt from
// its own children equals itself, that MapChildren visits the children
// in the order of Children and puts each result where that child was,
// and that it leaves the node it copies unchanged.
func TestChildrenRebuild(t *testing.T) {
	for _, e := range childSamples() {
		t.Run(fmt.Sprintf("%T", e), func(t *testing.T) {
			if got := e.MapChildren(func(c Expr) Expr { return c }); !reflect.DeepEqual(got, e) {
				t.Fatalf("rebuilt from its own children:\n got %#v\nwant %#v", got, e)
			}
			kids := e.Children()
			before := exprFields(e)
			markers := make([]Expr, len(kids))
			for i := range markers {
				markers[i] = &Literal{Kind: LitInt, Text: fmt.Sprintf("%d", i)}
			}
			i := 0
			got := e.MapChildren(func(c Expr) Expr {
				if i >= len(kids) || c != kids[i] {
					t.Fatalf("MapChildren's call %d got %s, not the child Children returns there", i, Format(c))
				}
				i++
				return markers[i-1]
			})
			if i != len(kids) {
				t.Fatalf("MapChildren visited %d children, Children returns %d", i, len(kids))
			}
			if back := got.Children(); !slices.Equal(back, markers) {
				t.Fatalf("the replaced node's children are %v, want the %d markers in order", back, len(markers))
			}
			if after := exprFields(e); !reflect.DeepEqual(after, before) {
				t.Fatalf("MapChildren changed the node it copies:\nbefore %v\n after %v", before, after)
			}
		})
	}
}

// TestChildrenComplete checks that Children returns every expression the
// node holds (but those of notChildren), and that the samples set every
// field that can hold one, so that a field added to a node later is a
// failure here until Children knows it.
func TestChildrenComplete(t *testing.T) {
	covered := map[string]bool{}
	for _, e := range childSamples() {
		kids := e.Children()
		for _, f := range exprFields(e) {
			covered[f.path] = true
			in := slices.Contains(kids, f.x)
			if in == notChildren[f.path] {
				t.Errorf("%s: Children includes it: %v, want %v", f.path, in, !in)
			}
		}
		if want := len(exprFields(e)) - countNotChildren(e); len(kids) != want {
			t.Errorf("%T: Children returns %d expressions, the node holds %d children", e, len(kids), want)
		}
	}
	for _, e := range childSamples() {
		for _, path := range exprPaths(reflect.TypeOf(e).Elem(), reflect.TypeOf(e).Elem().Name()) {
			if !covered[path] {
				t.Errorf("no sample sets %s: add one to childSamples", path)
			}
		}
	}
}

// TestChildrenEveryNode checks that childSamples has every expression
// node type of the package: those with an exprNode method, read from the
// source, so that a new node cannot be left out.
func TestChildrenEveryNode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	fset := gotoken.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "exprNode" {
				continue
			}
			star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				t.Fatalf("%s: exprNode on a value receiver", fset.Position(fd.Pos()))
			}
			want = append(want, star.X.(*ast.Ident).Name)
		}
	}
	seen := map[string]bool{}
	for _, e := range childSamples() {
		seen[reflect.TypeOf(e).Elem().Name()] = true
	}
	var got []string
	for name := range seen {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if len(want) < 20 || !slices.Equal(got, want) {
		t.Fatalf("expression nodes with samples:\n%v\nexpression nodes in the source:\n%v", got, want)
	}
}

// exprField is an expression a node holds, with its path from the node
// (Case.Whens[].Cond).
type exprField struct {
	path string
	x    Expr
}

func (f exprField) String() string { return fmt.Sprintf("%s=%p", f.path, f.x) }

var (
	exprType  = reflect.TypeOf((*Expr)(nil)).Elem()
	queryType = reflect.TypeOf((*Query)(nil))
)

// exprFields returns every non-nil expression held in a field of type
// Expr or []Expr of e, or of the structs of this package e holds (but
// not inside a subquery), in field order.
func exprFields(e Expr) []exprField {
	var out []exprField
	var visit func(v reflect.Value, path string)
	visit = func(v reflect.Value, path string) {
		switch {
		case v.Type() == exprType:
			if !v.IsNil() {
				out = append(out, exprField{path, v.Interface().(Expr)})
			}
		case v.Kind() == reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i), path+"[]")
			}
		case v.Kind() == reflect.Pointer && v.Type() != queryType && ownStruct(v.Type().Elem()):
			if !v.IsNil() {
				visit(v.Elem(), path)
			}
		case v.Kind() == reflect.Struct && ownStruct(v.Type()):
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	}
	v := reflect.ValueOf(e)
	visit(v.Elem(), v.Elem().Type().Name())
	return out
}

// exprPaths returns the path of every field of t that can hold an
// expression, as exprFields names them.
func exprPaths(t reflect.Type, path string) []string {
	switch {
	case t == exprType:
		return []string{path}
	case t.Kind() == reflect.Slice:
		return exprPaths(t.Elem(), path+"[]")
	case t.Kind() == reflect.Pointer && t != queryType && ownStruct(t.Elem()):
		return exprPaths(t.Elem(), path)
	case t.Kind() == reflect.Struct && ownStruct(t):
		var out []string
		for i := 0; i < t.NumField(); i++ {
			out = append(out, exprPaths(t.Field(i).Type, path+"."+t.Field(i).Name)...)
		}
		return out
	}
	return nil
}

func ownStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == exprType.PkgPath()
}

func countNotChildren(e Expr) int {
	n := 0
	for _, f := range exprFields(e) {
		if notChildren[f.path] {
			n++
		}
	}
	return n
}
