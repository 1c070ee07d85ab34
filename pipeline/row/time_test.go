package row

import "testing"

// TestTime: TIME's text forms as Flink 2.3 gives them (CAST to STRING and
// the print connector's LocalTime.toString), read back from text.
func TestTime(t *testing.T) {
	for _, tc := range []struct {
		typ, in, text, print string
	}{
		{"TIME", "10:30:45", "10:30:45", "10:30:45"},
		{"TIME(0)", "10:30:45.5", "10:30:45", "10:30:45"},
		{"TIME(3)", "10:30:45.123", "10:30:45.123", "10:30:45.123"},
		{"TIME(3)", "10:30:45.123456", "10:30:45.123", "10:30:45.123"},
		{"TIME(6)", "10:30:45.123456", "10:30:45.123", "10:30:45.123"},
		{"TIME(3)", "10:30:00", "10:30:00.0", "10:30"},
		{"TIME", "0:00:00", "00:00:00", "00:00"},
		{"TIME(3)", "23:59:59.999", "23:59:59.999", "23:59:59.999"},
		{"TIME(3)", "07:05:09.1", "07:05:09.1", "07:05:09.100"},
	} {
		typ, err := ParseType(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseText(tc.in, typ)
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.in, err)
			continue
		}
		if got := v.Text(typ); got != tc.text {
			t.Errorf("%s %s: text %s, want %s", tc.typ, tc.in, got, tc.text)
		}
		if got := v.String(); got != tc.print {
			t.Errorf("%s %s: print %s, want %s", tc.typ, tc.in, got, tc.print)
		}
		if back := NewDecoder(AppendValue(nil, v)).Value(); !Equal(back, v) {
			t.Errorf("%s %s: codec gives %v", tc.typ, tc.in, back)
		}
	}
	for _, bad := range []string{"24:00:00", "10:60:00", "10:30:61", "10:3:00", "x", "10:30:45.", "10"} {
		if _, err := ParseText(bad, Type{ID: Time}); err == nil {
			t.Errorf("%q read as a TIME", bad)
		}
	}
	if Compare(TimeOfDayValue(1000), TimeOfDayValue(2000)) >= 0 {
		t.Error("TIME values out of order")
	}
}
