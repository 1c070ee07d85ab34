package csv

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestProjection: a column the plan does not read is split off its record
// but not parsed, so its bad value is no error; a read column's still is,
// and so is a record of the wrong shape.
func TestProjection(t *testing.T) {
	sch := testenv.Schema(t, "id BIGINT", "amount BIGINT", "ts TIMESTAMP(3)", "name STRING")
	sch.Fields[2].Type.NotNull = true
	needed := []bool{true, true, false, true}
	tests := []struct {
		rec     string
		want    row.Row
		wantErr string // substring; "" for none
		column  string // the DecodeError's column
	}{
		{rec: "1,5,2024-01-01 00:00:00,x", want: row.Row{row.BigIntValue(1), row.BigIntValue(5), null, s("x")}},
		{rec: "1,5,not a time,x", want: row.Row{row.BigIntValue(1), row.BigIntValue(5), null, s("x")}},
		{rec: "1,5,,x", want: row.Row{row.BigIntValue(1), row.BigIntValue(5), null, s("x")}}, // NOT NULL, but unread
		{rec: `1,5,"t,""q""",x`, want: row.Row{row.BigIntValue(1), row.BigIntValue(5), null, s("x")}},
		{rec: "1,oops,2024-01-01 00:00:00,x", wantErr: "oops", column: "amount"},
		{rec: "1,5,t", wantErr: "expected 4 fields, got 3"},
		{rec: "1,5,t,x,y", wantErr: "expected 4 fields, got 5"},
		{rec: `1,5,"open,x`, wantErr: "no closing quote", column: "ts"},
	}
	for _, tt := range tests {
		t.Run(tt.rec, func(t *testing.T) {
			d, err := NewDecoder(Options{}, sch)
			if err != nil {
				t.Fatal(err)
			}
			d.SetColumns(needed)
			b := row.NewBatch(1, sch.Len())
			err = d.Decode([]byte(tt.rec), b)
			if tt.wantErr != "" {
				var de *connector.DecodeError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &de) || de.Column != tt.column {
					t.Fatalf("got %v, want a DecodeError of column %q with %q", err, tt.column, tt.wantErr)
				}
				if b.Len() != 0 {
					t.Errorf("a failed record appended %d rows", b.Len())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertRow(t, b.Changes[0].Row, tt.want)
		})
	}
	// A projection of another width is not this schema's: ignored.
	d, _ := NewDecoder(Options{}, sch)
	d.SetColumns([]bool{true})
	if err := d.Decode([]byte("1,5,not a time,x"), row.NewBatch(1, sch.Len())); err == nil {
		t.Error("a projection of the wrong width was applied")
	}
}

// TestProjectionProperty decodes random records with and without a
// random projection: the read columns get the same values, the others
// NULL, and a record fails projected exactly when it fails in a read
// column or in its shape.
func TestProjectionProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	compared := 0
	for iter := 0; iter < 300; iter++ {
		sch := formattest.RandomSchema(t, r, columnTypes)
		n := sch.Len()
		needed := make([]bool, n)
		for i := range needed {
			needed[i] = r.IntN(2) == 0
		}
		full, _ := NewDecoder(Options{}, sch)
		proj, _ := NewDecoder(Options{}, sch)
		proj.SetColumns(needed)
		for rec := 0; rec < 20; rec++ {
			line := randomRecord(r, n)
			fb, pb := row.NewBatch(1, n), row.NewBatch(1, n)
			ferr := full.Decode(line, fb)
			perr := proj.Decode(line, pb)
			var de *connector.DecodeError
			switch {
			case ferr == nil:
				if perr != nil {
					t.Fatalf("%v %q: projected %v, full read it", needed, line, perr)
				}
			case !errors.As(ferr, &de) || de.Column == "":
				// The record's shape: wrong whatever is read.
				if perr == nil || perr.Error() != ferr.Error() {
					t.Fatalf("%v %q: projected %v, full %v", needed, line, perr, ferr)
				}
				continue
			case needed[slices.IndexFunc(sch.Fields, func(f row.Field) bool { return f.Name == de.Column })]:
				if perr == nil {
					t.Fatalf("%v %q: projected read it, full %v in a read column", needed, line, ferr)
				}
				continue
			default:
				// The full decoder stopped at an unread column; a read
				// one after it may fail too, or not: nothing to compare.
				continue
			}
			compared++
			if fb.Len() != pb.Len() {
				t.Fatalf("%q: %d rows full, %d projected", line, fb.Len(), pb.Len())
			}
			for k := range fb.Changes {
				for i := range n {
					want := fb.Changes[k].Row[i]
					if !needed[i] {
						want = null
					}
					if got := pb.Changes[k].Row[i]; !row.Equal(got, want) {
						t.Fatalf("%v %q column %d: got %v, want %v", needed, line, i, got, want)
					}
				}
			}
		}
	}
	if compared < 200 {
		t.Fatalf("only %d records decoded on both sides: the generator makes too few good ones", compared)
	}
	t.Logf("%d records compared", compared)
}

// columnTypes are the types of the columns of random schemas.
var columnTypes = []string{"BIGINT", "INT", "DOUBLE", "STRING", "BOOLEAN", "DECIMAL(10, 2)", "TIMESTAMP(3)", "DATE"}

// randomRecord is a record for a schema of n columns, sometimes one field
// short or long, of values good and bad for any type.
func randomRecord(r *rand.Rand, n int) []byte {
	values := []string{"", "1", "-7", "2.5", "x", `"a,b"`, `"q""q"`, "true", "2024-01-02", "2024-01-02 03:04:05.678", "12.34", "nope", `"line` + "\n" + `break"`}
	fields := make([]string, n+r.IntN(3)-1)
	for i := range fields {
		fields[i] = values[r.IntN(len(values))]
	}
	return []byte(strings.Join(fields, ","))
}

// FuzzParseFastPath checks the one-pass split of parse against
// parseSlow, the general parser, on any record, with a comma or a tab
// between fields (a delimiter below 0x20, as the line breaks are).
func FuzzParseFastPath(f *testing.F) {
	for _, s := range []string{"", "a", "a,b", ",,", `a,"b",c`, "a\tb", "a\x00b,c", "a\rb", "\\,x", `a"b`,
		"0,56346,sensor_56346,g5634,6,4,9328", "12345678,abcdefgh,", ",,,,,,,,,,,,,,,,,", "abcdefg\"hi,jk", "abcdefghij\nk,l",
		"abcdefghijklmno\x00,p", "a\tbcdefgh\tij\tk\\lmnopq\t", "abcdefgh,ijklmnop\r"} {
		for _, escape := range []bool{false, true} {
			f.Add(s, escape, false)
			f.Add(s, escape, true)
		}
	}
	f.Fuzz(func(t *testing.T, s string, escape, tab bool) {
		o := Options{}
		if escape {
			o.EscapeCharacter = `\`
		}
		if tab {
			o.FieldDelimiter = "\t"
		}
		d, err := NewDecoder(o, testenv.Schema(t, "a STRING", "b STRING"))
		if err != nil {
			t.Fatal(err)
		}
		ferr := d.parse(s)
		var fast []field
		for i := range d.nfields() {
			fast = append(fast, d.fieldAt(i))
		}
		d.fields = d.fields[:0]
		serr := d.parseSlow(s)
		if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
			t.Fatalf("%q: parse %v, parseSlow %v", s, ferr, serr)
		}
		if ferr == nil && !slices.Equal(fast, d.fields) {
			t.Fatalf("%q: parse %v, parseSlow %v", s, fast, d.fields)
		}
	})
}
