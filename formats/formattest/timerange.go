package formattest

import (
	"errors"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TimeCase is one field of TimeRanges' table: Text, as the format
// carries it (Number: a bare number, else a text the record quotes as
// its format does), into a column of Type. Want is the value's SQL text
// when it reads; "" says it is a bad record naming its column, whose
// error ends in Err.
type TimeCase struct {
	Type, Text string
	Number     bool
	Want, Err  string
}

// EpochNumbers are epoch numbers at both ends of the years 0000 to 9999
// and just inside: milliseconds into a timestamp, days into a DATE. A
// number past them is a bad record (formats/json's rule, and the
// changelog formats' that share it), as Flink's TO_TIMESTAMP_LTZ gives
// NULL past them; such a time written as text has a signed year
// (SignedTexts).
var EpochNumbers = []TimeCase{
	{Type: "TIMESTAMP(3)", Text: "253402300799999", Number: true, Want: "9999-12-31 23:59:59.999"},
	{Type: "TIMESTAMP(3)", Text: "253402300799998", Number: true, Want: "9999-12-31 23:59:59.998"},
	{Type: "TIMESTAMP(3)", Text: "253402300800000", Number: true, Err: "epoch milliseconds out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP(3)", Text: "-62167219200000", Number: true, Want: "0000-01-01 00:00:00.000"},
	{Type: "TIMESTAMP(3)", Text: "-62167219199999", Number: true, Want: "0000-01-01 00:00:00.001"},
	{Type: "TIMESTAMP(3)", Text: "-62167219200001", Number: true, Err: "epoch milliseconds out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "253402300799999", Number: true, Want: "9999-12-31 23:59:59.999"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "253402300800000", Number: true, Err: "epoch milliseconds out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "-62167219200000", Number: true, Want: "0000-01-01 00:00:00.000"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "-62167219200001", Number: true, Err: "epoch milliseconds out of range (years 0000 to 9999)"},
	{Type: "DATE", Text: "2932896", Number: true, Want: "9999-12-31"},
	{Type: "DATE", Text: "2932895", Number: true, Want: "9999-12-30"},
	{Type: "DATE", Text: "2932897", Number: true, Err: "days out of range (years 0000 to 9999)"},
	{Type: "DATE", Text: "-719528", Number: true, Want: "0000-01-01"},
	{Type: "DATE", Text: "-719527", Number: true, Want: "0000-01-02"},
	{Type: "DATE", Text: "-719529", Number: true, Err: "days out of range (years 0000 to 9999)"},
}

// ZonedTexts are timestamp texts whose zone offset carries them to an
// end of the years 0000 to 9999 or just past it (row.ParseTimestamp's
// rule), and DATE texts at the ends, for the formats that read such
// texts (csv, the changelog formats).
var ZonedTexts = []TimeCase{
	{Type: "TIMESTAMP_LTZ(6)", Text: "9999-12-31T22:59:59.999999-01:00", Want: "9999-12-31 23:59:59.999999"},
	{Type: "TIMESTAMP_LTZ(6)", Text: "9999-12-31T23:00:00-01:00", Err: "out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "0000-01-01T01:00:00+01:00", Want: "0000-01-01 00:00:00.000"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "0000-01-01T00:59:59+01:00", Err: "out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP(3)", Text: "9999-12-31T23:59:59.999Z", Want: "9999-12-31 23:59:59.999"},
	{Type: "TIMESTAMP(3)", Text: "9999-12-31T23:59:59-00:01", Err: "out of range (years 0000 to 9999)"},
	{Type: "TIMESTAMP(3)", Text: "0000-01-01T00:00:00+00:01", Err: "out of range (years 0000 to 9999)"},
	{Type: "DATE", Text: "9999-12-31", Want: "9999-12-31"},
	{Type: "DATE", Text: "0000-01-01", Want: "0000-01-01"},
	{Type: "DATE", Text: "10000-01-01", Err: `cannot parse "10000-01-01" as DATE`},
}

// SignedTexts are timestamp texts whose year is past 0000..9999 as
// java.time writes it (+10000, -0001): what Flink's csv and json writers
// write for such a time, and what its readers (and etld's) take back.
var SignedTexts = []TimeCase{
	{Type: "TIMESTAMP(3)", Text: "+10000-01-01 23:59:59.999", Want: "+10000-01-01 23:59:59.999"},
	{Type: "TIMESTAMP(3)", Text: "-0001-12-31 00:00:00", Want: "-0001-12-31 00:00:00.000"},
	{Type: "TIMESTAMP(6)", Text: "+294247-01-10 04:00:54.775807", Want: "+294247-01-10 04:00:54.775807"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "+10000-01-01 23:59:59.999Z", Want: "+10000-01-01 23:59:59.999"},
	{Type: "TIMESTAMP_LTZ(3)", Text: "-0001-12-31 00:00:00Z", Want: "-0001-12-31 00:00:00.000"},
	{Type: "TIMESTAMP(3)", Text: "+9999-12-31 00:00:00", Err: `cannot parse "+9999-12-31 00:00:00" as TIMESTAMP(3)`},
	{Type: "TIMESTAMP(3)", Text: "10000-01-01 00:00:00", Err: `cannot parse "10000-01-01 00:00:00" as TIMESTAMP(3)`},
	{Type: "TIMESTAMP(3)", Text: "+10001-02-29 00:00:00", Err: "no such day in the year 10001"},
	{Type: "TIMESTAMP(6)", Text: "+294247-01-10 04:00:54.775808", Err: "year out of range"},
}

// SignedDates are SignedTexts' DATEs, which Flink's json reader takes
// back and its csv reader does not.
var SignedDates = []TimeCase{
	{Type: "DATE", Text: "+10000-01-01", Want: "+10000-01-01"},
	{Type: "DATE", Text: "-0001-12-31", Want: "-0001-12-31"},
	{Type: "DATE", Text: "+10001-02-29", Err: "no such day in the year 10001"},
}

// TimeRanges decodes each case as the one column v of a record (record
// writes it): one that reads has Want's value and writes a record that
// reads back with it (CheckRecord, Exact); another is a bad record in
// column v. newCodec makes the format's decoder and encoder.
func TimeRanges(t *testing.T, cases []TimeCase, newCodec func(row.Schema) Codec, record func(text string, number bool) []byte) {
	t.Helper()
	for _, tc := range cases {
		sch := testenv.Schema(t, "v "+tc.Type)
		c := newCodec(sch)
		rec := record(tc.Text, tc.Number)
		b := row.NewBatch(1, 1)
		err := c.Decoder.Decode(rec, b)
		if tc.Want == "" {
			var de *connector.DecodeError
			if !errors.As(err, &de) || de.Column != "v" || !strings.Contains(err.Error(), tc.Err) {
				t.Errorf("%s into %s: got %v, want a bad record in column v ending %q", tc.Text, tc.Type, err, tc.Err)
			}
			if b.Len() != 0 {
				t.Errorf("%s into %s: a bad record appended a row", tc.Text, tc.Type)
			}
			continue
		}
		if err != nil || b.Len() != 1 {
			t.Errorf("%s into %s: %d rows, %v", tc.Text, tc.Type, b.Len(), err)
			continue
		}
		if got := b.Changes[0].Row[0].Text(sch.Fields[0].Type); got != tc.Want {
			t.Errorf("%s into %s read as %s, want %s", tc.Text, tc.Type, got, tc.Want)
		}
		CheckRecord(t, c, rec, Check{Exact: true})
	}
}
