package spec

import (
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
)

// Function is an entry of `functions:`, a user-defined function SQL can
// call: WebAssembly (`wasm: FILE`) or JavaScript (`language: javascript`
// with `code:`), scalar, table or aggregate.
type Function struct {
	Name string
	// Kind is scalar (the default), table or aggregate.
	Kind    string
	KindPos Pos
	// Language is wasm or javascript.
	Language string
	// Wasm is the module's file as written, File the file it names (a
	// relative path is relative to the pipeline file's directory).
	Wasm    string
	File    string
	WasmPos Pos
	// Export is the module's (or script's) function to call; the
	// function's name unless `export:` names another.
	Export string
	// Code is the JavaScript source, at CodePos.
	Code    string
	CodePos Pos
	// Params are the declared parameters, in order.
	Params    []Param
	ParamsPos Pos
	// Returns is the result type of a scalar or aggregate function;
	// Columns are a table function's result columns (one, f0, when
	// `returns:` gives a single type).
	Returns    row.Type
	Columns    []Param
	ReturnsPos Pos
	// Deterministic (default true): the function gives the same result
	// for the same arguments. false grants it the clock and randomness,
	// and makes the pipeline's output not exactly once.
	Deterministic bool
	// NullTolerant: the function is called for rows with NULL arguments;
	// otherwise such a row's result is NULL without a call, as Flink's
	// default.
	NullTolerant bool
	// MemoryLimit caps a WebAssembly instance's memory (bytes; 0 for the
	// default); Timeout bounds each call (0 for the default).
	MemoryLimit int64
	Timeout     time.Duration
	Pos         Pos
	Path        string
}

// Param is a declared parameter or result column: `name TYPE`.
type Param struct {
	Name string
	Type row.Type
	Pos  Pos
}

var functionKeys = []string{"name", "kind", "language", "wasm", "export", "code", "params", "returns", "deterministic", "null_tolerant", "memory_limit", "timeout"}

// functions reads the functions section.
func (p *parser) functions(v *yaml.Node) []*Function {
	var out []*Function
	for i, n := range p.list(v, "functions") {
		if f := p.function(n, IndexPath("functions", i)); f != nil {
			out = append(out, f)
		}
	}
	return out
}

func (p *parser) function(n *yaml.Node, path string) *Function {
	f := &Function{Pos: p.pos(n), Path: path, Kind: "scalar", Deterministic: true}
	m := p.fields(n, path, functionKeys)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	f.Name = p.required(m, n, path, "name")
	if f.Name != "" && !nameRE.MatchString(f.Name) {
		p.errs.Addf(p.pos(m["name"]), JoinPath(path, "name"), "invalid function name %q: use letters, digits and '_', not starting with a digit (it is a SQL name)", f.Name)
	}
	if v, ok := m["kind"]; ok {
		f.Kind, f.KindPos = p.str(v, JoinPath(path, "kind")), p.pos(v)
		switch f.Kind {
		case "scalar", "table", "aggregate":
		default:
			p.errs.Addf(f.KindPos, JoinPath(path, "kind"), "unknown function kind %q: want scalar, table or aggregate%s", f.Kind, hintOf(f.Kind, []string{"scalar", "table", "aggregate"}))
		}
	}
	p.functionCode(f, m, n, path)
	if v, ok := m["export"]; ok {
		f.Export = p.str(v, JoinPath(path, "export"))
	}
	if f.Export == "" {
		f.Export = f.Name
	}
	if v, ok := m["params"]; ok {
		f.ParamsPos = p.pos(v)
		if v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) == "" || v.Kind == yaml.SequenceNode {
			f.Params = p.params(v, JoinPath(path, "params"), "parameter")
		} else {
			p.errs.Addf(p.pos(v), JoinPath(path, "params"), "want a list of parameters such as [s STRING, n INT], got %s", kindName(v))
		}
	} else {
		p.errs.Addf(f.Pos, JoinPath(path, "params"), "missing required key: list the parameters, e.g. `params: [s STRING]` (`params: []` for none)")
	}
	p.functionReturns(f, m, n, path)
	if v, ok := m["deterministic"]; ok {
		f.Deterministic = p.flag(v, JoinPath(path, "deterministic"), true)
	}
	if v, ok := m["null_tolerant"]; ok {
		f.NullTolerant = p.flag(v, JoinPath(path, "null_tolerant"), false)
	}
	if v, ok := m["memory_limit"]; ok {
		b, err := parseBytes(p.str(v, JoinPath(path, "memory_limit")))
		switch {
		case err != nil:
			p.errs.Addf(p.pos(v), JoinPath(path, "memory_limit"), "%v", err)
		case b < 0:
			p.errs.Addf(p.pos(v), JoinPath(path, "memory_limit"), "a function's memory is always limited: give a size such as 64MiB")
		case b < 64<<10 || b > 4<<30:
			p.errs.Addf(p.pos(v), JoinPath(path, "memory_limit"), "want a size from 64KiB (one WebAssembly page) to 4GiB, got %s", p.str(v, ""))
		default:
			f.MemoryLimit = b
		}
	}
	if v, ok := m["timeout"]; ok {
		d, err := parseDuration(p.str(v, JoinPath(path, "timeout")), v)
		switch {
		case err != nil:
			p.errs.Addf(p.pos(v), JoinPath(path, "timeout"), "%v", err)
		case d <= 0:
			p.errs.Addf(p.pos(v), JoinPath(path, "timeout"), "a call's time limit must be above 0")
		}
		f.Timeout = d
	}
	return f
}

// functionCode reads what implements the function: a module (wasm:) or
// a script (language: javascript, code:).
func (p *parser) functionCode(f *Function, m map[string]*yaml.Node, n *yaml.Node, path string) {
	lang, langNode := "", m["language"]
	if langNode != nil {
		lang = p.str(langNode, JoinPath(path, "language"))
	}
	wasm, code := m["wasm"], m["code"]
	switch {
	case lang == "" && wasm != nil, lang == "wasm":
		f.Language = "wasm"
	case lang == "javascript", lang == "js":
		f.Language = "javascript"
	case lang != "":
		p.errs.Addf(p.pos(langNode), JoinPath(path, "language"), "unknown language %q: want wasm (a WebAssembly module, any source language) or javascript", lang)
		return
	default:
		p.errs.Addf(f.Pos, path, "a function needs its code: `wasm: FILE.wasm` (a WebAssembly module) or `language: javascript` with `code:`")
		return
	}
	if f.Language == "wasm" {
		if code != nil {
			p.errs.Addf(p.pos(code), JoinPath(path, "code"), "code: is JavaScript's; a wasm function names its module with `wasm: FILE.wasm`")
		}
		if wasm == nil {
			p.errs.Addf(f.Pos, JoinPath(path, "wasm"), "missing required key: the module file, e.g. `wasm: udf/%s.wasm`", f.Name)
			return
		}
		f.Wasm, f.WasmPos = p.str(wasm, JoinPath(path, "wasm")), p.pos(wasm)
		switch {
		case f.Wasm == "":
			p.errs.Addf(f.WasmPos, JoinPath(path, "wasm"), "empty module path")
		case strings.Contains(f.Wasm, "://"):
			p.errs.Addf(f.WasmPos, JoinPath(path, "wasm"), "%q is a URL: etld loads modules from files only (relative to this file, or absolute)", f.Wasm)
		case filepath.IsAbs(f.Wasm):
			f.File = f.Wasm
		default:
			f.File = filepath.Join(filepath.Dir(p.file), f.Wasm)
		}
		return
	}
	if wasm != nil {
		p.errs.Addf(p.pos(wasm), JoinPath(path, "wasm"), "a javascript function has no module: its source is `code:`")
	}
	if code == nil {
		p.errs.Addf(f.Pos, JoinPath(path, "code"), "missing required key: the JavaScript source, defining function %s(...)", f.Name)
		return
	}
	f.Code, f.CodePos = p.str(code, JoinPath(path, "code")), p.pos(code)
	if code.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		// A block scalar's text starts on the line after its indicator.
		f.CodePos.Line++
	}
	if strings.TrimSpace(f.Code) == "" {
		p.errs.Addf(p.pos(code), JoinPath(path, "code"), "empty code: define function %s(...) { ... }", f.Name)
	}
}

// functionReturns reads `returns:`: a type, or for a table function its
// columns, a list of `name TYPE` or a ROW type.
func (p *parser) functionReturns(f *Function, m map[string]*yaml.Node, n *yaml.Node, path string) {
	rpath := JoinPath(path, "returns")
	v, ok := m["returns"]
	if !ok {
		p.errs.Addf(f.Pos, rpath, "missing required key: the result type, e.g. `returns: BIGINT`")
		return
	}
	f.ReturnsPos = p.pos(v)
	if v.Kind == yaml.SequenceNode {
		if f.Kind != "table" {
			p.errs.Addf(f.ReturnsPos, rpath, "a list of result columns is a table function's (kind: table); a %s function returns one type", f.Kind)
			return
		}
		f.Columns = p.params(v, rpath, "result column")
		if len(f.Columns) == 0 {
			p.errs.Addf(f.ReturnsPos, rpath, "a table function returns at least one column")
		}
		return
	}
	t, err := row.ParseType(p.str(v, rpath))
	if err != nil {
		p.errs.Addf(f.ReturnsPos, rpath, "%v", err)
		return
	}
	t = t.Nullable()
	if f.Kind != "table" {
		f.Returns = t
		return
	}
	if t.ID == row.Struct {
		for _, fl := range t.Fields() {
			f.Columns = append(f.Columns, Param{Name: fl.Name, Type: fl.Type.Nullable(), Pos: f.ReturnsPos})
		}
		return
	}
	// Flink names the column of a table function of one type f0.
	f.Columns = []Param{{Name: "f0", Type: t, Pos: f.ReturnsPos}}
}

// params reads a list of `name TYPE`.
func (p *parser) params(v *yaml.Node, path, what string) []Param {
	var out []Param
	seen := map[string]bool{}
	items := p.list(v, path)
	for i := 0; i < len(items); i++ {
		c := items[i]
		cpath := IndexPath(path, i)
		text := strings.TrimSpace(p.str(c, cpath))
		if text == "" {
			continue
		}
		if v.Style&yaml.FlowStyle != 0 && c.Style == 0 && unclosed(text) {
			whole := text
			for i+1 < len(items) && unclosed(whole) && items[i+1].Kind == yaml.ScalarNode {
				i++
				whole += ", " + strings.TrimSpace(items[i].Value)
			}
			p.errs.Addf(p.pos(c), cpath, "%s %q is cut at its comma: in a flow list [...] a comma ends the item; quote it, [%q], or write a block list", what, whole, whole)
			continue
		}
		name, typ, _ := strings.Cut(text, " ")
		name = strings.Trim(name, "`")
		if !nameRE.MatchString(name) || strings.TrimSpace(typ) == "" {
			p.errs.Addf(p.pos(c), cpath, "write each %s as \"name TYPE\", e.g. \"s STRING\"; got %q", what, text)
			continue
		}
		t, err := row.ParseType(typ)
		if err != nil {
			p.errs.Addf(p.pos(c), cpath, "%s %q: %v", what, name, err)
			continue
		}
		if seen[strings.ToLower(name)] {
			p.errs.Addf(p.pos(c), cpath, "duplicate %s %q", what, name)
		}
		seen[strings.ToLower(name)] = true
		out = append(out, Param{Name: name, Type: t, Pos: p.pos(c)})
	}
	return out
}

func hintOf(s string, known []string) string {
	if c := Closest(s, known); c != "" {
		return "; did you mean \"" + c + "\"?"
	}
	return ""
}
