package udf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

func jsDecl(name, kind, code string, params []row.Type, returns row.Type, cols ...row.Field) *spec.Function {
	d := &spec.Function{Name: name, Kind: kind, Language: "javascript", Code: code, Export: name, Returns: returns, Deterministic: true,
		Path: "functions[0]", Pos: spec.Pos{File: "p.yaml", Line: 3, Col: 5}, CodePos: spec.Pos{File: "p.yaml", Line: 10, Col: 7}}
	for _, p := range params {
		d.Params = append(d.Params, spec.Param{Name: "p", Type: p})
	}
	for _, c := range cols {
		d.Columns = append(d.Columns, spec.Param{Name: c.Name, Type: c.Type})
	}
	return d
}

func startJS(t *testing.T, d *spec.Function) Instance {
	t.Helper()
	f := loadOne(t, d)
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	return inst
}

// TestJSEveryType passes values of every SQL type to a JavaScript
// function that returns its argument, and checks each comes back equal
// (the timestamps at a Date's millisecond).
func TestJSEveryType(t *testing.T) {
	for text, vals := range crossing(t) {
		t.Run(text, func(t *testing.T) {
			typ, err := row.ParseType(text)
			if err != nil {
				t.Fatal(err)
			}
			d := jsDecl("echo", "scalar", "function echo(x) { return x; }", []row.Type{typ}, typ.Nullable())
			d.NullTolerant = true
			inst := startJS(t, d)
			out, errs := make([]row.Value, len(vals)), make([]error, len(vals))
			if err := inst.Scalar([][]row.Value{vals}, len(vals), out, errs); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				want := v
				switch {
				case text == "BIGINT" && i == 0:
					// Past 2^53: the row fails rather than change.
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "does not fit a JavaScript number exactly") {
						t.Errorf("BIGINT %s: got %v, %v", v, out[i], errs[i])
					}
					continue
				case typ.ID == row.TimestampLTZ && !v.IsNull():
					want = row.TimestampLTZValue(v.Micros() - v.Micros()%1000)
				}
				if errs[i] != nil {
					t.Errorf("value %d (%s): %v", i, v, errs[i])
				} else if !row.Equal(out[i], want) || out[i].Type() != want.Type() {
					t.Errorf("value %d: sent %s, got back %s (%s)", i, v, out[i], out[i].Type())
				}
			}
		})
	}
}

// TestJSScalar computes a JavaScript function over a batch, one row of
// which throws: that row fails with the script's message and line.
func TestJSScalar(t *testing.T) {
	inst := startJS(t, jsDecl("slug", "scalar", `
function slug(s, n) {
  if (s === "boom") throw new Error("no slug for boom");
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-') + n;
}`, []row.Type{row.Of(row.String), row.Of(row.Int)}, row.Of(row.String)))
	s := []row.Value{row.StringValue("Hello World"), row.StringValue("boom"), row.StringValue("A.B")}
	n := []row.Value{row.IntValue(1), row.IntValue(2), row.IntValue(3)}
	out, errs := make([]row.Value, 3), make([]error, 3)
	if err := inst.Scalar([][]row.Value{s, n}, 3, out, errs); err != nil {
		t.Fatal(err)
	}
	if out[0].Str() != "hello-world1" || out[2].Str() != "a-b3" || errs[0] != nil || errs[2] != nil {
		t.Errorf("results %v, errors %v", out, errs)
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "Error: no slug for boom (line 3 of the code)") {
		t.Errorf("row 1: %v", errs[1])
	}
}

// TestJSWrongResult fails a row whose result is not of the declared
// type.
func TestJSWrongResult(t *testing.T) {
	inst := startJS(t, jsDecl("f", "scalar", "function f(x) { return x > 1 ? 'many' : x + 0.5; }", []row.Type{row.Of(row.Int)}, row.Of(row.BigInt)))
	out, errs := make([]row.Value, 2), make([]error, 2)
	if err := inst.Scalar([][]row.Value{{row.IntValue(1), row.IntValue(2)}}, 2, out, errs); err != nil {
		t.Fatal(err)
	}
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "returned float64 (1.5) for a result of type BIGINT") ||
		errs[1] == nil || !strings.Contains(errs[1].Error(), "returned string (many) for a result of type BIGINT") {
		t.Errorf("errors %v", errs)
	}
}

// TestJSTimeLimit interrupts a script that never returns: the row fails,
// the next is computed; and a runaway recursion is an error too.
func TestJSTimeLimit(t *testing.T) {
	d := jsDecl("f", "scalar", `
function f(x) { if (x === 'loop') { for (;;) {} } if (x === 'deep') { return f(x); } return x; }`,
		[]row.Type{row.Of(row.String)}, row.Of(row.String))
	d.Timeout = 200 * time.Millisecond
	inst := startJS(t, d)
	args := []row.Value{row.StringValue("a"), row.StringValue("loop"), row.StringValue("b"), row.StringValue("deep")}
	out, errs := make([]row.Value, 4), make([]error, 4)
	if err := inst.Scalar([][]row.Value{args}, 4, out, errs); err != nil {
		t.Fatal(err)
	}
	if out[0].Str() != "a" || out[2].Str() != "b" || !errors.Is(errs[1], ErrTimeout) ||
		errs[3] == nil || !strings.Contains(errs[3].Error(), "calls nest deeper than 1000") {
		t.Errorf("results %v, errors %v", out, errs)
	}
}

// TestJSTable runs a JavaScript table function returning arrays, objects
// and a generator's rows.
func TestJSTable(t *testing.T) {
	cols := []row.Field{{Name: "word", Type: row.Of(row.String)}, {Name: "len", Type: row.Of(row.Int)}}
	inst := startJS(t, jsDecl("words", "table", `
function words(s) {
  if (s === 'gen') return (function*() { yield ['g', 1]; yield {len: 2, word: 'h'}; })();
  return s.split(' ').filter(w => w).map(w => [w, w.length]);
}`, []row.Type{row.Of(row.String)}, row.Type{}, cols...))
	args := []row.Value{row.StringValue("to be"), row.StringValue(""), row.StringValue("gen")}
	errs := make([]error, 3)
	rowOf, rows, err := inst.Table([][]row.Value{args}, 3, errs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for j, r := range rows {
		got = append(got, row.Change{Kind: row.Insert, Row: r}.String()+"@"+string(rune('0'+rowOf[j])))
	}
	want := []string{"+I[to, 2]@0", "+I[be, 2]@0", "+I[g, 1]@2", "+I[h, 2]@2"}
	if strings.Join(got, " ") != strings.Join(want, " ") || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Errorf("got %v (errors %v), want %v", got, errs, want)
	}
}

// TestJSLoadErrors places a script's syntax error at its line in the
// file, and says when the code defines no such function.
func TestJSLoadErrors(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"function f(x) {\n  return x +;\n}", "p.yaml:11:19: functions[0].code: function f: SyntaxError: Unexpected token ;"},
		{"function g(x) { return x; }", "p.yaml:10:7: functions[0].code: function f: the code defines no function f(...)"},
		{"throw new Error('at load');", "p.yaml:10:13: functions[0].code: function f: Error: at load"},
	} {
		r, errs := Load(context.Background(), []*spec.Function{jsDecl("f", "scalar", tc.code, []row.Type{row.Of(row.Int)}, row.Of(row.Int))}, nil)
		r.Close(context.Background())
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
			t.Errorf("%q: got %v, want %s...", tc.code, errs, tc.want)
		}
	}
}

// TestJSDeterministic gives a deterministic script a fixed Date and
// Math.random.
func TestJSDeterministic(t *testing.T) {
	code := "function f(x) { return Date.now() + ':' + Math.random(); }"
	call := func(det bool) string {
		d := jsDecl("f", "scalar", code, []row.Type{row.Of(row.Int)}, row.Of(row.String))
		d.Deterministic = det
		out, errs := make([]row.Value, 1), make([]error, 1)
		if err := startJS(t, d).Scalar([][]row.Value{{row.IntValue(1)}}, 1, out, errs); err != nil || errs[0] != nil {
			t.Fatal(err, errs[0])
		}
		return out[0].Str()
	}
	a, b := call(true), call(true)
	if a != b || !strings.HasPrefix(a, "0:") {
		t.Errorf("deterministic runs gave %q and %q", a, b)
	}
	if c := call(false); strings.HasPrefix(c, "0:") {
		t.Errorf("deterministic: false read a fixed clock: %q", c)
	}
}
