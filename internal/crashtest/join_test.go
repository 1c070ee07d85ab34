package crashtest

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
)

// (j) file (orders, keyed by id) LEFT JOIN (Kafka events -> GROUP BY k
// with a HAVING that removes and re-adds groups) with a residual on the
// aggregate -> MySQL upsert keyed by the order id. Matches arrive, leave
// (the group vanishes, or its total moves across the residual) and come
// back, so the join's snapshots hold left rows with their match counts
// and right rows that come and go. After any kills the table must hold
// exactly one row per order: joined with its key's final aggregate when
// that exists and passes the residual, padded with NULLs otherwise, as
// computed directly from the inputs. Some orders have a NULL key or a key
// no event has: they stay padded.
var fileKafkaJoinToMySQL = scenario{
	name: "file-kafka-leftjoin-mysql",
	pipeline: `version: 1
name: crash-join-{{.Out}}
sources:
  - name: orders
    type: file
    path: {{.Dir}}/orders.csv
    format: { type: csv, null_literal: "" }
    key: [id]
    schema:
      - id BIGINT
      - k STRING
      - amount BIGINT
{{template "kafka events" .}}
transforms:
  - name: stats
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total
      FROM events
      GROUP BY k
      HAVING MOD(COUNT(*), 3) <> 0
  - name: enriched
    sql: |
      SELECT o.id, o.k, o.amount, s.n, s.total
      FROM orders o LEFT JOIN stats s ON o.k = s.k AND s.total > o.amount
sinks:
{{template "mysql sink" args . "name" "db" "from" "enriched" "key" "id"}}
`,
	needs: kafkaNeeds(func(t *testing.T, vars map[string]string) {
		mysqlVars(t, vars, "crashj")
	}),
	beforeLife: misleadGroup,
	setup: func(t *testing.T, e *env) {
		events := produceEvents(t, e, intEnv("ETLD_CRASH_ROWS", 300_000)/10)
		// A key's total is about its events times 500,000: amounts up to
		// twice that make the residual hold for about half the orders.
		orders := writeOrders(t, filepath.Join(e.Dir, "orders.csv"), intEnv("ETLD_CRASH_ROWS", 300_000)/150, int64(len(events)/kafkaKeys)*1_000_000, e)
		want := leftJoinTable(orders, events)
		padded := 0
		for _, r := range want {
			if strings.HasSuffix(r, "NULL, NULL") {
				padded++
			}
		}
		if padded == 0 || padded == len(want) {
			t.Fatalf("%d of %d orders padded: the input does not exercise both outcomes of the join", padded, len(want))
		}
		t.Logf("%d orders, %d of them without a match at the end", len(want), padded)
		e.data["want"] = want
	},
	check: func(t *testing.T, e *env) {
		want := e.data["want"].([]string)
		db, _ := testenv.MySQL(t)
		ref := tableRows(t, db, e.Vars["table"]+"_ref")
		if !slices.Equal(ref, want) {
			t.Fatalf("the reference run's table has %d rows, the direct computation %d; first differences:\n%s", len(ref), len(want), diffLines(want, ref))
		}
		got := tableRows(t, db, e.Vars["table"]+"_out")
		if !slices.Equal(got, want) {
			t.Errorf("table after crashes has %d rows, want %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
		} else {
			t.Logf("table %s_out: %d rows, one per order, equal to the direct computation", e.Vars["table"], len(got))
		}
	},
	reset: dropOut,
}

func TestCrashJoin(t *testing.T) { runScenario(t, fileKafkaJoinToMySQL) }

// order is one row of the join scenario's file; a K of "" is NULL.
type order struct {
	ID     int64
	K      string
	Amount int64
}

// writeOrders writes n orders id,k,amount: k one of the events' keys or
// of 20 keys no event has, NULL for one order in 50; amount below maxAmount.
func writeOrders(t *testing.T, path string, n int, maxAmount int64, e *env) []order {
	t.Helper()
	orders := make([]order, n)
	var b strings.Builder
	for i := range orders {
		o := order{ID: int64(i), Amount: e.rnd.Int64N(max(1, maxAmount))}
		if e.rnd.IntN(50) != 0 {
			o.K = fmt.Sprintf("key_%03d", e.rnd.IntN(kafkaKeys+20))
		}
		orders[i] = o
		fmt.Fprintf(&b, "%d,%s,%d\n", o.ID, o.K, o.Amount)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return orders
}

// leftJoinTable computes the scenario's final table directly: per order,
// its key's COUNT and SUM of v when the count is not a multiple of 3 and
// the sum exceeds the amount, else NULLs; rows as tableRows prints them,
// in id order.
func leftJoinTable(orders []order, events []event) []string {
	type agg struct{ n, total int64 }
	stats := map[string]*agg{}
	for _, ev := range events {
		a := stats[ev.K]
		if a == nil {
			a = &agg{}
			stats[ev.K] = a
		}
		a.n++
		a.total += ev.V
	}
	out := make([]string, 0, len(orders))
	for _, o := range orders {
		k := o.K
		if k == "" {
			k = "NULL"
		}
		a := stats[o.K]
		if o.K != "" && a != nil && a.n%3 != 0 && a.total > o.Amount {
			out = append(out, fmt.Sprintf("%d, %s, %d, %d, %d", o.ID, k, o.Amount, a.n, a.total))
		} else {
			out = append(out, fmt.Sprintf("%d, %s, %d, NULL, NULL", o.ID, k, o.Amount))
		}
	}
	return out
}

// (t) file -> GROUP BY (updating) -> Top-N (RetractStrategy, rank number
// selected) -> MySQL upsert keyed by partition and rank number: rows
// enter, leave and re-enter the top 3 as the maxima rise, and after any
// kills the table must hold exactly the final top 3 of each band,
// computed directly from the input.
var fileTopNToMySQL = scenario{
	name: "file-topn-mysql",
	pipeline: `version: 1
name: crash-topn-mysql-{{.Out}}
sources:
{{template "readings" .}}
transforms:
  - name: hottest
    sql: |
      SELECT band, rn, sensor, max_id FROM (
        SELECT band, sensor, max_id, ROW_NUMBER() OVER (PARTITION BY band ORDER BY max_id DESC, sensor) AS rn
        FROM (SELECT MOD(CHAR_LENGTH(sensor), 3) AS band, sensor, max_id
              FROM (SELECT sensor, MAX(id) AS max_id FROM readings GROUP BY sensor)))
      WHERE rn <= 3
sinks:
{{template "mysql sink" args . "name" "db" "from" "hottest" "key" "band, rn"}}
`,
	needs: func(t *testing.T) map[string]string {
		return mysqlVars(t, map[string]string{}, "crasht")
	},
	setup: func(t *testing.T, e *env) {
		path := filepath.Join(e.Dir, "in.csv")
		writeReadings(t, path, intEnv("ETLD_CRASH_ROWS", 300_000)/3, e)
		e.data["want"] = topNTable(t, path)
	},
	check: func(t *testing.T, e *env) {
		want := e.data["want"].([]string)
		db, _ := testenv.MySQL(t)
		ref := tableRows(t, db, e.Vars["table"]+"_ref")
		slices.Sort(ref)
		if !slices.Equal(ref, want) {
			t.Fatalf("the reference run's table has %d rows, the direct computation %d; first differences:\n%s", len(ref), len(want), diffLines(want, ref))
		}
		got := tableRows(t, db, e.Vars["table"]+"_out")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("table after crashes has %d rows, want %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
		} else {
			t.Logf("table %s_out: %d rows, the top 3 of each band, equal to the direct computation", e.Vars["table"], len(got))
		}
	},
	reset: dropOut,
}

func TestCrashTopNMySQL(t *testing.T) { runScenario(t, fileTopNToMySQL) }

// topNTable computes fileTopNToMySQL's query from the readings file: per
// sensor the largest id, per band (CHAR_LENGTH(sensor) mod 3) the three
// sensors with the largest ones (ties by sensor); rows "band, rn,
// sensor, max", sorted as text.
func topNTable(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	maxID := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(l, ",")
		var id int64
		if _, err := fmt.Sscan(f[0], &id); err != nil {
			t.Fatal(err)
		}
		if cur, ok := maxID[f[1]]; !ok || id > cur {
			maxID[f[1]] = id
		}
	}
	bands := map[int][]string{}
	for s := range maxID {
		b := len(s) % 3
		bands[b] = append(bands[b], s)
	}
	var out []string
	for b, ss := range bands {
		slices.SortFunc(ss, func(x, y string) int {
			if maxID[x] != maxID[y] {
				return cmp.Compare(maxID[y], maxID[x])
			}
			return strings.Compare(x, y)
		})
		for i, s := range ss[:min(3, len(ss))] {
			out = append(out, fmt.Sprintf("%d, %d, %s, %d", b, i+1, s, maxID[s]))
		}
	}
	slices.Sort(out)
	return out
}
