package json

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestDecodeColumnsRefuses: a selection naming a column the schema lacks
// is refused, and the decoder stays as it was.
func TestDecodeColumnsRefuses(t *testing.T) {
	d, _ := NewDecoder(Options{}, testenv.Schema(t, "a BIGINT", "b STRING"))
	for _, cols := range [][]int{nil, {}, {2}, {-1}, {0, 5}} {
		if d.DecodeColumns(cols) {
			t.Errorf("DecodeColumns(%v) = true", cols)
		}
	}
	b := row.NewBatch(1, 2)
	if err := d.Decode([]byte(`{"a":1,"b":"x"}`), b); err != nil || len(b.Changes[0].Row) != 2 {
		t.Fatalf("after refused selections: %v, %v", err, b)
	}
}

// TestSetColumns: the members of columns not needed are skipped: NULL in
// the row, and a bad value, a missing member (fail_on_missing_field) or
// a NULL in a NOT NULL column there is no error; malformed JSON is.
func TestSetColumns(t *testing.T) {
	sch := testenv.Schema(t, "a BIGINT", "b INT", "c STRING")
	sch.Fields[1].Type.NotNull = true
	d, _ := NewDecoder(Options{FailOnMissingField: true}, sch)
	d.SetColumns([]bool{true, false, true})
	for _, tc := range []struct{ rec, want, err string }{
		{`{"a":1,"b":2,"c":"x"}`, "+I[1, null, x]", ""},
		{`{"c":"x","b":"not a number","a":1}`, "+I[1, null, x]", ""},
		{`{"a":1,"c":"x"}`, "+I[1, null, x]", ""},
		{`{"a":1,"b":null,"c":"x"}`, "+I[1, null, x]", ""},
		{`{"a":1,"b":{"deep":[1,2]},"c":"x"}`, "+I[1, null, x]", ""},
		{`{"a":1,"b":tru,"c":"x"}`, "", "invalid"},
		{`{"b":2,"c":"x"}`, "", "column a: missing"},
		{`{"a":"y","b":2,"c":"x"}`, "", "column a"},
	} {
		b := row.NewBatch(1, 3)
		err := d.Decode([]byte(tc.rec), b)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q", tc.rec, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.rec, err)
		case b.Changes[0].String() != tc.want:
			t.Errorf("%s: %s, want %s", tc.rec, b.Changes[0], tc.want)
		}
	}
}

// randomObject is a record for a schema of n columns: some of its
// members in any order, in any case, some twice, some unknown, of values
// good and bad for any type, now and then malformed.
func randomObject(r *rand.Rand, n int) []byte {
	values := []string{"1", "-7", "2.5", `"x"`, "true", "null", `"2024-01-02"`, `"2024-01-02 03:04:05.678"`, "12.34",
		`{"n":[1,"}"]}`, `[1,"a"]`, `"es\"c"`, "1e3", `"12"`}
	broken := []string{"tru", `"open`, "1x", "{", "[1,", `{"a" 1}`}
	var members []string
	for range r.IntN(n + 3) {
		name := fmt.Sprintf("c%d", r.IntN(n+1)) // c<n> is unknown
		if r.IntN(5) == 0 {
			name = strings.ToUpper(name)
		}
		v := values[r.IntN(len(values))]
		if r.IntN(30) == 0 {
			v = broken[r.IntN(len(broken))]
		}
		members = append(members, fmt.Sprintf("%q:%s", name, v))
	}
	return []byte("{" + strings.Join(members, ",") + "}")
}

// TestDecodeColumnsProperty: the picked row is the full row's columns,
// on random schemas, selections and records, with ignore_parse_errors
// or fail_on_missing_field now and then.
func TestDecodeColumnsProperty(t *testing.T) {
	formattest.PickedColumns(t, formattest.Columns{
		Types: []string{"BIGINT", "INT", "TINYINT", "SMALLINT", "DOUBLE", "STRING", "BOOLEAN", "DECIMAL(10,2)", "TIMESTAMP(3)", "DATE"},
		Decoders: func(t testing.TB, r *rand.Rand, sch row.Schema) (connector.Decoder, connector.Decoder) {
			var opts Options
			switch r.IntN(4) {
			case 0:
				opts.IgnoreParseErrors = true
			case 1:
				opts.FailOnMissingField = true
			}
			full, _ := NewDecoder(opts, sch)
			picked, _ := NewDecoder(opts, sch)
			return full, picked
		},
		Record:      randomObject,
		MinCompared: 1000,
	})
}

// FuzzDecodeColumns checks a decoder of some columns against one of
// every column on any record and selection.
func FuzzDecodeColumns(f *testing.F) {
	formattest.FuzzColumns(f, []string{`{"s":"a","n":1,"d":2.5,"s2":"x"}`, `{"n":"2","S":"q\"q"}`, `{}`, `{"d":[1,{"x":2}],"n":1}`, `{"n":1,"n":2}`, `{"s":"abc`, `[1]`},
		func(sch row.Schema) connector.Decoder { d, _ := NewDecoder(Options{}, sch); return d }, false)
}
