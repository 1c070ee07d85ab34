package json

import (
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// Epoch numbers at both ends of the years 0000 to 9999 and just inside
// read and round-trip; one past is a bad record in its column. The json
// format reads a timestamp text in its one form, without a zone, so no
// offset can carry a text past the years.
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
	formattest.TimeRanges(t, formattest.EpochNumbers, codec, func(text string, _ bool) []byte {
		return []byte(`{"v":` + text + `}`)
	})
	quoted := func(text string, _ bool) []byte { return []byte(`{"v":"` + text + `"}`) }
	formattest.TimeRanges(t, formattest.SignedTexts, codec, quoted)
	formattest.TimeRanges(t, formattest.SignedDates, codec, quoted)
}
