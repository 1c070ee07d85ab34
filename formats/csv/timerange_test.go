package csv

import (
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// A zoned timestamp text is read within the years 0000 to 9999 only: one
// an offset carries past them is a bad record, not a value whose text
// the writer would spell with a fifth digit no reader takes back. CSV
// carries no epoch numbers (a number is no timestamp text).
func TestTimeRanges(t *testing.T) {
	codec := func(s row.Schema) formattest.Codec {
		d, err := NewDecoder(Options{}, s)
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewEncoder(Options{}, s)
		if err != nil {
			t.Fatal(err)
		}
		return formattest.Codec{Schema: s, Decoder: d, Encoder: e}
	}
	formattest.TimeRanges(t, formattest.ZonedTexts, codec, func(text string, _ bool) []byte { return []byte(text) })
	formattest.TimeRanges(t, []formattest.TimeCase{
		{Type: "TIMESTAMP(3)", Text: "253402300799999", Err: `cannot parse "253402300799999" as TIMESTAMP(3)`},
		{Type: "DATE", Text: "2932896", Err: `cannot parse "2932896" as DATE`},
	}, codec, func(text string, _ bool) []byte { return []byte(text) })
	formattest.TimeRanges(t, formattest.SignedTexts, codec, func(text string, _ bool) []byte { return []byte(text) })
	// Flink's csv reader (java.sql.Date.valueOf) refuses a DATE's.
	formattest.TimeRanges(t, []formattest.TimeCase{
		{Type: "DATE", Text: "+10000-01-01", Err: `cannot parse "+10000-01-01" as DATE`},
		{Type: "DATE", Text: "-0001-12-31", Err: `cannot parse "-0001-12-31" as DATE`},
	}, codec, func(text string, _ bool) []byte { return []byte(text) })
}
