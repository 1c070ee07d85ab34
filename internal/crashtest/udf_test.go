package crashtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
)

// (u) file -> WebAssembly aggregate function -> file in retract mode:
// the function's accumulators (bytes of its own, in the GROUP BY's
// snapshot) and the retractions an updating input sends it must give,
// after any kills, a changelog byte-identical to an uninterrupted run's.
var fileUDAFToFile = scenario{
	name: "file-udaf-retract",
	pipeline: `version: 1
name: crash-udaf-{{.Out}}
functions:
  - name: wavg
    kind: aggregate
    wasm: {{.Dir}}/wavg.wasm
    params: [v DOUBLE, w DOUBLE]
    returns: DOUBLE
sources:
{{template "readings" .}}
transforms:
  - name: per_sensor
    sql: |
      SELECT sensor, COUNT(*) AS n, wavg(temp, CAST(id AS DOUBLE)) AS wt
      FROM readings
      GROUP BY sensor
  - name: per_band
    sql: |
      SELECT MOD(n, 5) AS band, wavg(wt, CAST(n AS DOUBLE)) AS wt
      FROM per_sensor
      GROUP BY MOD(n, 5)
sinks:
{{template "file sink" args . "name" "out" "from" "per_band" "mode" "retract" "format" "csv"}}
`,
	setup: func(t *testing.T, e *env) {
		// A third of the other scenarios' rows: each change is a call of
		// the function, whose cost dominates.
		writesReadings(10)(t, e)
		module, err := os.ReadFile(wasmbuild.Go(t, "../../sdk/go/examples/wavg"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.Dir, "wavg.wasm"), module, 0o644); err != nil {
			t.Fatal(err)
		}
	},
	check: sameOutputs(".csv"),
}

func TestCrashUDAF(t *testing.T) { runScenario(t, fileUDAFToFile) }
