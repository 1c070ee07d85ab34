package debezium

import (
	"strconv"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// debezium-json reads its values with the json format's codec: an epoch
// number (Debezium's io.debezium.time.Timestamp and Date) past the years
// 0000 to 9999 is a bad record, as is a zoned text (ZonedTimestamp) an
// offset carries past them; the ends and just inside read and round-trip.
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
	record := func(text string, number bool) []byte {
		if !number {
			text = strconv.Quote(text)
		}
		return []byte(`{"before":null,"after":{"v":` + text + `},"op":"c"}`)
	}
	formattest.TimeRanges(t, formattest.EpochNumbers, codec, record)
	formattest.TimeRanges(t, formattest.ZonedTexts, codec, record)
	formattest.TimeRanges(t, formattest.SignedTexts, codec, record)
	formattest.TimeRanges(t, formattest.SignedDates, codec, record)
}
