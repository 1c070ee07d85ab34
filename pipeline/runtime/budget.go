package runtime

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// State budget. An operator whose keys are not bounded (a GROUP BY over
// a unique key without state_ttl) grows until the process runs out of
// memory, and then every pipeline of the daemon dies with it, without a
// word naming the one at fault. The engine instead holds each operator
// that knows its memory (operator.StateMemory) to the pipeline's
// max_state_bytes after every message it handles and after a restore,
// and fails that pipeline alone with a permanent error: running it again
// meets the same keys.

// fallbackMaxStateBytes is the default budget where the machine's memory
// cannot be read.
const fallbackMaxStateBytes = 1 << 30

// DefaultMaxStateBytes is the budget of a pipeline whose file sets no
// max_state_bytes: half of GOMEMLIMIT when it is set (the rest is for
// the batches in flight and a checkpoint being written), else a quarter
// of the memory the process may use (the cgroup's memory.max, or the
// machine's memory), else 1 GiB.
func DefaultMaxStateBytes() int64 {
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 {
		return limit / 2
	}
	if mem := systemMemory(); mem > 0 {
		return mem / 4
	}
	return fallbackMaxStateBytes
}

// systemMemory is the memory the process may use: the smaller of the
// cgroup v2 limit and the machine's total, 0 when neither can be read
// (not Linux).
func systemMemory() int64 {
	total := memTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			return n
		}
	}
	return total
}

// memTotal reads MemTotal from /proc/meminfo, in bytes; 0 if it cannot.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// stateBudget is one operator node's state budget.
type stateBudget struct {
	mem operator.StateMemory // nil: the operator does not know its memory
	max int64                // <= 0: no budget
}

// check fails when the operator's state holds more than the budget.
func (b stateBudget) check() error {
	if b.mem == nil || b.max <= 0 {
		return nil
	}
	if n := b.mem.StateBytes(); n > b.max {
		return retry.Permanent(fmt.Errorf("its state of %d entries holds %s (%d bytes), over the pipeline's max_state_bytes of %s: "+
			"if its keys are not bounded, give it a state_ttl, group by a window, or raise max_state_bytes",
			b.mem.StateEntries(), mib(n), n, mib(b.max)))
	}
	return nil
}

// mib writes n bytes in MiB with one decimal, as an error reads best.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
