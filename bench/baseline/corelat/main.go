// Command corelat measures how far apart two CPUs are: the round trip of
// one cache line between a thread on each (one writes, the other sees it
// and writes back), in nanoseconds, the median of a few runs.
//
// Why: on a virtual machine the host places the vCPUs, and moves them.
// On the bench machine (2 vCPUs) the round trip was about 65 ns at times
// (the vCPUs near: one core's two threads, or one cache) and 330-400 ns
// at others, for minutes at a stretch; a pipeline whose decoders and
// aggregate hand rows from one core to the other took 1.2 CPU s in the
// first case and 1.5 in the second (bench/README.md, "Two modes of the
// 1k-key GROUP BYs"). Run it beside a measurement to know which case it
// was in. Both threads spin: on a loaded machine, where another process
// may hold either CPU, give corelat a high priority (on Linux with
// autogroups, `echo -20 > /proc/$$/autogroup` in a session of its own),
// or it measures the scheduler (1.7 us at load 25 there).
//
// Usage: corelat [-a 0] [-b 1] [-n 200000] [-runs 5]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync/atomic"
	"time"
)

func main() {
	a := flag.Int("a", 0, "first CPU")
	b := flag.Int("b", 1, "second CPU")
	n := flag.Int("n", 200000, "round trips a run")
	runs := flag.Int("runs", 5, "runs (the median is printed)")
	flag.Parse()
	if runtime.NumCPU() < 2 || *n < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "corelat: needs 2 CPUs, -n >= 1 and -runs >= 1")
		os.Exit(2)
	}
	var ns []float64
	for range *runs {
		d, err := roundTrip(*a, *b, *n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corelat:", err)
			os.Exit(1)
		}
		ns = append(ns, float64(d.Nanoseconds())/float64(*n))
	}
	sort.Float64s(ns)
	fmt.Printf("%.0f\n", ns[len(ns)/2])
}

// line is the cache line the two threads pass: padded so that nothing
// else shares it.
type line struct {
	_ [64]byte
	v atomic.Int64
	_ [64]byte
}

// roundTrip passes one line n times from a thread on CPU a to one on CPU
// b and back, and returns the time taken.
func roundTrip(a, b, n int) (time.Duration, error) {
	// This thread is pinned first, so that a failure leaves no thread
	// spinning. It stays pinned to a afterwards (a command's run).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := pin(a); err != nil {
		return 0, err
	}
	var l line
	errs := make(chan error, 1)
	go func() {
		// Locked to the end: the thread, pinned to b, exits with it.
		runtime.LockOSThread()
		if err := pin(b); err != nil {
			errs <- err
			return
		}
		errs <- nil
		for i := int64(1); i < 2*int64(n); i += 2 {
			for l.v.Load() != i {
			}
			l.v.Store(i + 1)
		}
	}()
	if err := <-errs; err != nil {
		return 0, err
	}
	t0 := time.Now()
	for i := int64(0); i < 2*int64(n); i += 2 {
		for l.v.Load() != i {
		}
		l.v.Store(i + 1)
	}
	// The other thread's last store was the one this loop waited for.
	return time.Since(t0), nil
}
