package conformance

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// sqlReference is the SQL reference page whose "Differences from Flink"
// section lists the deliberate differences.
const sqlReference = "../docs/sql.md"

var (
	docItem = regexp.MustCompile("^- `([a-z0-9-]+)`")
	docRow  = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([a-z]+) \\|")
)

// documentedDifferences returns the names the section lists as items
// (the deliberate ones) and as table rows (open and pending, name and
// kind).
func documentedDifferences(t *testing.T) (items, rows []string) {
	t.Helper()
	data, err := os.ReadFile(sqlReference)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Differences from Flink\n")
	if !ok {
		t.Fatalf("%s has no \"## Differences from Flink\" section", sqlReference)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, l := range strings.Split(section, "\n") {
		if m := docItem.FindStringSubmatch(l); m != nil {
			items = append(items, m[1])
		}
		if m := docRow.FindStringSubmatch(l); m != nil {
			rows = append(rows, m[1]+" "+m[2])
		}
	}
	return items, rows
}

// TestDifferencesDocumented: docs/sql.md lists exactly the deliberate
// differences, and every named difference is shown by a case.
func TestDifferencesDocumented(t *testing.T) {
	var want, wantRows []string
	for _, d := range Differences {
		if d.Kind == Deliberate {
			want = append(want, d.Name)
		} else {
			wantRows = append(wantRows, d.Name+" "+d.Kind.String())
		}
		if d.Reason == "" || d.Area == "" {
			t.Errorf("difference %s needs an area and a reason", d.Name)
		}
	}
	got, gotRows := documentedDifferences(t)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s \"Differences from Flink\" lists %v; differences.go's deliberate ones are %v", sqlReference, got, want)
	}
	sort.Strings(wantRows)
	sort.Strings(gotRows)
	if strings.Join(gotRows, ", ") != strings.Join(wantRows, ", ") {
		t.Errorf("%s \"Not the same yet\" has %v; differences.go's open and pending ones are %v", sqlReference, gotRows, wantRows)
	}
	cases, err := LoadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, c := range cases {
		used[c.Expect] = true
	}
	for _, d := range Differences {
		if !used[d.Name] {
			t.Errorf("difference %s is named by no case: add one that shows it, or drop it", d.Name)
		}
	}
}
