package raw

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

var line = row.NewSchema(row.Field{Name: "line", Type: row.Of(row.String)})

func TestDecode(t *testing.T) {
	d, err := NewDecoder(line)
	if err != nil {
		t.Fatal(err)
	}
	for rec, want := range map[string]string{
		"2024-01-02 ERROR boom": "2024-01-02 ERROR boom",
		"with CRLF\r\n":         "with CRLF",
		"with LF\n":             "with LF",
		"":                      "",
		"  é😀 \xff ,\"":         "  é😀 \xff ,\"",
	} {
		b := row.NewBatch(1, 1)
		buf := []byte(rec)
		if err := d.Decode(buf, b); err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'X' // the row must not alias the caller's buffer
		}
		if b.Len() != 1 || b.Changes[0].Kind != row.Insert || !row.Equal(b.Changes[0].Row[0], row.StringValue(want)) {
			t.Errorf("Decode(%q) = %v, want +I[%s]", rec, b, want)
		}
	}
}

func TestEncode(t *testing.T) {
	e, err := NewEncoder(line)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		v    row.Value
		want string
	}{
		{row.StringValue("a line, \"as is\""), "a line, \"as is\"\n"},
		{row.StringValue(""), "\n"},
		{row.NullValue, "\n"},
	} {
		got, err := e.Encode([]byte(">"), row.Insert, row.Row{tt.v})
		if err != nil || string(got) != ">"+tt.want {
			t.Errorf("Encode(%v) = %q, %v; want %q", tt.v, got, err, tt.want)
		}
	}
	if _, err := e.Encode(nil, row.Insert, row.Row{}); err == nil {
		t.Error("an empty row must be refused")
	}
}

func TestSchema(t *testing.T) {
	for _, s := range []row.Schema{
		{},
		row.NewSchema(row.Field{Name: "n", Type: row.Of(row.BigInt)}),
		row.NewSchema(row.Field{Name: "a", Type: row.Of(row.String)}, row.Field{Name: "b", Type: row.Of(row.String)}),
	} {
		_, err := NewDecoder(s)
		_, err2 := NewEncoder(s)
		if err == nil || err2 == nil {
			t.Errorf("schema %s must be refused", s)
			continue
		}
		if want := "the raw format needs a schema of exactly one STRING column, got " + s.String(); err.Error() != want {
			t.Errorf("got %q, want %q", err, want)
		}
	}
}

// TestRoundTrip writes random lines and reads them back. A line holds
// no line break and is never NULL: a NULL is written as an empty line,
// which reads back as the empty string.
func TestRoundTrip(t *testing.T) {
	d, _ := NewDecoder(line)
	e, _ := NewEncoder(line)
	lines := func(rng *rand.Rand, _ row.Type) row.Value {
		alphabet := []rune("ab ,;\t|\"'\\NUL\x00é😀\u2028{}[]:")
		rs := make([]rune, rng.IntN(40))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return row.StringValue(string(rs))
	}
	formattest.RoundTrip(t, formattest.Codec{Schema: line, Decoder: d, Encoder: e},
		formattest.RandomChanges(rand.New(rand.NewPCG(1, 2)), line, 1000, false, lines))
}

func FuzzRawDecode(f *testing.F) {
	for _, seed := range []string{"2024-01-02 ERROR boom", "with CRLF\r\n", "with LF\n", "", "  é😀 \xff ,\"", "a\nb", "\r"} {
		f.Add([]byte(seed))
	}
	d, _ := NewDecoder(line)
	e, _ := NewEncoder(line)
	f.Fuzz(func(t *testing.T, rec []byte) {
		formattest.CheckRecord(t, formattest.Codec{Schema: line, Decoder: d, Encoder: e}, rec, formattest.Check{
			Exact:      true,
			MaxChanges: func([]byte) int { return 1 },
			// A line that ends in \r is written with \n after it, which
			// reads back as a \r\n line break.
			Lossy: func(r row.Row) bool { return strings.HasSuffix(r[0].Str(), "\r") },
		})
	})
}
