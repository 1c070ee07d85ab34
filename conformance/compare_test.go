package conformance

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

func TestChangeLines(t *testing.T) {
	got := ChangeLines("+I[1, two\nlines]\n-U[2, x]\r\n+U[3, y]\n")
	want := []string{"+I[1, two\nlines]", "-U[2, x]\r", "+U[3, y]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ChangeLines = %q, want %q", got, want)
	}
}

func TestFold(t *testing.T) {
	schema := row.NewSchema(row.Field{Name: "k", Type: row.Of(row.String)}, row.Field{Name: "d", Type: row.Of(row.Double)})
	tests := []struct {
		name     string
		lines    []string
		final    string
		kinds    string
		problems int
	}{
		{"updates fold", []string{"+I[a, 1.0]", "-U[a, 1.0]", "+U[a, 2.0]"}, "[a, 2]", "+I -U +U", 0},
		{"double at 12 digits", []string{"+I[a, 0.30000000000000004]", "-D[a, 0.3]"}, "", "+I -D", 0},
		{"retract of a missing row", []string{"-D[b, 1.0]"}, "", "-D", 1},
		{"duplicates count", []string{"+I[a, 1.0]", "+I[a, 1.0]", "-D[a, 1.0]"}, "[a, 1]", "+I -D", 0},
	}
	for _, tt := range tests {
		c := Fold(tt.lines, schema)
		if got := strings.Join(c.Final, "|"); got != tt.final {
			t.Errorf("%s: final %q, want %q", tt.name, got, tt.final)
		}
		if got := strings.Join(c.Kinds, " "); got != tt.kinds {
			t.Errorf("%s: kinds %q, want %q", tt.name, got, tt.kinds)
		}
		if len(c.Problems) != tt.problems {
			t.Errorf("%s: problems %q, want %d", tt.name, c.Problems, tt.problems)
		}
	}
}

func TestCompareFailures(t *testing.T) {
	fail := Expected{Failed: true, Err: "boom"}
	if v := Compare(fail, Outcome{Lines: []string{"+I[1]"}}, false, ""); v.Same {
		t.Error("a Flink failure matched rows")
	}
	if v := Compare(Expected{Lines: []string{"+I[1]"}}, Outcome{Lines: []string{"+I[2]"}}, false, ""); v.Same {
		t.Error("different rows matched")
	}
	if v := Compare(Expected{Lines: []string{"a", "b"}}, Outcome{Lines: []string{"b", "a"}}, true, ""); !v.Same {
		t.Errorf("a sink's lines in another order differ: %s", v.Why)
	}
}
