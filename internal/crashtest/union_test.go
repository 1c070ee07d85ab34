package crashtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// (u) two files -> UNION ALL -> file, and -> GROUP BY -> file in retract
// mode: checkpoints taken through the union's aligned barriers must give,
// after any kills, exactly the reference's rows (as a multiset: how the
// two inputs interleave differs from run to run) and the reference's
// final aggregate table, every retraction matching a row held.
var fileUnionToFile = scenario{
	name: "file-union",
	pipeline: `version: 1
name: crash-union-{{.Out}}
sources:
  - name: a
    type: file
    path: {{.Dir}}/a.csv
    schema: [id BIGINT, sensor STRING, temp DOUBLE]
  - name: b
    type: file
    path: {{.Dir}}/b.csv
    schema: [id INT, sensor STRING, temp DOUBLE]
transforms:
  - name: merged
    sql: |
      SELECT id, sensor, temp FROM a WHERE temp > 10
      UNION ALL
      SELECT id, sensor, temp FROM b
  - name: stats
    sql: SELECT sensor, COUNT(*) AS n, SUM(id) AS ids FROM merged GROUP BY sensor
sinks:
  - name: all
    from: merged
    type: file
    path: {{.Dir}}/{{.Out}}.csv
  - name: stats
    from: stats
    type: file
    mode: retract
    path: {{.Dir}}/{{.Out}}.stats.csv
`,
	setup: func(t *testing.T, e *env) {
		n := intEnv("ETLD_CRASH_ROWS", 300_000) / 3
		writeReadings(t, filepath.Join(e.Dir, "a.csv"), n, e)
		writeReadings(t, filepath.Join(e.Dir, "b.csv"), n/2, e)
	},
	check: func(t *testing.T, e *env) {
		want, got := sortedLines(t, filepath.Join(e.Dir, "ref.csv")), sortedLines(t, filepath.Join(e.Dir, "out.csv"))
		if len(want) == 0 {
			t.Fatal("the reference output is empty")
		}
		if !slices.Equal(got, want) {
			t.Errorf("union output after crashes has %d rows, reference %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
		}
		wantStats, gotStats := foldRetract(t, filepath.Join(e.Dir, "ref.stats.csv")), foldRetract(t, filepath.Join(e.Dir, "out.stats.csv"))
		if !slices.Equal(gotStats, wantStats) {
			t.Errorf("aggregate over the union after crashes has %d rows, reference %d; first differences:\n%s", len(gotStats), len(wantStats), diffLines(wantStats, gotStats))
		}
	},
}

func TestCrashUnion(t *testing.T) { runScenario(t, fileUnionToFile) }

func sortedLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// foldRetract applies a retract-mode CSV (op column first) to a table
// keyed by the first data column and returns its final rows, sorted.
func foldRetract(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		op, rest, _ := strings.Cut(sc.Text(), ",")
		key, _, _ := strings.Cut(rest, ",")
		switch op {
		case "+I", "+U":
			if _, held := table[key]; held {
				t.Fatalf("%s: %s %q while the table holds %q", filepath.Base(path), op, rest, table[key])
			}
			table[key] = rest
		case "-U", "-D":
			if table[key] != rest {
				t.Fatalf("%s: %s retracts %q, but the table holds %q", filepath.Base(path), op, rest, table[key])
			}
			delete(table, key)
		default:
			t.Fatalf("%s: bad op %q", filepath.Base(path), op)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range table {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// (v) Kafka (four partitions) read twice, even and odd ids, UNION ALL a
// CSV file -> projection -> Kafka append: exactly once, as a single
// source. The union keeps no state and every message names its source
// record; the two branches over one topic name the same records, which
// the union tells apart by its input. Every event must be in the output
// once.
var unionToKafka = scenario{
	name: "union-to-kafka",
	pipeline: `version: 1
name: crash-union-kafka-{{.Out}}
sources:
  - name: events
    type: kafka
    brokers: {{.Vars.kafka}}
    topic: {{.Vars.topic}}
    group_id: ` + groupTemplate + `
    start: earliest
    stop: latest
    format: json
    schema:
      - id BIGINT
      - k STRING
      - v BIGINT
  - name: lines
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
      - id BIGINT
      - k STRING
      - v BIGINT
transforms:
  - name: doubled
    sql: |
      SELECT id, UPPER(k) AS k, v * 2 AS v2 FROM events WHERE MOD(id, 2) = 0
      UNION ALL
      SELECT id, UPPER(k) AS k, v * 2 AS v2 FROM lines
      UNION ALL
      SELECT id, UPPER(k) AS k, v * 2 AS v2 FROM events WHERE MOD(id, 2) = 1
sinks:
  - name: out
    from: doubled
    type: kafka
    brokers: {{.Vars.kafka}}
    topic: {{.Vars.topic}}_{{.Out}}{{.Round}}
    create_topic: true
    partitions: 3
    format: json
    exactly_once: ` + exactlyOnce + `
`,
	needs:      kafkaNeeds(nil),
	beforeLife: misleadGroup,
	setup: func(t *testing.T, e *env) {
		n := intEnv("ETLD_CRASH_ROWS", 300_000) / 6
		events := produceEvents(t, e, n)
		var b strings.Builder
		for i := range n {
			ev := event{ID: int64(n + i), K: fmt.Sprintf("key_%03d", e.rnd.IntN(kafkaKeys)), V: e.rnd.Int64N(1_000_000)}
			events = append(events, ev)
			fmt.Fprintf(&b, "%d,%s,%d\n", ev.ID, ev.K, ev.V)
		}
		if err := os.WriteFile(filepath.Join(e.Dir, "in.csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		e.data["events"] = events
		t.Cleanup(func() {
			topics := []string{e.Vars["topic"] + "_ref0"}
			for r := 1; r <= e.Round; r++ {
				topics = append(topics, e.Vars["topic"]+"_out"+strconv.Itoa(r))
			}
			deleteTopics(t, e.Vars["kafka"], topics...)
		})
	},
	check: kafkaToKafka.check,
}

func TestCrashUnionKafka(t *testing.T) { runScenario(t, unionToKafka) }
