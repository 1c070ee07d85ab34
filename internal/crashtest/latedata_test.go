package crashtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// (l) file -> TUMBLE and HOP window aggregates -> file, with late rows:
// every 50th row's event time is two minutes behind its neighbours', so
// its windows fired before it comes and it is dropped as late. Whether a
// row is late depends only on the rows read before it (the watermark
// moves per record), never on how a restarted run cuts its batches, so
// after any kills the windows must be byte-identical to an uninterrupted
// run's.
var fileLateRowsToFile = scenario{
	name: "file-late-rows",
	pipeline: `version: 1
name: crash-late-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    schema:
{{template "readings columns"}}
      - "event_time AS TO_TIMESTAMP_LTZ(id * 1000 - CASE WHEN MOD(id, 50) = 0 THEN 120000 ELSE 0 END, 3)"
    watermark: event_time - INTERVAL '30' SECOND
transforms:
  - name: minutes
    sql: |
      SELECT window_start, window_end, COUNT(*) AS n, SUM(id) AS ids, MAX(temp) AS hi
      FROM TABLE(TUMBLE(TABLE readings, DESCRIPTOR(event_time), INTERVAL '1' MINUTE))
      GROUP BY window_start, window_end
  - name: hops
    sql: |
      SELECT window_start, window_end, COUNT(*) AS n, SUM(id) AS ids
      FROM TABLE(HOP(TABLE readings, DESCRIPTOR(event_time), INTERVAL '1' MINUTE, INTERVAL '3' MINUTE))
      GROUP BY window_start, window_end
sinks:
{{template "file sink" args . "name" "minutes" "from" "minutes"}}
{{template "file sink" args . "name" "hops" "from" "hops" "suffix" ".hops"}}
`,
	setup: writesReadings(3),
	check: sameOutputs(".csv", ".hops.csv"),
}

func TestCrashLateRows(t *testing.T) { runScenario(t, fileLateRowsToFile) }

// (l2) file -> TUMBLE and HOP window aggregates per sensor -> file,
// with late rows, each life with another number of workers (1, 2, 3,
// 1, ...: the reference run has one): every restore gives the workers
// the key groups of a checkpoint written by another number of them, and
// each worker the watermark, so the same rows are late. The windows a
// watermark fires come out worker after worker, so the lines are
// compared as sets: the same windows, none lost, none twice.
var fileWindowRescale = scenario{
	name: "file-window-rescale",
	pipeline: `version: 1
name: crash-window-rescale-{{.Out}}
parallelism: {{workers .Life}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    schema:
{{template "readings columns"}}
      - "event_time AS TO_TIMESTAMP_LTZ(id * 1000 - CASE WHEN MOD(id, 50) = 0 THEN 120000 ELSE 0 END, 3)"
    watermark: event_time - INTERVAL '30' SECOND
transforms:
  - name: minutes
    sql: |
      SELECT sensor, window_start, window_end, COUNT(*) AS n, SUM(id) AS ids, MAX(temp) AS hi
      FROM TABLE(TUMBLE(TABLE readings, DESCRIPTOR(event_time), INTERVAL '1' MINUTE))
      GROUP BY sensor, window_start, window_end
  - name: hops
    sql: |
      SELECT sensor, window_start, window_end, COUNT(*) AS n, SUM(id) AS ids
      FROM TABLE(HOP(TABLE readings, DESCRIPTOR(event_time), INTERVAL '1' MINUTE, INTERVAL '3' MINUTE))
      GROUP BY sensor, window_start, window_end
sinks:
{{template "file sink" args . "name" "minutes" "from" "minutes"}}
{{template "file sink" args . "name" "hops" "from" "hops" "suffix" ".hops"}}
`,
	setup: writesReadings(3),
	check: sameLines(".csv", ".hops.csv"),
}

func TestCrashWindowRescale(t *testing.T) { runScenario(t, fileWindowRescale) }

// sameLines is the check of a scenario whose file outputs .Dir/out+ext
// must hold the lines of the reference's .Dir/ref+ext, in any order.
func sameLines(exts ...string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		for _, ext := range exts {
			sorted := func(path string) string {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitAfter(string(b), "\n")
				slices.Sort(lines)
				out := filepath.Join(t.TempDir(), filepath.Base(path))
				if err := os.WriteFile(out, []byte(strings.Join(lines, "")), 0o644); err != nil {
					t.Fatal(err)
				}
				return out
			}
			sameFile(t, sorted(filepath.Join(e.Dir, "ref"+ext)), sorted(filepath.Join(e.Dir, "out"+ext)))
		}
	}
}
