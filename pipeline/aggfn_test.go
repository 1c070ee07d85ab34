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
	"time"
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
			// Flink 2.3: the variance as a fraction, truncated at the end.
			fsum, fsq, fn := float64(sum), float64(sq), float64(n)
			vp := int64((fsq - fsum*fsum/fn) / fn)
			ss := int64(math.Sqrt((fsq - fsum*fsum/fn) / (fn - 1)))
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
	// One worker per GROUP BY in batch mode: there the inner keys reach
	// LISTAGG and LAST_VALUE in the order the workers list their groups
	// at the end (in Flink too, at a parallelism above one); streaming
	// keeps the input's.
	runFile(t, dir, source+"name: batch\nexecution: batch\nparallelism: 1\n"+query+fmt.Sprintf(`sinks:
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

// TestAggregateFunctionsInHopWindows: a HOP window merges its slices, and
// the order-sensitive functions must see them in time order; streaming
// and batch execution give the same rows, computed here from the input.
func TestAggregateFunctionsInHopWindows(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 10))
	type rec struct {
		id string
		ts int64 // ms
		v  int64
	}
	var recs []rec
	var csv strings.Builder
	ts := int64(0)
	for range 400 {
		ts += rng.Int64N(2000)
		r := rec{fmt.Sprintf("s%d", rng.IntN(3)), ts, rng.Int64N(21) - 5}
		recs = append(recs, r)
		fmt.Fprintf(&csv, "%s,%d,%d\n", r.id, r.ts, r.v)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const slide, size = 20_000, 60_000
	var want []string
	for start := int64(-size + slide); start <= ts; start += slide {
		for _, id := range []string{"s0", "s1", "s2"} {
			var vals []string
			var n, sum, sq int64
			pos := map[int64]bool{}
			var first, last int64
			for _, r := range recs {
				if r.id != id || r.ts < start || r.ts >= start+size {
					continue
				}
				if n == 0 {
					first = r.v
				}
				last = r.v
				n++
				sum += r.v
				sq += r.v * r.v
				if r.v > 0 {
					pos[r.v] = true
				}
				vals = append(vals, fmt.Sprint(r.v))
			}
			if n == 0 {
				continue
			}
			ws := time.UnixMilli(start).UTC().Format("2006-01-02 15:04:05.999") // Flink's csv timestamp text
			want = append(want, fmt.Sprintf("%s,%s,%d,%d,%d,%d,%s", ws, id, first, last, len(pos), int64((float64(sq)-float64(sum)*float64(sum)/float64(n))/float64(n)), strings.Join(vals, ";")))
		}
	}
	slices.Sort(want)
	query := fmt.Sprintf(`version: 1
sources:
  - name: src
    type: file
    path: %s
    schema:
      - id STRING
      - ts BIGINT
      - v BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time
transforms:
  - name: w
    sql: |
      SELECT window_start, id, FIRST_VALUE(v) AS fv, LAST_VALUE(v) AS lv,
             COUNT(DISTINCT v) FILTER (WHERE v > 0) AS dpos, VAR_POP(v) AS vp,
             LISTAGG(CAST(v AS STRING), ';') AS vs
      FROM TABLE(HOP(TABLE src, DESCRIPTOR(event_time), INTERVAL '20' SECOND, INTERVAL '1' MINUTE))
      GROUP BY window_start, window_end, id
`, filepath.Join(dir, "in.csv"))
	for _, mode := range []string{"streaming", "batch"} {
		out := filepath.Join(dir, mode+".csv")
		runFile(t, dir, query+fmt.Sprintf("name: %s\nexecution: %s\nsinks:\n  - name: out\n    from: w\n    type: file\n    path: %s\n", mode, mode, out))
		if got := readLines(t, out); !slices.Equal(got, want) {
			t.Errorf("%s result:\n%s\nwant:\n%s", mode, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
