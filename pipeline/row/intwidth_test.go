package row

import "testing"

// TestTinyIntSmallInt: TINYINT and SMALLINT are their own types, named as
// written, with Flink's ranges when text is read into them.
func TestTinyIntSmallInt(t *testing.T) {
	for _, tc := range []struct {
		text, name string
		bits       int
		min, max   string
	}{
		{"TINYINT", "TINYINT", 8, "-128", "127"},
		{"smallint not null", "SMALLINT NOT NULL", 16, "-32768", "32767"},
		{"INT", "INT", 32, "-2147483648", "2147483647"},
		{"INTEGER", "INT", 32, "-2147483648", "2147483647"},
	} {
		typ, err := ParseType(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if typ.String() != tc.name || typ.IntBits() != tc.bits {
			t.Errorf("%s: got %s of %d bits, want %s of %d", tc.text, typ, typ.IntBits(), tc.name, tc.bits)
		}
		for _, edge := range []string{tc.min, tc.max} {
			if v, err := ParseText(edge, typ); err != nil || v.Text(typ) != edge {
				t.Errorf("%s: %s read as %v, %v", tc.text, edge, v, err)
			}
		}
		for _, past := range []string{tc.min + "1", tc.max + "0"} {
			if _, err := ParseText(past, typ); err == nil {
				t.Errorf("%s: %s read without an error", tc.text, past)
			}
		}
	}
	if got := TinyInt.WrapInt(1000); got != -24 {
		t.Errorf("TINYINT 1000 wraps to %d, want -24 (Flink's CAST)", got)
	}
	if got := SmallInt.WrapInt(40000); got != -25536 {
		t.Errorf("SMALLINT 40000 wraps to %d, want -25536", got)
	}
	if TinyInt == SmallInt || TinyInt == Of(Int) {
		t.Error("TINYINT, SMALLINT and INT must be different types")
	}
}
