//go:build linux

package runtime

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// procKB reads a field (VmRSS, VmHWM) of /proc/self/status, in kB.
func procKB(b *testing.B, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkCheckpointPeakRSS: how far a checkpoint of a GROUP BY with N
// keys (COUNT(*), SUM, MAX; 1M by default, ETLD_BENCH_KEYS) raises the
// process's peak resident memory above the state's own: "whole" is
// Snapshot's one buffer written into the checkpoint file, "streamed" is
// SnapshotTo into a part (the engine's way for a StreamSnapshotter).
// The peak is reset before each (/proc/self/clear_refs) and read after
// (VmHWM); the Go runtime gives freed memory back first.
//
//	go test -run '^$' -bench CheckpointPeakRSS -benchtime 1x ./pipeline/runtime/
func BenchmarkCheckpointPeakRSS(b *testing.B) {
	nkeys := benchEnv("ETLD_BENCH_KEYS", 1_000_000)
	g := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
	for _, in := range optest.BenchPool((nkeys+1023)/1024, 1024, nkeys, 1) {
		if err := g.Process(in, &optest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
	store, err := checkpoint.Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	measure := func(checkpoint func() int64) (rise, size int64) {
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		base := procKB(b, "VmRSS")
		size = checkpoint()
		return procKB(b, "VmHWM") - base, size
	}
	var wholeRise, streamRise, wholeSize, streamSize int64
	id := int64(0)
	for range b.N {
		id++
		r, s := measure(func() int64 {
			state, err := g.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			n, err := store.Write(&checkpoint.Checkpoint{ID: id, Pipeline: "bench", Time: time.Now(),
				Components: []checkpoint.Component{{ID: "transform/agg/0", Runtime: state}}})
			if err != nil {
				b.Fatal(err)
			}
			return n
		})
		wholeRise, wholeSize = max(wholeRise, r), s
		id++
		r, s = measure(func() int64 {
			part, n, err := store.WritePart(id, "transform/agg/0", g.SnapshotTo)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := store.Write(&checkpoint.Checkpoint{ID: id, Pipeline: "bench", Time: time.Now(),
				Components: []checkpoint.Component{{ID: "transform/agg/0", RuntimePart: part}}}); err != nil {
				b.Fatal(err)
			}
			return n
		})
		streamRise, streamSize = max(streamRise, r), s
	}
	b.ReportMetric(float64(nkeys), "keys")
	b.ReportMetric(float64(wholeSize)/1e6, "whole-MB")
	b.ReportMetric(float64(streamSize)/1e6, "streamed-MB")
	b.ReportMetric(float64(wholeRise)/1024, "whole-peak-rise-MB")
	b.ReportMetric(float64(streamRise)/1024, "streamed-peak-rise-MB")
}
