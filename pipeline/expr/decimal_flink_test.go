package expr

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// TestDecimalFlink runs decimalCases on Flink itself (a filesystem csv
// table holding decimalRow, batch mode, one SELECT of every expression
// and its TYPEOF) and checks that Flink still gives what the table
// records; TestDecimal38 holds etld to the table.
func TestDecimalFlink(t *testing.T) {
	testenv.Flink(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(data, []byte(decimalRow+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cols, fields []string
	for i, tc := range decimalCases {
		cols = append(cols, fmt.Sprintf("  %s AS e%d, TYPEOF(%s) AS t%d", tc.expr, i, tc.expr, i))
	}
	for _, f := range dec38Table.Schema.Fields {
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	script := filepath.Join(dir, "decimal.sql")
	text := fmt.Sprintf("SET 'execution.runtime-mode' = 'batch';\n"+
		"CREATE TABLE t (%s) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n"+
		"SELECT\n%s\nFROM t;\n", strings.Join(fields, ", "), data, strings.Join(cols, ",\n"))
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	res := testenv.RunFlink(t, 5*time.Minute, script)[0]
	if res.Err != "" {
		t.Fatalf("Flink failed:\n%s", res.Err)
	}
	line := strings.TrimSpace(res.Out)
	inner, ok := strings.CutPrefix(line, "+I[")
	inner, ok2 := strings.CutSuffix(inner, "]")
	got := splitPrinted(inner)
	if !ok || !ok2 || len(got) != 2*len(decimalCases) {
		t.Fatalf("Flink printed %q, want one +I row of %d fields", line, 2*len(decimalCases))
	}
	for i, tc := range decimalCases {
		if v, typ := got[2*i], got[2*i+1]; v != tc.value || typ != tc.typ {
			t.Errorf("%s: Flink gives %s %s, the table records %s %s", tc.expr, typ, v, tc.typ, tc.value)
		}
	}
}

// splitPrinted splits the fields of a printed row at ", " outside
// parentheses (a TYPEOF such as DECIMAL(21, 4) has one inside).
func splitPrinted(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				out = append(out, s[start:i])
				start = i + 2
			}
		}
	}
	return append(out, s[start:])
}
