package csv

import (
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// skipSchema has timestamps (fastTimestamp) and columns a projection
// leaves runs of (skipFields).
var skipSchema = func() row.Schema {
	s, err := testenv.ParseSchema("a BIGINT", "b STRING", "t TIMESTAMP(3)", "c BIGINT", "u TIMESTAMP_LTZ(3) NOT NULL", "d STRING", "e BIGINT")
	if err != nil {
		panic(err)
	}
	return s
}()

// FuzzDecodeLines decodes a run of lines with one decoder, as a file's
// worker does (DecodeLine, its timestamps' minute kept from line to
// line), against the general path's DecodeString of each line: the same
// rows, or the same errors naming the same columns.
func FuzzDecodeLines(f *testing.F) {
	ts := "2024-01-01 00:00:00.000"
	for _, s := range []string{
		"1,abcdefgh,2024-01-01 00:00:00.000,123456,2024-01-01 00:00:00.001,xyz,9\n2,abc,2024-01-01 00:00:00.002,1,2024-01-01 00:00:00.003,x,9\n",
		"1,a,2024-01-01 00:00:59.999,2,2024-01-01 00:00:60.000,b,3\n1,a,2024-01-01 00:00:01.5,2,2024-01-01 00:00:01.500000,b,3\n",
		"1,a,2024-01-01 00:01:00.000,2,2024-01-01 00:01:00.00x,b,3\n1,a,2024-01-01 00:01:00.000 ,2,2024-01-01 00:01:00.000,b,3\n",
		"1,a," + ts + ",2," + ts + ",b,3\r\n1,a," + ts + ",2," + ts + "\n1,a," + ts + ",2," + ts + ",b,3,4\n",
		"1,\"a,b\"," + ts + ",2," + ts + ",b,3\n1,a\tb\x00c," + ts + ",2," + ts + ",b\r3\n",
		"12345678901,abcdefghijklmnopqrstuvwxyz0123456789,2024-02-29 23:59:59.999,1234,2024-02-29 23:59:59.999,long string here too,7\n",
		"1,a,NULL,2,NULL,b,3\n1,a,,2,,b,3\n1,a," + ts + ",2," + ts + ",b," + ts + "\n",
		"1,a,2024-13-01 00:00:00.000,2,2024-01-01 24:00:00.000,b,3\n1,a,2024-01-01 00:00:00.000,2,2024-01-01 00:00:00:000,b,3\n",
	} {
		for _, mode := range []byte{0, fuzzNullLit, fuzzEmptyNull, fuzzEscape, fuzzNoQuote, fuzzIgnore} {
			for _, proj := range []byte{0, 0x14, 0x04, 0x10, 0x40, 0x01, 0x80 | 0x14} {
				f.Add(s, mode, proj, byte(','))
			}
			f.Add(strings.ReplaceAll(s, ",", "\t"), mode, byte(0x14), byte('\t'))
			f.Add(strings.ReplaceAll(s, ",", ";"), mode, byte(0x14), byte(';'))
		}
	}
	f.Fuzz(func(t *testing.T, data string, mode, proj, delim byte) {
		fast, general, width := fastAndGeneralOf(skipSchema, mode, proj, delim)
		if fast == nil {
			return
		}
		for off := 0; off < len(data); {
			rest := data[off:]
			fb, gb := row.NewBatch(1, width), row.NewBatch(1, width)
			n, ferr := fast.DecodeLine(rest, fb)
			line, want := rest, len(rest)
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				line, want = rest[:nl], nl+1
			}
			gerr := general.DecodeString(line, gb)
			sameDecode(t, line, ferr, gerr, fb, gb)
			if ferr == nil && n != want {
				t.Fatalf("%q: DecodeLine took %d bytes, the line has %d", rest, n, want)
			}
			off += want
		}
	})
}

// TestSkipFields: the offset after a run of skipped fields, in a chunk
// of 32 bytes, across chunks, and in the words after the last chunk; and
// the byte loop left to decide at a quote, a line break, a control
// character or the end of the words.
func TestSkipFields(t *testing.T) {
	d, err := NewDecoder(Options{EscapeCharacter: `\`}, skipSchema)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat(" ", 40) // whole words after any record
	for _, tc := range []struct {
		s    string
		k    int
		want int // -1: not ok
	}{
		{"1,22,333,", 3, 9},
		{"1,22,333,", 1, 2},
		{"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,", 19, 38},
		{"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijkl,x,", 2, 51},
		{strings.Repeat("x", 70) + ",", 1, 71},
		{"1,\"2\",3,", 3, -1},
		{"1,2\n3,4,", 3, -1},
		{"1,2\r3,4,", 3, -1},
		{"1,2\x01,3,", 3, -1},
		{"1,2\\,3,", 3, -1},
		{"1,2,\"3,", 2, 4}, // the quote after the run's end
		{"1,2,3\n", 3, -1}, // the last field ends the line
		// In the first word: its delimiters before a stop only.
		{"1,2,3,4,", 4, 8},
		{"1,2,3,4,5,6,", 4, 8},
		{"1,2\n3,4,", 1, 2},
		{"1,2\n3,4,", 2, -1},
		{"\n1,2,3,4,", 1, -1},
		{"12,\"3,4,", 1, 3},
		{"12\",3,4,", 1, -1},
		{"1234567,89,", 2, 11}, // one in the first word, one after
	} {
		got, ok := d.skipFields(tc.s+pad, 0, tc.k)
		if !ok {
			got = -1
		}
		if got != tc.want {
			t.Errorf("skipFields(%q, %d) = %d, want %d", tc.s, tc.k, got, tc.want)
		}
	}
	// Without an escape, a backslash is a field's byte; the quote
	// still stops the run.
	plain, err := NewDecoder(Options{}, skipSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := plain.skipFields("1,2\\,3,"+pad, 0, 3); !ok || got != 7 {
		t.Errorf("skipFields without an escape over a backslash = %d, %v, want 7", got, ok)
	}
	if _, ok := plain.skipFields("1,\"2\",3,"+pad, 0, 3); ok {
		t.Errorf("skipFields without an escape over a quote: ok")
	}
	// Near the end of the text, no whole word: the byte loop's.
	if _, ok := d.skipFields("1,2,", 0, 2); ok {
		t.Errorf("skipFields without a whole word: ok")
	}
}

// TestFastTimestamp: a timestamp of the minute last read is read from
// its words, as the timestamp reader reads it; one of another minute, or
// of another form, is left to it.
func TestFastTimestamp(t *testing.T) {
	d, err := NewDecoder(Options{}, skipSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.fastTimestamp("2024-01-01 00:00:00.000,", 0); ok {
		t.Fatal("read before any minute was")
	}
	b := row.NewBatch(1, skipSchema.Len())
	if err := d.DecodeString("1,a,2024-03-04 05:06:07.089,2,2024-03-04 05:06:07.089,b,3", b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"2024-03-04 05:06:59.999,", true},
		{"2024-03-04 05:06:00.000\n", true},
		{"2024-03-04 05:06:00.000\r\n", true},
		{"2024-03-04 05:06:60.000,", false},
		{"2024-03-04 05:07:00.000,", false},
		{"2024-03-04 05:06:00.0000", false},
		{"2024-03-04 05:06:00,000,", false},
		{"2024-03-04 05:06:0x.000,", false},
		{"2024-03-04 05:06:00.00x,", false},
		{"2024-03-04 05:06:00.000 ", false},
		{"2024-03-04 05:06:00.000", false}, // no byte after it
	} {
		m, ok := d.fastTimestamp(tc.s, 0)
		if ok != tc.ok {
			t.Errorf("fastTimestamp(%q) ok = %v, want %v", tc.s, ok, tc.ok)
			continue
		}
		var r row.TimestampReader
		if want, _ := r.Micros(tc.s[:23]); ok && m != want {
			t.Errorf("fastTimestamp(%q) = %d, the reader %d", tc.s, m, want)
		}
	}
}
