package csv

import (
	"errors"
	"strconv"
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
		"- ,a,2,2.5,3,1.25,b", "1\x00,a,2,2.5,3,1.25,b", "1;a;2;2.5;3;1.25;b",
	} {
		for _, mode := range []byte{0, fuzzNullLit, fuzzEmptyNull, fuzzEscape, fuzzNoQuote | fuzzEmptyNull, fuzzComments | fuzzIgnore, fuzzIgnore | fuzzNullLit} {
			f.Add(s, mode, byte(0), byte(','))
			f.Add(s, mode, byte(0x55), byte(';'))
			f.Add(s, mode, byte(0x80|0x2b), byte(','))
		}
	}
	schema := testenv.Schema(f, "a BIGINT", "b STRING", "c INT", "d DOUBLE", "e BIGINT NOT NULL", "f DECIMAL(10,2)", "g STRING NOT NULL")
	f.Fuzz(func(t *testing.T, rec string, mode, proj, delim byte) {
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
			return // a delimiter the options refuse
		}
		general, _ := NewDecoder(opts, schema)
		// proj's low bits pick columns; its high bit reads them as a
		// ColumnDecoder (in reverse order, the first one twice) rather
		// than a projection.
		width := schema.Len()
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
		fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
		ferr := fast.DecodeString(rec, fb)
		gerr := general.DecodeString(rec, gb)
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
	})
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
