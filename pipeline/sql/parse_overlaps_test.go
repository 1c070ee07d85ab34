package sql

import (
	"strings"
	"testing"
)

// TestParseOverlaps: OVERLAPS reads as Calcite's expansion, an INTERVAL
// as a period's length, and wants a period on each side.
func TestParseOverlaps(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"(a, b) OVERLAPS (c, d)",
			"CASE WHEN a <= b THEN b ELSE a END >= CASE WHEN c <= d THEN c ELSE d END AND CASE WHEN c <= d THEN d ELSE c END >= CASE WHEN a <= b THEN a ELSE b END"},
		{"(a, INTERVAL '1' HOUR) OVERLAPS (c, d)", "CASE WHEN a <= a + INTERVAL '1' HOUR THEN a + INTERVAL '1' HOUR ELSE a END >= "},
		{"(a, 2 * INTERVAL '1' HOUR) OVERLAPS (c, d)", "THEN a + 2 * INTERVAL '1' HOUR ELSE"},
		{"a OVERLAPS (c, d)", "error: needs a period (start, end) or (start, interval) on its left"},
		{"(a, b) OVERLAPS (c, d, e)", "error: on its right"},
		{"(a, b) OVERLAPS c", "error: on its right"},
	} {
		e, err := ParseExpr(tc.src)
		if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want an error with %q", tc.src, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got := Format(e); !strings.Contains(got, tc.want) {
			t.Errorf("%s: reads as %s, want it to hold %s", tc.src, got, tc.want)
		}
	}
}
