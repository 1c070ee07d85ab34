package expr

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/sql"
)

// parsedForms are the rows of the function table that the parser turns
// into expressions of their own (not calls of the function library),
// each with an expression that must compile.
var parsedForms = map[string]string{
	"CAST":       "CAST(n AS STRING)",
	"TRY_CAST":   "TRY_CAST(id AS INT)",
	"EXTRACT":    "EXTRACT(MILLISECOND FROM ts)",
	"TRIM":       "TRIM(BOTH 'x' FROM id)",
	"CASE":       "CASE WHEN n > 0 THEN 1 ELSE 0 END",
	"IS JSON":    "js IS JSON OBJECT",
	"OVERLAPS":   "(ts, INTERVAL '1' HOUR) OVERLAPS (ts, ts)",
	"SIMILAR TO": "id NOT SIMILAR TO '(a|b)%' ESCAPE '!'",
}

// plannedForms are the rows the planner handles (window table functions
// and legacy group windows, OVER's row functions, GROUPING SETS,
// MATCH_RECOGNIZE), tested with the planner.
var plannedForms = map[string]bool{
	"TUMBLE": true, "HOP": true, "CUMULATE": true, "SESSION": true,
	"TUMBLE_START": true, "TUMBLE_END": true, "TUMBLE_ROWTIME": true, "TUMBLE_PROCTIME": true,
	"HOP_START": true, "HOP_END": true, "HOP_ROWTIME": true, "HOP_PROCTIME": true,
	"SESSION_START": true, "SESSION_END": true, "SESSION_ROWTIME": true,
	"LAG": true, "LEAD": true, "ROW_NUMBER": true, "RANK": true, "DENSE_RANK": true,
	"NTILE": true, "PERCENT_RANK": true, "CUME_DIST": true,
	"GROUPING": true, "GROUPING_ID": true, "GROUP_ID": true,
	"FIRST": true, "LAST": true, "PREV": true, "NEXT": true, "MATCH_ROWTIME": true,
}

// refusedInLibrary are registered only to be refused with a reason.
var refusedInLibrary = map[string]bool{}

// TestFunctionTable keeps docs/sql.md's table of Flink's functions true:
// every row said to run is in the function library (or a form the parser
// or the planner takes), and every row said not to run is not.
func TestFunctionTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	intro, rest, ok := strings.Cut(string(doc), "<!-- function-table -->")
	table, _, ok2 := strings.Cut(rest, "<!-- /function-table -->")
	if !ok || !ok2 {
		t.Fatal("docs/sql.md has no function table between its markers")
	}
	rows := 0
	count := map[string]int{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		rows++
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		status := strings.TrimSpace(cells[2])
		count[status]++
		_, inLibrary := funcs[name]
		inLibrary = (inLibrary || aggregates[name]) && !refusedInLibrary[name]
		switch status {
		case "supported", "differs":
			if text, ok := parsedForms[name]; ok {
				e, err := sql.ParseExpr(text)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if _, err := Compile(e, testTable); err != nil {
					t.Errorf("%s: %s does not compile: %v", name, text, err)
				}
				continue
			}
			if !inLibrary && !plannedForms[name] {
				t.Errorf("%s is %s in docs/sql.md but not in the function library", name, status)
			}
		case "not yet":
			if inLibrary {
				t.Errorf("%s is in the function library: docs/sql.md must not say \"not yet\"", name)
			}
		default:
			t.Errorf("%s: unknown status %q (supported, differs, not yet)", name, status)
		}
	}
	if rows < 250 {
		t.Fatalf("the function table has %d rows; Flink 2.3 has more than 250 functions", rows)
	}
	// The sentence above the table counts its rows; it went stale once
	// when functions moved to supported and nobody recounted.
	want := fmt.Sprintf("%d supported, %d differ, %d not yet.", count["supported"], count["differs"], count["not yet"])
	if !strings.Contains(intro[max(0, len(intro)-600):], want) {
		t.Errorf("docs/sql.md's sentence above the function table must say %q", want)
	}
}
