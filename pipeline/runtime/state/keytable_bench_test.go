//go:build unix

package state

import (
	"fmt"
	"syscall"
	"testing"
)

// cpuNow is the process's CPU time in nanoseconds: on a shared machine
// less swayed than the wall time by the wait for a core.
func cpuNow() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkKeyTableFind: hash, probe and compare of keys encoded back to
// back, as GroupAgg's passes look a batch up, over tables of 10k and 1M
// keys: short (a STRING of 5-7 characters), inline-limit and long ones.
func BenchmarkKeyTableFind(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
		key  func(i int) string
	}{
		{"short-10k", 10_000, func(i int) string { return fmt.Sprintf("\x07\x00\x05%d", 10000+i) }},
		{"inline-10k", 10_000, func(i int) string { return fmt.Sprintf("\x07\x00\x0csensor_%05d", i) }},
		{"long-10k", 10_000, func(i int) string { return fmt.Sprintf("\x07\x00\x06n%05d\x03\x00%08d", i, i%10) }},
		{"short-1M", 1_000_000, func(i int) string { return fmt.Sprintf("\x07\x00\x07%d", 1000000+i) }},
	} {
		tab := newKeyTable()
		for i := range bc.n {
			tab.Insert([]byte(bc.key(i)), int32(i))
		}
		const batch = 1024
		var keys []byte
		var ends []int32
		for j := range batch {
			keys = append(keys, bc.key(j*7919%bc.n)...)
			ends = append(ends, int32(len(keys)))
		}
		hashes := make([]uint32, batch)
		ids := make([]int32, batch)
		b.Run(bc.name+"-all", func(b *testing.B) {
			cpu0 := cpuNow()
			for range b.N {
				if tab.FindAll(keys, ends, hashes, ids) {
					b.Fatal("lost a key")
				}
			}
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N*batch), "cpu-ns/key")
		})
		b.Run(bc.name, func(b *testing.B) {
			cpu0 := cpuNow()
			for range b.N {
				start := int32(0)
				for i, end := range ends {
					hashes[i] = tab.Hash(keys[start:end])
					ids[i] = tab.Probe(hashes[i])
					start = end
				}
				start = 0
				for i, end := range ends {
					if !tab.Equal(uint32(ids[i]), keys[start:end]) {
						b.Fatal("lost a key")
					}
					start = end
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N*batch), "cpu-ns/key")
		})
	}
}
