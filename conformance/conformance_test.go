package conformance

import (
	"context"
	"flag"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// casesDir holds the cases, one NAME.case file each.
const casesDir = "cases"

// minCases guards the suite's breadth: a cases directory that lost files
// (or a glob that matches fewer) fails the run instead of quietly testing
// less.
const minCases = 250

var only = flag.String("case", "", "run (or record, generate) only the cases whose name matches this regular expression")

func loadCases(t *testing.T) []*Case {
	t.Helper()
	cases, err := LoadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	if *only == "" {
		return cases
	}
	re := regexp.MustCompile(*only)
	var out []*Case
	for _, c := range cases {
		if re.MatchString(c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// flinkResult is the recorded Flink result of a case.
func flinkResult(c *Case) Expected {
	if e, ok := c.Section(FlinkErrSection); ok {
		return Expected{Err: e, Failed: true}
	}
	out, _ := c.Section(FlinkOutSection)
	if c.Sink != nil {
		return Expected{Lines: splitLines(out)}
	}
	return Expected{Lines: ChangeLines(out)}
}

// etldResult is a case's etld.out section: what etld gives where it
// differs on purpose. A line `error: TEXT` says etld fails (refuses, or
// stops the run) with an error holding TEXT.
func etldResult(c *Case) (Expected, string, bool) {
	out, ok := c.Section(EtldOutSection)
	if !ok {
		return Expected{}, "", false
	}
	if msg, isErr := strings.CutPrefix(strings.TrimSpace(out), "error:"); isErr {
		return Expected{Failed: true, Err: msg}, strings.TrimSpace(msg), true
	}
	if c.Sink != nil {
		return Expected{Lines: splitLines(out)}, "", true
	}
	return Expected{Lines: ChangeLines(out)}, "", true
}

// TestCases runs every case through etld and compares with Flink's
// recorded result: the same folded final table and row kinds, or both
// failing. A case that names a difference must still differ (else its
// expect line is stale) and, with an etld.out section, give exactly that.
func TestCases(t *testing.T) {
	cases := loadCases(t)
	if *only == "" && len(cases) < minCases {
		t.Errorf("%d cases in %s, want at least %d", len(cases), casesDir, minCases)
	}
	var mu sync.Mutex
	matched, byName := 0, map[string]int{}
	t.Cleanup(func() {
		t.Logf("conformance: %d of %d cases give Flink's result (%.1f%%); named differences: %v",
			matched, len(cases), 100*float64(matched)/float64(max(len(cases), 1)), byName)
	})
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if !c.Recorded() {
				t.Fatalf("%s: no Flink result recorded: run make conformance-flink", c.Path)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got := c.RunEtld(ctx, t.TempDir())
			v := Compare(flinkResult(c), got, c.Sink != nil, "")
			mu.Lock()
			if v.Same {
				matched++
			} else if c.Expect != "" {
				byName[c.Expect]++
			}
			mu.Unlock()
			if c.Expect == "" {
				if !v.Same {
					t.Errorf("%s: etld differs from Flink: %s\nquery: %s", c.Path, v.Why, c.Query())
				}
				return
			}
			d, _ := Lookup(c.Expect)
			if v.Same {
				t.Errorf("%s: gives Flink's result now: drop `expect: %s` (%s difference, %s)", c.Path, d.Name, d.Kind, d.Area)
			}
			if want, errMatch, ok := etldResult(c); ok {
				if ev := Compare(want, got, c.Sink != nil, errMatch); !ev.Same {
					t.Errorf("%s: etld differs from its etld.out (difference %s): %s", c.Path, d.Name, ev.Why)
				}
			} else if d.Kind == Deliberate {
				t.Errorf("%s: a deliberate difference (%s) needs an etld.out section saying what etld gives", c.Path, d.Name)
			}
		})
	}
}

// TestCaseFilesRoundTrip: a case file written back is byte-identical, so
// the recorder rewrites only the sections it records.
func TestCaseFilesRoundTrip(t *testing.T) {
	for _, c := range loadCases(t) {
		data, err := os.ReadFile(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(c.Format()); got != string(data) {
			t.Errorf("%s: written back differs from the file", c.Path)
		}
	}
}

var bless = flag.Bool("bless", false, "write etld's result into the etld.out section of each case that expects a deliberate difference")

// TestBless, with -bless, records what etld gives for the cases that
// differ from Flink on purpose, for review in the diff: the changes it
// prints, or `error: ` and the gist of its refusal.
func TestBless(t *testing.T) {
	if !*bless {
		t.Skip("a tool: go test ./conformance -run TestBless -args -bless")
	}
	for _, c := range loadCases(t) {
		d, ok := Lookup(c.Expect)
		if !ok || d.Kind != Deliberate {
			continue
		}
		got := c.RunEtld(context.Background(), t.TempDir())
		body := strings.Join(got.Lines, "\n") + "\n"
		if err := got.Err(); err != nil {
			body = "error: " + errorGist(err) + "\n"
		}
		c.SetSection(EtldOutSection, body, false)
		if err := os.WriteFile(c.Path, c.Format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// errorGist is the part of an etld error that does not depend on where
// the case ran: the message after the field path, its first line.
func errorGist(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if _, after, ok := strings.Cut(msg, ".sql: "); ok {
		msg = after
	}
	if len(msg) > 100 {
		msg = msg[:100]
	}
	return strings.TrimSpace(msg)
}
