package crashtest

import (
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
