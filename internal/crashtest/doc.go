// Package crashtest holds the crash harness (its tests): a pipeline runs
// in a child process that is killed with SIGKILL at random moments and
// restarted from its checkpoints until it finishes; the final result must
// be what a run without crashes gives. Scenarios are table entries: a
// pipeline template, a setup and a final check.
//
//	go test -race ./internal/crashtest/                  # default: 20 kills per scenario
//	ETLD_CRASH_KILLS=200 ETLD_CRASH_SEED=42 go test ./internal/crashtest/
//	ETLD_CRASH_VERBOSE=1 ...                             # log every life
//
// Every run prints its seed; the same seed replays the same kill times
// (the moments they land in the child still vary with the machine's load).
package crashtest
