package cdcjson

import (
	"strconv"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// canal-json, maxwell-json and ogg-json read their values with the json
// format's codec: an epoch number past the years 0000 to 9999 is a bad
// record, as is a zoned text an offset carries past them; the ends and
// just inside read and round-trip.
func TestTimeRanges(t *testing.T) {
	for format, wrap := range map[string]func(v string) string{
		"canal-json":   func(v string) string { return `{"data":[{"v":` + v + `}],"type":"INSERT"}` },
		"maxwell-json": func(v string) string { return `{"type":"insert","data":{"v":` + v + `}}` },
		"ogg-json":     func(v string) string { return `{"op_type":"I","after":{"v":` + v + `}}` },
	} {
		t.Run(format, func(t *testing.T) {
			newCodec := func(s row.Schema) formattest.Codec { return codec(t, format, s) }
			record := func(text string, number bool) []byte {
				if !number {
					text = strconv.Quote(text)
				}
				return []byte(wrap(text))
			}
			formattest.TimeRanges(t, formattest.EpochNumbers, newCodec, record)
			formattest.TimeRanges(t, formattest.ZonedTexts, newCodec, record)
			formattest.TimeRanges(t, formattest.SignedTexts, newCodec, record)
			formattest.TimeRanges(t, formattest.SignedDates, newCodec, record)
		})
	}
}
