// Package crashtest holds the crash harness (its tests): a pipeline runs
// in a child process that is killed with SIGKILL at random moments and
// restarted from its checkpoints until it finishes; the final result must
// be what a run without crashes gives. Every other kill also waits, past
// its moment, for a checkpoint the life completed (a new MANIFEST), so
// that lives restore however slowly a loaded machine starts them; the
// rest land anywhere, before the first checkpoint too. Scenarios are table entries: a
// pipeline template, a setup and a final check. The templates take their
// sources and sinks from named fragments (fragments_test.go);
// testdata/rendered holds the YAML every template gives, which
// TestPipelinesRender holds them to (-update writes it).
//
//	go test -race ./internal/crashtest/                  # default: 20 kills per scenario
//	ETLD_CRASH_KILLS=200 ETLD_CRASH_SEED=42 go test ./internal/crashtest/
//	ETLD_CRASH_VERBOSE=1 ...                             # log every life
//
// Every run prints its seed; the same seed replays the same kill times
// (the moments they land in the child still vary with the machine's load).
//
// TestPostgresCDCKills kills the lives of a PostgreSQL CDC pipeline while
// a writer changes its tables, and restarts the (private) server halfway;
// a last life reads to the end of the log, and the MySQL table must be
// the source tables' aggregate. TestPostgresCDCUpsertKills writes one
// captured table straight into a MySQL upsert table, its lives killed
// mostly in the snapshot: the table must end equal to the source's.
//
// TestCrashBackfill starts from a run of a GROUP BY stopped mid-input and
// runs lives of an edit of it with `backfill: true`: the first two are
// killed in the backfill's replay and after its replays (as soon as the
// files they write appear), the rest at random; the table must end as
// an uninterrupted run of the edited pipeline leaves it.
//
// TestLateRequests kills no life at random: a proxy holds a write request
// of the first life, which is killed as soon as one is held, and lets it
// through once the next life has written; the output must still be an
// uninterrupted run's.
package crashtest
