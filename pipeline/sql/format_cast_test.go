package sql

import "testing"

// TestFormatFixedWidthCast: a CAST to CHAR(n) or BINARY(n) is written as
// such, not as the VARCHAR(n) or VARBINARY(n) etld types it as, since it
// pads where those do not.
func TestFormatFixedWidthCast(t *testing.T) {
	for src, want := range map[string]string{
		"CAST(a AS char(3))":       "CAST(a AS CHAR(3))",
		"CAST(a AS VARCHAR(3))":    "CAST(a AS VARCHAR(3))",
		"TRY_CAST(a AS BINARY(2))": "TRY_CAST(a AS BINARY(2))",
		"CAST(a AS VARBINARY(2))":  "CAST(a AS VARBINARY(2))",
	} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := Format(e); got != want {
			t.Errorf("%s: formats as %s, want %s", src, got, want)
		}
	}
}
