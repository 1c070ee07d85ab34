package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etld/etld/internal/human"
)

// On a terminal (a pty from util-linux's script), etld run draws the
// progress bar of the file source, then replaces it with the summary
// table. A datagen source at 10 rows/s keeps the run going for about a
// second, so that the bar is drawn (every half second) whatever the
// machine's speed.
func TestProgressOnTerminal(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script (util-linux, in every Debian) is needed to run etld on a pty: %v", err)
	}
	dir := t.TempDir()
	var csv strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&csv, "%d,%d.5\n", i, i%40)
	}
	writeFile(t, filepath.Join(dir, "big.csv"), csv.String())
	writeFile(t, filepath.Join(dir, "p.yaml"), `version: 1
name: big
sources:
  - {name: readings, type: file, path: big.csv, schema: [id BIGINT, temp DOUBLE]}
  - {name: ticks, type: datagen, rows: 10, rate: 10, schema: [n INT]}
transforms:
  - {name: hot, sql: "SELECT id, temp FROM readings WHERE temp > 30"}
sinks:
  - {name: out, from: hot, type: file, path: out.csv}
  - {name: slow, from: ticks, type: file, path: ticks.csv}
`)
	// script runs the command on a pty and copies what it wrote to
	// stdout; -e passes its exit code on.
	cmd := exec.Command(scriptBin, "-qefc", etldBin+" run p.yaml", "/dev/null")
	cmd.Dir = dir
	cmd.Stdin = nil
	out, err := cmd.Output()
	screen := string(out)
	if err != nil {
		t.Fatalf("etld run on a pty: %v\n%q", err, screen)
	}
	bar := regexp.MustCompile(`\r\x1b\[Jbig \[=*>? *\] +\d+% [\d.]+ (B|KiB|MiB)/[\d.]+ (KiB|MiB) ETA \d+:\d\d [\d.]+[kM]? rows/s \| out [\d.]+[kM]?, slow \d+`)
	if !bar.MatchString(screen) {
		t.Errorf("no progress bar drawn:\n%q", screen)
	}
	size := fileSize(t, filepath.Join(dir, "big.csv"))
	table := regexp.MustCompile(`\r\x1b\[Jpipeline big: [^\n]+\r?\n  KIND +NAME +MODE +IN +OUT +SKIPPED +READ\r?\n  source +readings +- +50000 +50000 +0 +` + regexp.QuoteMeta(human.Bytes(size)) + `\r?\n  source +ticks +- +10 +10 +0\r?\n  sink +out +append +\d+ +\d+ +0\r?\n  sink +slow +append +10 +10 +0\r?\n`)
	if !table.MatchString(screen) {
		t.Errorf("no summary table after the bar:\n%q", screen)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "ticks.csv")); err != nil || strings.Count(string(data), "\n") != 10 {
		t.Errorf("ticks.csv: %v, %q", err, data)
	}
}
