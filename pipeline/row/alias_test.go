package row

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDecodeRowText: a row decoded with its strings in a Text, or each
// in an allocation of its own (no Text), equals CopyRow's, for every
// kind of value, and keeps none of the encoding's bytes (they are
// overwritten after); a width that differs is an error.
func TestDecodeRowText(t *testing.T) {
	rows := []Row{
		{},
		{NullValue},
		{BigIntValue(-7), IntValue(3), StringValue(""), StringValue("bid"), TimestampValue(1 << 50), DoubleValue(2.5)},
		{BytesValue([]byte{0, 1, 2}), DecimalValue(12345, 2), Decimal128Value(Int128{Hi: 9, Lo: 1}, 3), BoolValue(true), DateValue(-3)},
		{ArrayValue([]Value{StringValue("a"), NullValue}), StructValue([]Value{BigIntValue(1), StringValue("b")})},
		{StringValue(strings.Repeat("long ", 2000)), StringValue("after a string larger than a chunk's quarter")},
	}
	// Into shared chunks, and with no Text (state.DecodeRowInto), each
	// string a copy of its own: either way b can be written over after.
	var text Text
	for k, into := range []*Text{&text, nil} {
		for i, r := range rows {
			testDecodeRowText(t, fmt.Sprintf("text %d row %d", k, i), r, into)
		}
	}
	b := AppendRow(nil, Row{BigIntValue(1), BigIntValue(2)})
	if err := DecodeRowText(make(Row, 3), b, &text); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("2 columns into 3: %v, want ErrCorrupt", err)
	}
}

func testDecodeRowText(t *testing.T, name string, r Row, text *Text) {
	t.Helper()
	b := AppendRow(nil, r)
	want, err := CopyRow(b)
	if err != nil {
		t.Fatal(err)
	}
	got := make(Row, len(r))
	if err := DecodeRowText(got, b, text); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for j := range b {
		b[j] = 0xff
	}
	for j := range want {
		if got[j].Type() != want[j].Type() || !Equal(got[j], want[j]) || got[j].s != want[j].s {
			t.Fatalf("%s column %d: %v, want %v", name, j, got[j], want[j])
		}
	}
}
