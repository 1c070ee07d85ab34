package nexmark_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline"
)

// TestQ10Partitions runs q10 over 20000 events (200 s of event time):
// every bid lands in the csv parts of the Hive-style directory of its
// day and minute (the minute's colon escaped, as Hive and Flink write
// it), and every partition, complete at the end of the input, has its
// _SUCCESS file.
func TestQ10Partitions(t *testing.T) {
	const n = 20000
	dir := t.TempDir()
	p, err := loadIn(t, "q10", n, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	parts, err := filepath.Glob(filepath.Join(dir, "bid", "dt=*", "hm=*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("partitions %v, want the 4 minutes of the run", parts)
	}
	rows := 0
	for _, part := range parts {
		dt := strings.TrimPrefix(filepath.Base(filepath.Dir(part)), "dt=")
		hm := strings.ReplaceAll(strings.TrimPrefix(filepath.Base(part), "hm="), "%3A", ":")
		if _, err := os.Stat(filepath.Join(part, "_SUCCESS")); err != nil {
			t.Errorf("partition %s has no success file: %v", part, err)
		}
		files, err := filepath.Glob(filepath.Join(part, "part-*.csv"))
		if err != nil || len(files) == 0 {
			t.Fatalf("partition %s has no part: %v", part, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				rows++
				// auction,bidder,price,dateTime,extra: the partition
				// columns are in the path, not in the file.
				cols := strings.Split(line, ",")
				if len(cols) < 5 || !strings.HasPrefix(cols[3], dt+" "+hm+":") {
					t.Fatalf("%s: %q is not a bid of %s %s", f, line, dt, hm)
				}
			}
		}
	}
	if want := n * 46 / 50; rows != want {
		t.Fatalf("%d bids in the parts, want %d", rows, want)
	}
}
