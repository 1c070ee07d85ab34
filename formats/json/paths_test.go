package json

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// pathSchema has ROW columns nested two deep, a NOT NULL field among
// them, and plain columns beside.
func pathSchema(t testing.TB) row.Schema {
	t.Helper()
	var sch row.Schema
	for _, c := range [][2]string{{"a", "ROW<x BIGINT, y STRING, z ROW<p INT, q DOUBLE>, `dateTime` TIMESTAMP(3)>"}, {"b", "INT"}, {"c", "ROW<x BIGINT NOT NULL, w STRING>"}} {
		typ, err := row.ParseType(c[1])
		if err != nil {
			t.Fatal(err)
		}
		sch.Fields = append(sch.Fields, row.Field{Name: c[0], Type: typ})
	}
	return sch
}

// same reports whether a and b are both NULL or equal values.
func same(a, b row.Value) bool { return a.IsNull() == b.IsNull() && (a.IsNull() || row.Equal(a, b)) }

// pathValue is path p of row r as a field access reads it.
func pathValue(r row.Row, p connector.FieldPath) row.Value {
	v := r[p.Column]
	for _, f := range p.Fields {
		if v.IsNull() {
			return row.NullValue
		}
		v, _ = v.Item(f)
	}
	return v
}

// decodePaths decodes rec with a decoder of paths (their columns not
// decoded whole) and returns the row or the error.
func decodeWithPaths(t testing.TB, opts Options, sch row.Schema, paths []connector.FieldPath, rec string) (row.Row, error) {
	t.Helper()
	return decodeWithGap(t, opts, sch, paths, 0, rec)
}

// gapMark is what decodeWithGap writes in every column of the row's
// memory before the decode: the gap's columns must still hold it.
var gapMark = row.StringValue("gap")

// decodeWithGap is decodeWithPaths with gap columns between the schema's
// and the paths' (connector.NestedDecoder), into a row whose memory held
// gapMark in every column.
func decodeWithGap(t testing.TB, opts Options, sch row.Schema, paths []connector.FieldPath, gap int, rec string) (row.Row, error) {
	t.Helper()
	d, err := NewDecoder(opts, sch)
	if err != nil {
		t.Fatal(err)
	}
	needed := make([]bool, sch.Len())
	for i := range needed {
		needed[i] = true
	}
	for _, p := range paths {
		needed[p.Column] = false
	}
	d.SetColumns(needed)
	if !d.DecodePaths(paths, gap) {
		t.Fatalf("DecodePaths(%v, %d) refused", paths, gap)
	}
	b := row.NewBatch(1, sch.Len()+gap+len(paths))
	old := b.NewRow()
	for i := range old {
		old[i] = gapMark
	}
	b.Reuse() // the next row is old's memory
	if err := d.DecodeString(rec, b); err != nil || b.Len() == 0 {
		return nil, err // a blank record carries no row
	}
	r := b.Changes[0].Row
	for i := sch.Len(); i < sch.Len()+gap; i++ {
		if r[i] != gapMark {
			t.Errorf("%s: gap column %d written: %v", rec, i, r[i])
		}
	}
	return r, nil
}

func TestDecodePaths(t *testing.T) {
	sch := pathSchema(t)
	ax, ay, azp, adt := connector.FieldPath{Column: 0, Fields: []int{0}}, connector.FieldPath{Column: 0, Fields: []int{1}},
		connector.FieldPath{Column: 0, Fields: []int{2, 0}}, connector.FieldPath{Column: 0, Fields: []int{3}}
	cx := connector.FieldPath{Column: 2, Fields: []int{0}}
	paths := []connector.FieldPath{ax, ay, azp, adt}
	tests := []struct {
		name, rec string
		paths     []connector.FieldPath
		opts      Options
		want      string // the paths' values, or the error's text
	}{
		{name: "all there", rec: `{"a":{"x":1,"y":"s","z":{"p":2,"q":1.5},"dateTime":"2024-01-01 00:00:00"},"b":3}`, paths: paths, want: "1|s|2|2024-01-01 00:00:00"},
		{name: "members out of order", rec: `{"a":{"z":{"q":1,"p":7},"y":"s","x":1}}`, paths: paths, want: "1|s|7|NULL"},
		{name: "ROW null", rec: `{"a":null,"b":1}`, paths: paths, want: "NULL|NULL|NULL|NULL"},
		{name: "ROW missing", rec: `{"b":1}`, paths: paths, want: "NULL|NULL|NULL|NULL"},
		{name: "inner ROW null", rec: `{"a":{"x":1,"z":null}}`, paths: paths, want: "1|NULL|NULL|NULL"},
		{name: "field missing", rec: `{"a":{"y":"s"}}`, paths: paths, want: "NULL|s|NULL|NULL"},
		{name: "escapes", rec: `{"a":{"y":"q\"\\\u00e9\n"}}`, paths: []connector.FieldPath{ay}, want: "q\"\\é\n"},
		{name: "escaped member name", rec: `{"\u0061":{"\u0078":5}}`, paths: []connector.FieldPath{ax}, want: "5"},
		{name: "duplicate field: last wins", rec: `{"a":{"x":1,"x":2}}`, paths: []connector.FieldPath{ax}, want: "2"},
		{name: "duplicate ROW: last wins, whole", rec: `{"a":{"x":1,"y":"s"},"a":{"y":"t"}}`, paths: paths, want: "NULL|t|NULL|NULL"},
		{name: "duplicate ROW then null", rec: `{"a":{"x":1},"a":null}`, paths: []connector.FieldPath{ax}, want: "NULL"},
		{name: "duplicate inner ROW", rec: `{"a":{"z":{"p":1},"z":{"q":2}}}`, paths: []connector.FieldPath{azp}, want: "NULL"},
		{name: "field name case", rec: `{"a":{"X":4,"Y":"u"}}`, paths: []connector.FieldPath{ax, ay}, want: "4|u"},
		{name: "bad value in a skipped field", rec: `{"a":{"x":1,"y":"s","z":{"p":"nope","q":"bad"}}}`, paths: []connector.FieldPath{ax, ay}, want: "1|s"},
		{name: "bad value in a pushed field", rec: `{"a":{"x":"nope"}}`, paths: []connector.FieldPath{ax}, want: "error: column a"},
		{name: "bad value, ignore_parse_errors", rec: `{"a":{"x":"nope","y":"s"}}`, paths: []connector.FieldPath{ax, ay}, opts: Options{IgnoreParseErrors: true}, want: "NULL|NULL"},
		{name: "ROW not an object", rec: `{"a":[1,2]}`, paths: []connector.FieldPath{ax}, want: "error: column a"},
		{name: "ROW not an object, ignore_parse_errors", rec: `{"a":5,"b":1}`, paths: []connector.FieldPath{ax}, opts: Options{IgnoreParseErrors: true}, want: "NULL"},
		{name: "malformed inside a skipped field", rec: `{"a":{"x":1,"y":tru}}`, paths: []connector.FieldPath{ax}, want: "error: "},
		{name: "NOT NULL field missing", rec: `{"c":{"w":"v"}}`, paths: []connector.FieldPath{cx}, want: "error: column c"},
		{name: "NOT NULL field of a NULL ROW", rec: `{"c":null}`, paths: []connector.FieldPath{cx}, want: "NULL"},
		{name: "NOT NULL field there", rec: `{"c":{"x":9}}`, paths: []connector.FieldPath{cx}, want: "9"},
		{name: "fail_on_missing_field", rec: `{"b":1}`, paths: []connector.FieldPath{ax}, opts: Options{FailOnMissingField: true}, want: "error: column a: missing"},
	}
	// Each case with the paths right after the schema's columns, and
	// after a gap of two (the table's computed columns) the decoder
	// leaves as it was.
	for _, gap := range []int{0, 2} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s, gap %d", tt.name, gap), func(t *testing.T) {
				testDecodePath(t, sch, tt.rec, tt.paths, tt.opts, gap, tt.want)
			})
		}
	}
}

func testDecodePath(t *testing.T, sch row.Schema, rec string, paths []connector.FieldPath, opts Options, gap int, want string) {
	r, err := decodeWithGap(t, opts, sch, paths, gap, rec)
	var got string
	if err != nil {
		got = "error: " + err.Error()
	} else {
		var parts []string
		for j := range paths {
			v := r[sch.Len()+gap+j]
			if v.IsNull() {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, v.Text(row.Type{ID: v.Type()}))
			}
		}
		got = strings.Join(parts, "|")
	}
	if strings.HasPrefix(want, "error: ") && strings.HasPrefix(got, want) || got == want {
		return
	}
	t.Errorf("%s: got %q, want %q", rec, got, want)
}

func TestDecodePathsRefuses(t *testing.T) {
	sch := pathSchema(t)
	for _, paths := range [][]connector.FieldPath{
		{{Column: 1, Fields: []int{0}}},                                   // b is no ROW
		{{Column: 0, Fields: []int{9}}},                                   // no such field
		{{Column: 0, Fields: []int{2}}, {Column: 0, Fields: []int{2, 0}}}, // a prefix of another
		{{Column: 0, Fields: []int{0}}, {Column: 0, Fields: []int{0}}},    // twice
		{{Column: 0}}, // no field
		{{Column: 5, Fields: []int{0}}},
	} {
		d, _ := NewDecoder(Options{}, sch)
		if d.DecodePaths(paths, 0) {
			t.Errorf("DecodePaths(%v) accepted", paths)
		}
	}
	if d, _ := NewDecoder(Options{}, sch); d.DecodePaths([]connector.FieldPath{{Column: 0, Fields: []int{0}}}, -1) {
		t.Error("a negative gap accepted")
	}
	d, _ := NewDecoder(Options{}, sch)
	if !d.DecodePaths([]connector.FieldPath{{Column: 0, Fields: []int{0}}}, 0) || d.DecodeColumns([]int{1}) {
		t.Error("a decoder of paths picks columns")
	}
}

// randomNested is a record for pathSchema: its ROWs now object, now
// null, now missing, now a value of another kind; members in any order,
// in any case, some twice, some unknown; values good and bad, escaped.
func randomNested(r *rand.Rand) string {
	scalar := func() string {
		vals := []string{"1", "-7", "2.5", `"x"`, `"e\"s\u00e9"`, "true", "null", `"2024-01-02 03:04:05.678"`, `"12"`, "[1,2]", `{"k":1}`}
		return vals[r.IntN(len(vals))]
	}
	var object func(names []string, depth int) string
	object = func(names []string, depth int) string {
		switch r.IntN(12) {
		case 0:
			return "null"
		case 1:
			return scalar()
		}
		var ms []string
		for range r.IntN(len(names) + 3) {
			name := names[r.IntN(len(names))]
			if r.IntN(6) == 0 {
				name = strings.ToUpper(name)
			}
			if r.IntN(8) == 0 {
				name = "u" + name
			}
			v := scalar()
			if name == "z" && depth == 0 || name == "a" || name == "c" {
				sub := []string{"p", "q"}
				if name == "a" {
					sub = []string{"x", "y", "z", "dateTime"}
				} else if name == "c" {
					sub = []string{"x", "w"}
				}
				v = object(sub, depth+1)
			}
			ms = append(ms, fmt.Sprintf("%q:%s", name, v))
		}
		return "{" + strings.Join(ms, ",") + "}"
	}
	return object([]string{"a", "b", "c"}, -1)
}

// TestDecodePathsProperty: the paths' columns hold what field accesses
// read from the ROWs a decoder of every column builds, over random
// records and random sets of paths; a record the paths decoder refuses
// the full one refuses too (it reads less, so it may refuse less).
func TestDecodePathsProperty(t *testing.T) {
	sch := pathSchema(t)
	all := []connector.FieldPath{{Column: 0, Fields: []int{0}}, {Column: 0, Fields: []int{1}}, {Column: 0, Fields: []int{2, 0}},
		{Column: 0, Fields: []int{2, 1}}, {Column: 0, Fields: []int{3}}, {Column: 2, Fields: []int{0}}, {Column: 2, Fields: []int{1}}}
	wholeZ := connector.FieldPath{Column: 0, Fields: []int{2}}
	r := rand.New(rand.NewPCG(1, 2))
	compared := 0
	for range 20000 {
		var paths []connector.FieldPath
		for _, p := range all {
			if r.IntN(2) == 0 {
				paths = append(paths, p)
			}
		}
		if r.IntN(4) == 0 {
			// z whole instead of its fields
			paths = slicesDeleteZ(paths)
			paths = append(paths, wholeZ)
		}
		if len(paths) == 0 {
			continue
		}
		opts := Options{}
		if r.IntN(4) == 0 {
			opts.FailOnMissingField = true
		}
		rec := randomNested(r)
		full, err := NewDecoder(opts, sch)
		if err != nil {
			t.Fatal(err)
		}
		b := row.NewBatch(1, sch.Len())
		ferr := full.DecodeString(rec, b)
		got, perr := decodeWithPaths(t, opts, sch, paths, rec)
		switch {
		case perr != nil && ferr == nil:
			t.Fatalf("%s with paths %v: %v, but the full decode took it", rec, paths, perr)
		case perr != nil || ferr != nil:
			continue
		}
		compared++
		want := b.Changes[0].Row
		for j, p := range paths {
			if w, g := pathValue(want, p), got[sch.Len()+j]; !same(w, g) {
				t.Fatalf("%s: path %v is %v, want %v", rec, p, g, w)
			}
		}
		if !same(want[1], got[1]) {
			t.Fatalf("%s: b is %v, want %v", rec, got[1], want[1])
		}
	}
	if compared < 2000 {
		t.Fatalf("only %d records compared", compared)
	}
}

func slicesDeleteZ(ps []connector.FieldPath) []connector.FieldPath {
	var out []connector.FieldPath
	for _, p := range ps {
		if !(p.Column == 0 && p.Fields[0] == 2) {
			out = append(out, p)
		}
	}
	return out
}

// FuzzDecodePaths checks the paths decoder against the full one on any
// record.
func FuzzDecodePaths(f *testing.F) {
	for _, s := range []string{`{"a":{"x":1,"y":"s","z":{"p":2}}}`, `{"a":null}`, `{"a":{"x":1},"a":{"y":"t"}}`, `{"a":[1]}`, `{"c":{"w":"v"}}`, `{"a":{"z":{"p":"\u0031"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		sch := pathSchema(t)
		paths := []connector.FieldPath{{Column: 0, Fields: []int{0}}, {Column: 0, Fields: []int{2, 0}}, {Column: 2, Fields: []int{0}}}
		full, _ := NewDecoder(Options{}, sch)
		b := row.NewBatch(1, sch.Len())
		ferr := full.DecodeString(rec, b)
		got, perr := decodeWithPaths(t, Options{}, sch, paths, rec)
		if perr != nil && ferr == nil {
			t.Fatalf("paths refused %q: %v", rec, perr)
		}
		if perr != nil || ferr != nil || b.Len() == 0 || got == nil {
			return
		}
		for j, p := range paths {
			if w, g := pathValue(b.Changes[0].Row, p), got[sch.Len()+j]; !same(w, g) {
				t.Fatalf("%q: path %v is %v, want %v", rec, p, g, w)
			}
		}
	})
}

// TestIgnoreParseErrorsNested: under ignore_parse_errors, a bad value
// inside a ROW makes the ROW NULL and the record reads on after it (it
// was read on from inside the ROW, a syntax error).
func TestIgnoreParseErrorsNested(t *testing.T) {
	sch := pathSchema(t)
	d, _ := NewDecoder(Options{IgnoreParseErrors: true}, sch)
	b := row.NewBatch(1, sch.Len())
	if err := d.DecodeString(`{"a":{"x":"nope","y":"s"},"b":1}`, b); err != nil {
		t.Fatal(err)
	}
	if r := b.Changes[0].Row; !r[0].IsNull() || r[1].Int64() != 1 {
		t.Errorf("got %v, want a NULL and b 1", r)
	}
}

// FuzzSkipString: skipString ends and fails where ReadString does.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\x"`, `"\u12"`, `"open`, "\"a\x01\"", `"a\\"`, `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '"' {
			return
		}
		_, end, err := ReadString(s, 0)
		end2, err2 := skipString(s, 0)
		if end != end2 || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("%q: ReadString %d %v, skipString %d %v", s, end, err, end2, err2)
		}
	})
}
