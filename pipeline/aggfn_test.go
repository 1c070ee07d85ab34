package pipeline_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAggregateFunctionsOverRetractions runs an outer GROUP BY over an
// inner one, so the outer aggregates see every -U/+U of the inner groups:
// DISTINCT, FILTER, VAR_POP/STDDEV_SAMP, LISTAGG and LAST_VALUE must all
// retract. The streaming changelog, folded by key, and the batch run must
// both give the table computed here from the final inner rows.
func TestAggregateFunctionsOverRetractions(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	type kg struct{ k, g string }
	sums := map[kg]int64{}
	var firstSeen, lastTouched []kg // inner groups in first-seen / last-updated order
	var csv strings.Builder
	for range 3000 {
		key := kg{fmt.Sprintf("k%d", rng.IntN(30)), fmt.Sprintf("g%d", rng.IntN(4))}
		v := rng.Int64N(200) - 50
		fmt.Fprintf(&csv, "%s,%s,%d\n", key.k, key.g, v)
		if _, ok := sums[key]; !ok {
			firstSeen = append(firstSeen, key)
		}
		sums[key] += v
		if i := slices.Index(lastTouched, key); i >= 0 {
			lastTouched = slices.Delete(lastTouched, i, i+1)
		}
		lastTouched = append(lastTouched, key)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// expected computes the outer row of every g; order is the order the
	// outer aggregate saw the inner rows, which LISTAGG and LAST_VALUE keep.
	expected := func(order []kg) []string {
		var out []string
		for _, g := range []string{"g0", "g1", "g2", "g3"} {
			var n, pos, sum, sq, sds int64
			distinct := map[int64]bool{}
			bigKs := map[string]bool{}
			var ks []string
			for _, key := range order {
				if key.g != g {
					continue
				}
				s := sums[key]
				n++
				sum += s
				sq += s * s
				if s > 0 {
					pos++
				}
				if !distinct[s] {
					distinct[s] = true
					sds += s
				}
				if s > 100 {
					bigKs[key.k] = true
				}
				ks = append(ks, key.k)
			}
			vp := (sq - sum*sum/n) / n
			ss := int64(math.Sqrt(float64((sq - sum*sum/n) / (n - 1))))
			out = append(out, fmt.Sprintf("%s,%d,%d,%d,%d,%d,%d,%d,%s,%s",
				g, n, len(distinct), sds, pos, len(bigKs), vp, ss, strings.Join(ks, "|"), ks[len(ks)-1]))
		}
		return out
	}
	query := `
transforms:
  - name: inner_sums
    sql: SELECT k, g, SUM(v) AS s FROM src GROUP BY k, g
  - name: outer_aggs
    sql: |
      SELECT g, COUNT(*) AS n, COUNT(DISTINCT s) AS ds, SUM(DISTINCT s) AS sds,
             COUNT(*) FILTER (WHERE s > 0) AS pos,
             COUNT(DISTINCT k) FILTER (WHERE s > 100) AS big,
             VAR_POP(s) AS vp, STDDEV_SAMP(s) AS ss,
             LISTAGG(k, '|') AS ks, LAST_VALUE(k) AS lk
      FROM inner_sums GROUP BY g
`
	source := fmt.Sprintf(`version: 1
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, g STRING, v BIGINT]
`, filepath.Join(dir, "in.csv"))
	runFile(t, dir, source+"name: streaming\n"+query+fmt.Sprintf(`sinks:
  - name: out
    from: outer_aggs
    type: file
    path: %s
    mode: retract
`, filepath.Join(dir, "stream.csv")))
	runFile(t, dir, source+"name: batch\nexecution: batch\n"+query+fmt.Sprintf(`sinks:
  - name: out
    from: outer_aggs
    type: file
    path: %s
`, filepath.Join(dir, "batch.csv")))

	if got, want := fold(t, filepath.Join(dir, "stream.csv")), expected(lastTouched); !slices.Equal(got, want) {
		t.Errorf("streaming result:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := readLines(t, filepath.Join(dir, "batch.csv")), expected(firstSeen); !slices.Equal(got, want) {
		t.Errorf("batch result:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "stream.csv"))
	if n := strings.Count(string(data), "-U,"); n < 1000 {
		t.Errorf("only %d -U rows in the outer changelog: the retractions were not exercised", n)
	}
}
