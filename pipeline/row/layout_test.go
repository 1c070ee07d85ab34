package row

import (
	"strings"
	"testing"
)

// layoutValues are codecValues and the values no column of a plain type
// holds: TIME, a wide DECIMAL, a nested ARRAY and a long string.
func layoutValues() []Value {
	arr := ArrayValue([]Value{BigIntValue(1), StringValue("x")})
	wide := Decimal128Value(Int128{Hi: 3, Lo: 7}, 4)
	return append(codecValues(), TimeOfDayValue(3_600_000_000), wide, arr, StringValue(strings.Repeat("long ", 2000)))
}

// A row reads back identical from every layout: columns of its values'
// own types, of no known type, and of other types than its values'
// (the tagged fallback), with text copied and aliased.
func TestLayoutRoundTrip(t *testing.T) {
	vals := layoutValues()
	own := make([]TypeID, len(vals))
	other := make([]TypeID, len(vals))
	for i, v := range vals {
		own[i] = v.id
		other[i] = String
		if v.id == String {
			other[i] = BigInt
		}
	}
	for _, tc := range []struct {
		name string
		ids  []TypeID
	}{{"own types", own}, {"unknown types", make([]TypeID, len(vals))}, {"other types", other}} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLayout(tc.ids)
			b := l.Append([]byte("prefix"), Row(vals))
			enc := b[len("prefix"):]
			var text Text
			copied, viewed := make(Row, len(vals)), make(Row, len(vals))
			l.Decode(copied, enc, &text)
			l.Decode(viewed, enc, nil)
			for i := range enc {
				enc[i] = 0xee // a copy must not see the bytes change
			}
			for i, want := range vals {
				if !same(copied[i], want) {
					t.Errorf("column %d copied: got %#v, want %#v", i, copied[i], want)
				}
			}
			l.Decode(viewed, l.Append(nil, Row(vals)), nil)
			for i, want := range vals {
				if !same(viewed[i], want) {
					t.Errorf("column %d viewed: got %#v, want %#v", i, viewed[i], want)
				}
			}
		})
	}
}

// Each row of a run of them reads back from where the previous one
// ended: a row's size is what Append added.
func TestLayoutRowsOneAfterAnother(t *testing.T) {
	l := NewLayout([]TypeID{BigInt, String, Timestamp, Double})
	rows := []Row{
		{BigIntValue(1), StringValue("a"), TimestampValue(5), DoubleValue(0.5)},
		{NullValue, NullValue, NullValue, NullValue},
		{BigIntValue(-1), StringValue(""), NullValue, IntValue(3)},
		{IntValue(2), StringValue("zz"), TimestampLTZValue(9), DoubleValue(-1)},
	}
	var b []byte
	var ends []int
	for _, r := range rows {
		b = l.Append(b, r)
		ends = append(ends, len(b))
	}
	var text Text
	start := 0
	for i, want := range rows {
		got := make(Row, 4)
		l.Decode(got, b[start:ends[i]], &text)
		for c := range want {
			if !same(got[c], want[c]) {
				t.Errorf("row %d column %d: got %#v, want %#v", i, c, got[c], want[c])
			}
		}
		start = ends[i]
	}
	if n := len(l.Append(nil, rows[0])); n != 1+1+2+8+8 {
		t.Errorf("row 0 takes %d bytes, want a header byte, a varint for the BIGINT, 2 for the string and 8 each for the TIMESTAMP and DOUBLE", n)
	}
}

// DecodeFirst reads a row's leading columns as Decode does and leaves
// the rest of the destination untouched, whatever their forms (typed,
// tagged, NULL); the bytes Size counts for them are all it reads.
func TestLayoutDecodeFirst(t *testing.T) {
	vals := layoutValues()
	ids := make([]TypeID, len(vals))
	for i, v := range vals {
		ids[i] = v.id
	}
	ids[1] = String // a tagged value among the first columns
	vals[2] = NullValue
	l := NewLayout(ids)
	enc := l.Append(nil, Row(vals))
	marker := StringValue("untouched")
	for n := 0; n <= len(vals); n++ {
		got := make(Row, len(vals))
		for i := range got {
			got[i] = marker
		}
		l.DecodeFirst(got, n, enc, nil)
		if n == len(vals) && l.Size(enc, n) != len(enc) {
			t.Fatalf("size of the whole row %d, want %d", l.Size(enc, n), len(enc))
		}
		prefix := append([]byte(nil), enc[:l.Size(enc, n)]...)
		cut := make(Row, len(vals))
		l.DecodeFirst(cut, n, prefix, nil)
		for i := range n {
			if !same(cut[i], vals[i]) {
				t.Fatalf("first %d of the cut encoding: column %d: got %#v, want %#v", n, i, cut[i], vals[i])
			}
		}
		for i := range vals {
			want := marker
			if i < n {
				want = vals[i]
			}
			if !same(got[i], want) {
				t.Fatalf("first %d: column %d: got %#v, want %#v", n, i, got[i], want)
			}
		}
	}
}

// Text shares chunks between short strings and gives a long one its own
// allocation.
func TestTextChunks(t *testing.T) {
	var text Text
	a := text.String([]byte("abc"))
	b := text.String([]byte("de"))
	if a != "abc" || b != "de" {
		t.Fatalf("got %q %q", a, b)
	}
	if cap(text.buf) != textChunk || len(text.buf) != 5 {
		t.Errorf("chunk of %d bytes holding %d, want %d holding 5", cap(text.buf), len(text.buf), textChunk)
	}
	long := text.String([]byte(strings.Repeat("x", textChunk)))
	if len(long) != textChunk || len(text.buf) != 5 {
		t.Errorf("a long string went into the chunk (%d bytes held)", len(text.buf))
	}
	if text.String(nil) != "" {
		t.Error("empty string")
	}
}

// AppendWithout writes the skipped column NULL, whatever its value or
// form (typed, tagged), and the row's other columns as Append does.
func TestLayoutAppendWithout(t *testing.T) {
	l := NewLayout([]TypeID{BigInt, String, Timestamp})
	for _, tc := range []struct {
		name string
		r    Row
		skip int
	}{
		{"typed", Row{BigIntValue(7), StringValue("ab"), TimestampValue(99)}, 2},
		{"tagged", Row{IntValue(7), StringValue("ab"), TimestampValue(99)}, 0},
		{"string", Row{BigIntValue(7), StringValue("ab"), TimestampValue(99)}, 1},
		{"none", Row{BigIntValue(7), StringValue("ab"), TimestampValue(99)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := append(Row(nil), tc.r...)
			if tc.skip >= 0 {
				want[tc.skip] = NullValue
			}
			enc := l.AppendWithout(nil, tc.r, tc.skip)
			if plain := l.Append(nil, want); string(enc) != string(plain) {
				t.Fatalf("%x, want Append's of the row with the column NULL %x", enc, plain)
			}
			got := make(Row, 3)
			l.Decode(got, enc, nil)
			for c := range want {
				if !same(got[c], want[c]) {
					t.Errorf("column %d: got %#v, want %#v", c, got[c], want[c])
				}
			}
		})
	}
}
