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

// BenchmarkRestorePeakRSS: how far restoring a GROUP BY with N keys
// (as BenchmarkCheckpointPeakRSS's; 1M by default, ETLD_BENCH_KEYS) from
// its part raises the process's peak resident memory above what the
// restored state keeps: "restore-peak-rise" is the peak during the
// restore over the memory before it, "restored-state" what is still
// resident after it (the state), and "restore-added" their difference,
// what the restore needed besides the state it built (the part read
// whole, before streaming restores).
//
//	go test -run '^$' -bench RestorePeakRSS -benchtime 1x ./pipeline/runtime/
func BenchmarkRestorePeakRSS(b *testing.B) {
	nkeys := benchEnv("ETLD_BENCH_KEYS", 1_000_000)
	store, err := checkpoint.Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	part, size := func() (string, int64) {
		g := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
		for _, in := range optest.BenchPool((nkeys+1023)/1024, 1024, nkeys, 1) {
			if err := g.Process(in, &optest.Discard{}); err != nil {
				b.Fatal(err)
			}
		}
		part, n, err := store.WritePart(1, "transform/agg/0", g.SnapshotTo)
		if err != nil {
			b.Fatal(err)
		}
		return part, n
	}()
	var peak, kept int64
	for range b.N {
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		base := procKB(b, "VmRSS")
		r := optest.Must(aggop.NewGroupAgg([]int{0}, benchAggs, aggop.GroupAggOptions{InsertOnly: true}))
		f, err := store.OpenPart(part)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.RestoreFrom(f, f.Size()); err != nil {
			b.Fatal(err)
		}
		f.Close()
		debug.FreeOSMemory()
		peak, kept = max(peak, procKB(b, "VmHWM")-base), procKB(b, "VmRSS")-base
		if r.Groups() != nkeys {
			b.Fatalf("restored %d groups, want %d", r.Groups(), nkeys)
		}
	}
	b.ReportMetric(float64(nkeys), "keys")
	b.ReportMetric(float64(size)/1e6, "part-MB")
	b.ReportMetric(float64(peak)/1024, "restore-peak-rise-MB")
	b.ReportMetric(float64(kept)/1024, "restored-state-MB")
	b.ReportMetric(float64(peak-kept)/1024, "restore-added-MB")
}
