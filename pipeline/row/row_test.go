package row

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestParseType(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"int", "INT", ""},
		{"BIGINT NOT NULL", "BIGINT NOT NULL", ""},
		{"decimal(10, 2)", "DECIMAL(10, 2)", ""},
		{"VARCHAR(5)", "VARCHAR(5)", ""},
		{"TIMESTAMP(6)", "TIMESTAMP(6)", ""},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(3)", ""},
		{"TIMESTAMP_LTZ", "TIMESTAMP_LTZ(3)", ""},
		{"DECIMAL(39, 2)", "", "precision must be between 1 and 38"},
		{"DECIMAL(20, 12)", "DECIMAL(20, 12)", ""},
		{"DECIMAL(38, 38)", "DECIMAL(38, 38)", ""},
		{"DECIMAL(4, 5)", "", "scale 5 exceeds precision 4"},
		{"INT(3)", "", "too many parameters"},
		{"FLAOT", "", "unknown type"},
		{"DATE WITH LOCAL TIME ZONE", "", "applies only to TIMESTAMP"},
		{"VARCHAR(x)", "", "not a non-negative integer"},
		{"", "", "missing type"},
	}
	for _, c := range cases {
		got, err := ParseType(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseType(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("ParseType(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestPrintFormIsJavas(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{NullValue, "null"},
		{BoolValue(true), "true"},
		{DoubleValue(1), "1.0"},
		{DoubleValue(35.8), "35.8"},
		{DoubleValue(1e7), "1.0E7"},
		{DoubleValue(1.5e-4), "1.5E-4"},
		{DoubleValue(math.Inf(-1)), "-Infinity"},
		{FloatValue(0.1), "0.1"},
		{DecimalValue(-5, 2), "-0.05"},
		{DecimalValue(12345, 2), "123.45"},
		{TimestampValue(1_700_000_000_000_000), "2023-11-14T22:13:20"},
		{TimestampValue(1_700_000_000_123_000), "2023-11-14T22:13:20.123"},
		{TimestampValue(1_699_999_980_000_000), "2023-11-14T22:13"},
		{TimestampLTZValue(1_700_000_000_000_000), "2023-11-14T22:13:20Z"},
		{DateValue(19675), "2023-11-14"},
		{BytesValue([]byte{1, 255}), "[1, -1]"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v prints %q, want %q", c.v, got, c.want)
		}
	}
	if got := (Change{Kind: UpdateBefore, Row: Row{StringValue("a"), BigIntValue(1)}}).String(); got != "-U[a, 1]" {
		t.Errorf("change prints %q", got)
	}
}

func TestParseTextRoundTrip(t *testing.T) {
	cases := []struct {
		text string
		typ  string
		want string // the SQL text form after parsing
		err  bool
	}{
		{" 42 ", "INT", "42", false},
		{"2147483648", "INT", "", true},
		{"12x", "INT", "", true},
		{"-1.005", "DECIMAL(6, 2)", "-1.01", false},
		{"123456.7", "DECIMAL(6, 2)", "", true},
		{"yes", "BOOLEAN", "TRUE", false},
		{"2024-01-02 10:00:00.5", "TIMESTAMP(3)", "2024-01-02 10:00:00.500", false},
		{"2024-01-02T10:00:00+01:00", "TIMESTAMP_LTZ(3)", "2024-01-02 09:00:00.000", false},
		{"2024-02-30", "DATE", "", true},
		{" padded ", "STRING", " padded ", false},
	}
	for _, c := range cases {
		typ, err := ParseType(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseText(c.text, typ)
		if c.err {
			if err == nil {
				t.Errorf("ParseText(%q, %s) = %v, want an error", c.text, c.typ, v)
			}
			continue
		}
		if err != nil || v.Text(typ) != c.want {
			t.Errorf("ParseText(%q, %s) = %q, %v; want %q", c.text, c.typ, v.Text(typ), err, c.want)
		}
	}
}

func TestKeysAndOrder(t *testing.T) {
	k := func(vs ...Value) string { return string(KeyOf(nil, Row(vs), []int{0, 1}[:len(vs)])) }
	if k(StringValue("ab"), StringValue("c")) == k(StringValue("a"), StringValue("bc")) {
		t.Error("key encoding is ambiguous across column boundaries")
	}
	if k(DoubleValue(0)) != k(DoubleValue(math.Copysign(0, -1))) {
		t.Error("-0 and +0 group apart")
	}
	if k(NullValue) == k(StringValue("")) {
		t.Error("NULL and '' share a key")
	}
	if Compare(IntValue(3), BigIntValue(10)) >= 0 || Compare(NullValue, IntValue(0)) >= 0 || Compare(DoubleValue(2.5), IntValue(2)) <= 0 {
		t.Error("Compare orders numbers or NULL wrongly")
	}
}

// A detached row equals the original and shares neither its slice nor
// its strings' memory.
func TestDetach(t *testing.T) {
	block := "abcdefgh"
	r := Row{StringValue(block[2:5]), BigIntValue(7), NullValue}
	d := Detach(r)
	if len(d) != len(r) || d[0].Str() != "cde" || d[1].Int64() != 7 || !d[2].IsNull() {
		t.Fatalf("Detach(%v) = %v", r, d)
	}
	if &d[0] == &r[0] {
		t.Error("the copy shares the row's slice")
	}
	if unsafe.StringData(d[0].Str()) == unsafe.StringData(r[0].Str()) {
		t.Error("the copy's string points into the original's memory")
	}
}
