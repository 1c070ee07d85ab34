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
		// Without a length CHAR and BINARY are CHAR(1) and BINARY(1), as
		// Calcite types them; VARCHAR and VARBINARY are unbounded.
		"CAST(a AS CHAR)":          "CAST(a AS CHAR(1))",
		"CAST(a AS character)":     "CAST(a AS CHAR(1))",
		"CAST(a AS CHARACTER(4))":  "CAST(a AS CHAR(4))",
		"CAST(a AS CHAR NOT NULL)": "CAST(a AS CHAR(1) NOT NULL)",
		"TRY_CAST(a AS BINARY)":    "TRY_CAST(a AS BINARY(1))",
		"CAST(a AS VARCHAR)":       "CAST(a AS STRING)",
		"CAST(a AS VARBINARY)":     "CAST(a AS BYTES)",
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
