package csv

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FuzzDecodeFastPath checks decode, which tries the one-pass decode
// first, against the general path alone (a decoder without a plan), on
// any record, options and projection: the same row, or the same error
// naming the same column.
func FuzzDecodeFastPath(f *testing.F) {
	for _, s := range []string{
		"1,a,2,2.5,3,1.25,b", "-1,,+2,-0.5,-3,-1.5,", "1,a,2,2.5,3,1.25,b,", "1,a,2,2.5,3,1.25,b,,", "1,a,2,2.5", "",
		"123456789012345678,x,2147483647,1e3,1234567890123456789,12345678.99,y", "1,a,2147483648,x,3,1.234,b",
		`1,"a,b",2,2.5,3,1.25,b`, `1,a"b,2,2.5,3,1.25,b`, "1,a\r,2,2.5,3,1.25,b", `1,a\,b,2,2.5,3,1.25,b`,
		"NULL,NULL,NULL,NULL,NULL,NULL,NULL", ",,,,,,", "1,a,2,2.5,,1.25,", "\uFEFF1,a,2,2.5,3,1.25,b", "#1,a,2,2.5,3,1.25,b",
		"- ,a,2,2.5,3,1.25,b", "1\x00,a,2,2.5,3,1.25,b", "1;a;2;2.5;3;1.25;b", "1,a,2,2.5,3,1.25,b\r\r", "1,a,2,2.5,3,1.25,b\n",
	} {
		for _, mode := range []byte{0, fuzzNullLit, fuzzEmptyNull, fuzzEscape, fuzzNoQuote | fuzzEmptyNull, fuzzComments | fuzzIgnore, fuzzIgnore | fuzzNullLit} {
			f.Add(s, mode, byte(0), byte(','))
			f.Add(s, mode, byte(0x55), byte(';'))
			f.Add(s, mode, byte(0x80|0x2b), byte(','))
		}
	}
	f.Fuzz(func(t *testing.T, rec string, mode, proj, delim byte) {
		fast, general, width := fastAndGeneral(mode, proj, delim)
		if fast == nil {
			return // a delimiter the options refuse
		}
		fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
		ferr := fast.DecodeString(rec, fb)
		gerr := general.DecodeString(rec, gb)
		sameDecode(t, rec, ferr, gerr, fb, gb)
	})
}

// FuzzDecodeLine checks DecodeLine, which finds the line's end in its
// one pass, against the general path's DecodeString of the line.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		"1,a,2,2.5,3,1.25,b\n2,b", "1,a,2,2.5,3,1.25,b\r\n2", "1,a,2,2.5,3,1.25,b\r", "1,a,2,2.5,3,1.25,b\r\r\n", "1,a,2,2.5,3,1.25,b,\nx",
		"1,a,2,2.5,3,1.25,b,\r\n", "1,a,2\n,2.5,3,1.25,b", "\n1,a", "\r\n", "#x\n", "\uFEFF1,a,2,2.5,3,1.25,b\n", "12345678,a,2,2.5,123456789,1.25,b\n",
		"1,a,2,2.5,3,1.25,12345678\n", "1,a,2,2.5,3,1.25,b\rx\n", `1,"a",2,2.5,3,1.25,b` + "\n", "",
	} {
		for _, mode := range []byte{0, fuzzEmptyNull, fuzzEscape, fuzzComments | fuzzIgnore} {
			f.Add(s, mode, byte(0), byte(','))
			f.Add(s, mode, byte(0x80|0x52), byte(','))
		}
	}
	f.Fuzz(func(t *testing.T, data string, mode, proj, delim byte) {
		fast, general, width := fastAndGeneral(mode, proj, delim)
		if fast == nil {
			return
		}
		fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
		n, ferr := fast.DecodeLine(data, fb)
		line, want := data, len(data)
		if nl := strings.IndexByte(data, '\n'); nl >= 0 {
			line, want = data[:nl], nl+1
		}
		gerr := general.DecodeString(line, gb)
		sameDecode(t, data, ferr, gerr, fb, gb)
		if ferr == nil && n != want {
			t.Fatalf("%q: DecodeLine took %d bytes, the line has %d", data, n, want)
		}
	})
}

var fastSchema = func() row.Schema {
	s, err := testenv.ParseSchema("a BIGINT", "b STRING", "c INT", "d DOUBLE", "e BIGINT NOT NULL", "f DECIMAL(10,2)", "g STRING NOT NULL")
	if err != nil {
		panic(err)
	}
	return s
}()

// fastAndGeneral returns two decoders of fastSchema with the options of
// mode (FuzzCSVDecode's bits), the projection of proj and the delimiter:
// one as it is, one without its one-pass plan; nil when the options are
// refused.
func fastAndGeneral(mode, proj, delim byte) (fast, general *Decoder, width int) {
	return fastAndGeneralOf(fastSchema, mode, proj, delim)
}

// fastAndGeneralOf is fastAndGeneral of a schema of up to 7 columns.
func fastAndGeneralOf(schema row.Schema, mode, proj, delim byte) (fast, general *Decoder, width int) {
	opts := Options{Delimiter: string([]byte{delim}), AllowComments: mode&fuzzComments != 0, IgnoreParseErrors: mode&fuzzIgnore != 0,
		DisableQuoteCharacter: mode&fuzzNoQuote != 0}
	switch {
	case mode&fuzzNullLit != 0:
		opts.NullLiteral = str("NULL")
	case mode&fuzzEmptyNull != 0:
		opts.NullLiteral = str("")
	}
	if mode&fuzzEscape != 0 {
		opts.EscapeCharacter = `\`
	}
	fast, err := NewDecoder(opts, schema)
	if err != nil {
		return nil, nil, 0
	}
	general, _ = NewDecoder(opts, schema)
	// proj's low bits pick columns; its high bit reads them as a
	// ColumnDecoder (in reverse order, the first one twice) rather than a
	// projection.
	width = schema.Len()
	if proj != 0 {
		var needed []bool
		var cols []int
		for i := range schema.Len() {
			needed = append(needed, proj&(1<<i) != 0)
			if proj&(1<<i) != 0 {
				cols = append([]int{i}, cols...)
			}
		}
		if proj&0x80 != 0 && len(cols) > 0 {
			cols = append(cols, cols[0])
			fast.DecodeColumns(cols)
			general.DecodeColumns(cols)
			width = len(cols)
		} else {
			fast.SetColumns(needed)
			general.SetColumns(needed)
		}
	}
	general.ops = nil
	return fast, general, width
}

// sameDecode fails t unless two decodes of rec gave the same rows or the
// same error of the same column.
func sameDecode(t *testing.T, rec string, ferr, gerr error, fb, gb *row.Batch) {
	t.Helper()
	if (ferr == nil) != (gerr == nil) || (ferr != nil && ferr.Error() != gerr.Error()) {
		t.Fatalf("%q: fast %v, general %v", rec, ferr, gerr)
	}
	var fde, gde *connector.DecodeError
	if errors.As(ferr, &fde) != errors.As(gerr, &gde) || (fde != nil && fde.Column != gde.Column) {
		t.Fatalf("%q: fast %#v, general %#v", rec, ferr, gerr)
	}
	if fb.Len() != gb.Len() {
		t.Fatalf("%q: fast %d rows, general %d", rec, fb.Len(), gb.Len())
	}
	for k := range fb.Changes {
		f, g := fb.Changes[k].Row, gb.Changes[k].Row
		for i := range g {
			if !row.Equal(f[i], g[i]) || f[i].IsNull() != g[i].IsNull() {
				t.Fatalf("%q column %d: fast %v, general %v", rec, i, f[i], g[i])
			}
		}
	}
}

// FuzzSwarInt checks the word-at-a-time integer reader against
// strconv on any text followed by a delimiter.
func FuzzSwarInt(f *testing.F) {
	for _, s := range []string{"0", "7", "-12", "+345", "12345678", "123456789", "1234567890123456", "12345678901234567", "99999999", "-", "", "1a", "00000001"} {
		f.Add(s + ",xxxxxxxxxxxxxxxxxx")
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, end, ok := swarInt(s, 0)
		if !ok {
			return
		}
		text := s[:end]
		want, err := strconv.ParseInt(text, 10, 64)
		if err != nil || want != v {
			t.Fatalf("%q: swarInt read %q as %d, strconv %d, %v", s, text, v, want, err)
		}
		if end < len(s) && s[end] >= '0' && s[end] <= '9' {
			t.Fatalf("%q: swarInt stopped at a digit, byte %d", s, end)
		}
	})
}
