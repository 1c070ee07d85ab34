package testenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Flink returns the path of the Flink SQL runner testenv/flink.sh builds,
// or skips/fails t when ETLD_TEST_FLINK is unset.
func Flink(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvFlink, "Flink (local mode)")
}

// FlinkResult is what Flink made of one script.
type FlinkResult struct {
	Script string
	// Out is what the script wrote to stdout: the rows of its print
	// tables and top-level queries, as Flink's print connector writes them
	// (+I[a, 1]), in the order Flink emitted them.
	Out string
	// Err is the chain of causes when the script failed, "" when it ran.
	Err string
}

// RunFlink runs scripts on Flink in local mode, all in one JVM (its start
// is most of the cost), each in a fresh TableEnvironment with parallelism 1
// and session time zone UTC; timeout bounds each job. A script's failure
// is in its result; a runner that cannot start fails t.
func RunFlink(t testing.TB, timeout time.Duration, scripts ...string) []FlinkResult {
	t.Helper()
	runner := Flink(t)
	results, err := runFlink(context.Background(), runner, timeout, scripts)
	if err != nil {
		t.Fatal(err)
	}
	return results
}

func runFlink(ctx context.Context, runner string, timeout time.Duration, scripts []string) ([]FlinkResult, error) {
	if len(scripts) == 0 {
		return nil, nil
	}
	args := append([]string{"--timeout", strconv.Itoa(int(timeout.Seconds()))}, scripts...)
	cmd := exec.CommandContext(ctx, runner, args...)
	var stderr Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New("flink runner " + runner + ": " + err.Error() + "\n" + stderr.String())
	}
	results := make([]FlinkResult, len(scripts))
	for i, s := range scripts {
		out, err := os.ReadFile(s + ".out")
		if err != nil {
			return nil, errors.New("flink runner left no output for " + s + ": " + err.Error() + "\n" + stderr.String())
		}
		results[i] = FlinkResult{Script: s, Out: string(out)}
		if e, err := os.ReadFile(s + ".err"); err == nil {
			results[i].Err = string(e)
		}
	}
	return results, nil
}

// FlinkCluster returns the REST address (host:port) of the Flink 2.3
// standalone session cluster testenv/flinkcluster.sh starts, and its
// state directory (tm1.pid and tm2.pid, the TaskManagers' pids), or
// skips/fails t when ETLD_TEST_FLINK_CLUSTER is unset.
func FlinkCluster(t testing.TB) (addr, dir string) {
	t.Helper()
	return lookup(t, EnvFlinkCluster, "Flink session cluster"), os.Getenv(EnvFlinkCluster + "_DIR")
}
