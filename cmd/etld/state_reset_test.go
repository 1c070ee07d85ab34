package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStateResetOperator: an edit of the GROUP BY (SUM to MAX) is refused
// with the saved state; `etld state reset ... bycat` writes a checkpoint
// in which the edited aggregate is empty under its new schema while the
// join keeps its rows, and a run of the edited file then restores it.
func TestStateResetOperator(t *testing.T) {
	stateDir, file := stateFixture(t, "zz")
	changed := filepath.Join(filepath.Dir(file), "changed.yaml")
	writeFile(t, changed, strings.Replace(readFile(t, file), "SUM(price)", "MAX(price)", 1))
	if code, _, errOut := etldCLI("run", "--quiet", "--state-dir", stateDir, changed); code != 1 || !strings.Contains(errOut, "the operator itself changed") {
		t.Fatalf("the edited file before the reset: exit %d: %s", code, errOut)
	}
	if code, _, errOut := etldCLI("state", "reset", stateDir, "shop", "nope", "--pipeline", changed); code != 1 || !strings.Contains(errOut, "names no operator") {
		t.Fatalf("reset of an operator that is not there: exit %d: %s", code, errOut)
	}
	code, out, errOut := etldCLI("state", "reset", stateDir, "shop", "bycat", "--pipeline", changed)
	if code != 0 || !strings.Contains(out, "reset bycat/group_aggregate#1: it starts empty at the next run (checkpoint 2)") {
		t.Fatalf("etld state reset shop bycat: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = etldCLI("state", "ls", stateDir, "shop")
	if code != 0 || !regexpLine(out, `^bycat/group_aggregate#1\s+GroupAggregate\s+bycat\s+0\s`) || !regexpLine(out, `^named/join#1\s+Join\s+named\s+7\s`) ||
		!regexpLine(out, `^2\s`) {
		t.Fatalf("ls after the reset: want checkpoint 2, the aggregate empty and the join's 7 rows kept: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := etldCLI("state", "dump", stateDir, "shop", "bycat", "--pipeline", changed); code != 0 || out != "" {
		t.Fatalf("dump of the reset aggregate: exit %d, %q %s", code, out, errOut)
	}
	if code, _, errOut := etldCLI("run", "--quiet", "--state-dir", stateDir, changed); code != 0 {
		t.Fatalf("the edited file after the reset: exit %d: %s", code, errOut)
	}
}
