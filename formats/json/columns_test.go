package json

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestDecodeColumnsRefuses: a selection naming a column the schema lacks
// is refused, and the decoder stays as it was.
func TestDecodeColumnsRefuses(t *testing.T) {
	d, _ := NewDecoder(Options{}, schemaOf(t, "a BIGINT", "b STRING"))
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
	sch := schemaOf(t, "a BIGINT", "b INT", "c STRING")
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

// checkColumns decodes rec with full (every column) and with picked (cols
// of the schema) into a batch reused after other rows, and compares: the
// same values in the picked places when the full decoder read the
// record; when it failed on malformed JSON or in a picked column, picked
// fails too (the same error for a picked column: members come in the
// same order). A picked decoder fails on nothing the full one reads. It
// reports whether values were compared.
func checkColumns(t *testing.T, full, picked *Decoder, sch row.Schema, cols []int, rec []byte) bool {
	t.Helper()
	fb := row.NewBatch(1, sch.Len())
	ferr := full.Decode(rec, fb)
	pb := row.NewBatch(4, len(cols))
	for range 3 {
		r := pb.NewRow()
		for i := range r {
			r[i] = row.StringValue("stale")
		}
		pb.Append(row.Insert, r)
	}
	pb.Reuse() // reused unzeroed: every value of a picked row must be written
	perr := picked.Decode(rec, pb)
	var de *connector.DecodeError
	switch {
	case ferr == nil:
		if perr != nil {
			t.Fatalf("%v %s: picked %v, full read it", cols, rec, perr)
		}
	case !errors.As(ferr, &de) || de.Column == "":
		if perr == nil {
			t.Fatalf("%v %s: picked read it, full %v", cols, rec, ferr)
		}
		return false
	case slices.Contains(cols, slices.IndexFunc(sch.Fields, func(f row.Field) bool { return f.Name == de.Column })):
		if perr == nil || perr.Error() != ferr.Error() {
			t.Fatalf("%v %s: picked %v, full %v in a picked column", cols, rec, perr, ferr)
		}
		return false
	default:
		return false // failed in a column not picked: nothing to compare
	}
	if fb.Len() != pb.Len() {
		t.Fatalf("%s: %d rows full, %d picked", rec, fb.Len(), pb.Len())
	}
	for k := range fb.Changes {
		got := pb.Changes[k].Row
		if len(got) != len(cols) {
			t.Fatalf("%v %s: a row of %d columns", cols, rec, len(got))
		}
		for j, i := range cols {
			if want := fb.Changes[k].Row[i]; !row.Equal(got[j], want) {
				t.Fatalf("%v %s: column %d (schema's %d) is %v, want %v", cols, rec, j, i, got[j], want)
			}
		}
	}
	return fb.Len() > 0
}

// randomSchema is a schema of one to six columns c0, c1, ... of types
// the format reads from scalars.
func randomSchema(t testing.TB, r *rand.Rand) row.Schema {
	types := []string{"BIGINT", "INT", "DOUBLE", "STRING", "BOOLEAN", "DECIMAL(10,2)", "TIMESTAMP(3)", "DATE"}
	var cols []string
	for i := range 1 + r.IntN(6) {
		cols = append(cols, fmt.Sprintf("c%d %s", i, types[r.IntN(len(types))]))
	}
	return schemaOf(t, cols...)
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

// TestDecodeColumnsProperty decodes random records of random schemas
// with every column and with a random selection (reordered, some twice,
// some left out): the picked row is the full row's columns.
func TestDecodeColumnsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	compared := 0
	for range 300 {
		sch := randomSchema(t, r)
		n := sch.Len()
		if r.IntN(3) == 0 {
			sch.Fields[r.IntN(n)].Type.NotNull = true
		}
		cols := make([]int, 1+r.IntN(n+1))
		for j := range cols {
			cols[j] = r.IntN(n)
		}
		var opts Options
		switch r.IntN(4) {
		case 0:
			opts.IgnoreParseErrors = true
		case 1:
			opts.FailOnMissingField = true
		}
		full, _ := NewDecoder(opts, sch)
		picked, _ := NewDecoder(opts, sch)
		if !picked.DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		clone := picked.Clone().(*Decoder)
		for range 20 {
			rec := randomObject(r, n)
			if checkColumns(t, full, picked, sch, cols, rec) {
				compared++
			}
			checkColumns(t, full, clone, sch, cols, rec) // Clone keeps the selection
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d records decoded on both sides", compared)
	}
	t.Logf("%d records compared", compared)
}

// FuzzDecodeColumns checks a decoder of some columns against one of
// every column on any record and selection.
func FuzzDecodeColumns(f *testing.F) {
	for _, seed := range []string{`{"s":"a","n":1,"d":2.5,"s2":"x"}`, `{"n":"2","S":"q\"q"}`, `{}`, `{"d":[1,{"x":2}],"n":1}`, `{"n":1,"n":2}`, `{"s":"abc`, `[1]`} {
		f.Add([]byte(seed), []byte{1, 2, 2})
		f.Add([]byte(seed), []byte{3, 0})
	}
	sch := schemaOf(f, "s STRING", "n BIGINT", "d DOUBLE", "s2 STRING")
	f.Fuzz(func(t *testing.T, rec []byte, sel []byte) {
		if len(sel) == 0 || len(sel) > 8 {
			return
		}
		cols := make([]int, len(sel))
		for j, c := range sel {
			cols[j] = int(c) % sch.Len()
		}
		full, _ := NewDecoder(Options{}, sch)
		picked, _ := NewDecoder(Options{}, sch)
		if !picked.DecodeColumns(cols) {
			t.Fatalf("DecodeColumns(%v) refused", cols)
		}
		checkColumns(t, full, picked, sch, cols, rec)
	})
}
