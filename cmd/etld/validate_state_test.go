package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// etld validate --against-state tells, per operator, what a run of the
// edited file would do with the saved state, and writes nothing; an edit
// of the operator itself is refused (exit 1) unless --reset-state names
// it, and etld run takes the same --reset-state.
func TestValidateAgainstState(t *testing.T) {
	stateDir, file := stateFixture(t, "b")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) {
		t.Helper()
		if !strings.Contains(string(text), old) {
			t.Fatalf("the fixture has no %q", old)
		}
		writeFile(t, file, strings.Replace(string(text), old, new, 1))
	}
	before := listing(t, stateDir)
	line := func(out, action, id string) bool {
		return regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(action) + `\s+` + regexp.QuoteMeta(id) + `\b`).MatchString(out)
	}

	// Around the operators: a filter after the GROUP BY, a new sink.
	edit("FROM orders WHERE cat <> 'zz' GROUP BY cat\n", "FROM orders WHERE cat <> 'zz' GROUP BY cat HAVING COUNT(*) > 0\n  - name: extra\n    sql: SELECT cat FROM bycat\n")
	code, stdout, stderr := etldCLI("validate", "--against-state", stateDir, file)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	for _, want := range [][2]string{{"keep", "transform/bycat/group_aggregate#1"}, {"keep", "transform/named/join#1"}, {"keep", "source/orders"}} {
		if !line(stdout, want[0], want[1]) {
			t.Errorf("no %s of %s in\n%s", want[0], want[1], stdout)
		}
	}

	// The operator itself: an aggregate added.
	edit("SUM(price) AS total,", "SUM(price) AS total, MAX(price) AS top,")
	code, stdout, stderr = etldCLI("validate", "--against-state", stateDir, file)
	if code != 1 || !line(stdout, "refuse", "transform/bycat/group_aggregate#1") || !strings.Contains(stdout, "MAX(price)") || !line(stdout, "keep", "transform/named/join#1") {
		t.Errorf("an added aggregate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = etldCLI("validate", "--against-state", stateDir, "--reset-state", "bycat/group_aggregate#1", file)
	if code != 0 || !line(stdout, "reset", "transform/bycat/group_aggregate#1") {
		t.Errorf("with --reset-state: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := listing(t, stateDir); !slices.Equal(before, after) {
		t.Errorf("validate wrote into the state directory:\n%q\nwas\n%q", after, before)
	}
	code, _, stderr = etldCLI("run", "--quiet", "--state-dir", stateDir, file)
	if code != 1 || !strings.Contains(stderr, "--reset-state transform/bycat/group_aggregate#1") || strings.Contains(stderr, "remove") {
		t.Errorf("etld run of the changed operator: exit %d: %s", code, stderr)
	}
	if code, _, stderr = etldCLI("run", "--quiet", "--state-dir", stateDir, "--reset-state", "transform/bycat/group_aggregate#1", file); code != 0 {
		t.Errorf("etld run --reset-state: exit %d: %s", code, stderr)
	}
}

// etld validate --against-state --backfill tells whether a backfill
// would rebuild an edited operator, and etld run --backfill does it: the
// next run over the same state keeps everything.
func TestValidateAndRunBackfill(t *testing.T) {
	stateDir, file := stateFixture(t, "b")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The sink of the GROUP BY in upsert mode (blackhole's auto mode is
	// retract): an edit that keeps every operator's state.
	upsert := strings.Replace(string(text), "    from: bycat\n    type: blackhole\n", "    from: bycat\n    type: blackhole\n    mode: upsert\n", 1)
	writeFile(t, file, upsert)
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", stateDir, file); code != 0 {
		t.Fatalf("etld run with the sink in upsert mode: exit %d: %s", code, stderr)
	}
	added := strings.Replace(upsert, "SUM(price) AS total,", "SUM(price) AS total, MAX(price) AS top,", 1)
	writeFile(t, file, strings.Replace(added, "mode: upsert", "mode: retract", 1))
	code, stdout, stderr := etldCLI("validate", "--against-state", stateDir, "--backfill", file)
	if code != 1 || !strings.Contains(stderr, `sink "out" runs in retract mode`) || !strings.Contains(stderr, "shop.yaml:18:5") {
		t.Errorf("a backfill into a retract sink: exit %d\n%s%s", code, stdout, stderr)
	}
	writeFile(t, file, added)
	code, stdout, stderr = etldCLI("validate", "--against-state", stateDir, "--backfill", file)
	if code != 0 || !strings.Contains(stdout, "a run with --backfill rebuilds the 1 refused operators") || !strings.Contains(stdout, "the daemon backfills beside the running version") {
		t.Errorf("validate --backfill: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = etldCLI("run", "--state-dir", stateDir, "--backfill", file)
	if code != 0 || !strings.Contains(stderr, "backfill: rebuilt transform/bycat/group_aggregate#1 from the sources' start up to checkpoint") {
		t.Fatalf("etld run --backfill: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = etldCLI("validate", "--against-state", stateDir, file)
	if code != 0 || !strings.Contains(stdout, "keep") || strings.Contains(stdout, "refuse") {
		t.Errorf("after the backfill: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := etldCLI("run", "--backfill", file); code != 2 || !strings.Contains(stderr, "--backfill needs --state-dir") {
		t.Errorf("--backfill without --state-dir: exit %d: %s", code, stderr)
	}
}
