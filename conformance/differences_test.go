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

var docItem = regexp.MustCompile("^- `([a-z0-9-]+)`")

// documentedDifferences returns the names the section lists, in order.
func documentedDifferences(t *testing.T) []string {
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
	var names []string
	for _, l := range strings.Split(section, "\n") {
		if m := docItem.FindStringSubmatch(l); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// TestDifferencesDocumented: docs/sql.md lists exactly the deliberate
// differences, and every named difference is shown by a case.
func TestDifferencesDocumented(t *testing.T) {
	var want []string
	for _, d := range Differences {
		if d.Kind == Deliberate {
			want = append(want, d.Name)
		}
		if d.Reason == "" || d.Area == "" {
			t.Errorf("difference %s needs an area and a reason", d.Name)
		}
	}
	got := documentedDifferences(t)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s \"Differences from Flink\" lists %v; differences.go's deliberate ones are %v", sqlReference, got, want)
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
