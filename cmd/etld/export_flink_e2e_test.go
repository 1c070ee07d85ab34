package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// TestExportFlinkOnFlink runs every bounded example of configs/examples
// and pipelines made here for each connector and SQL construct twice:
// with etld, and exported by `etld export flink` on Flink 2.3 in local
// mode (testenv/flink.sh; all scripts in one JVM). It compares the final
// tables each run left in its sinks (print output, files, topics, MySQL
// tables) as folded text. A case whose script lists a difference that
// changes the result names it in differs: the script must list it and
// the tables must then differ, so that a stale entry shows.
//
// Not run on Flink: the Elasticsearch example (no elasticsearch-7
// connector for Flink 2.x is served to the test machines; its export is
// checked by the golden test) and the unbounded examples (kafka-orders,
// sidecar-logs).
func TestExportFlinkOnFlink(t *testing.T) {
	testenv.Flink(t)
	brokers := testenv.Kafka(t)
	dsn := testenv.MySQLDSN(t)
	t.Setenv("KAFKA_BROKERS", brokers)
	t.Setenv("ETLD_MYSQL_DSN", dsn)
	uniq := strings.TrimPrefix(testenv.UniqueName(t, "x"), "x_")
	dirs := map[string]string{"etld": workdir(t), "flink": workdir(t)}
	for _, dir := range dirs {
		writeGenData(t, dir)
	}
	cases := flinkCases()
	if pat := os.Getenv("ETLD_EXPORT_FLINK_CASES"); pat != "" {
		// Only the cases whose name matches: a quicker loop while fixing one.
		re := regexp.MustCompile(pat)
		cases = slices.DeleteFunc(cases, func(c flinkCase) bool { return !re.MatchString(c.name) })
	}
	expand := func(s, side string) string {
		return strings.NewReplacer("{{side}}", side, "{{uniq}}", uniq).Replace(s)
	}
	// The pipeline files of each side.
	for _, c := range cases {
		for side, dir := range dirs {
			text := c.yaml
			if text == "" {
				text = readFile(t, filepath.Join(dir, c.file))
			}
			for i := 0; i+1 < len(c.subst); i += 2 {
				if !strings.Contains(text, c.subst[i]) {
					t.Fatalf("%s: %q is not in the file", c.name, c.subst[i])
				}
				text = strings.ReplaceAll(text, c.subst[i], c.subst[i+1])
			}
			path := filepath.Join(dir, c.file)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(expand(text, side)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Topics: the inputs, and Flink's outputs (Flink creates none).
	var topics []string
	add := func(tp string) {
		if !slices.Contains(topics, tp) {
			topics = append(topics, tp)
		}
	}
	for _, c := range cases {
		for _, tp := range c.topics {
			add(expand(tp, "etld"))
			add(expand(tp, "flink"))
		}
		for _, s := range c.sinks {
			if strings.HasPrefix(s.kind, "kafka") {
				add(expand(s.target, "flink"))
			}
		}
	}
	createTopics(t, brokers, topics)
	for _, c := range cases {
		if c.before != nil {
			c.before(t, brokers, func(s string) []string { return []string{expand(s, "etld"), expand(s, "flink")} })
		}
	}

	// etld's runs, and the exports.
	etldOut := map[string]string{}
	var scripts []string
	password := dsnPassword(t, dsn)
	for _, c := range cases {
		stdout, stderr, code := etld(t, dirs["etld"], "run", "--quiet", c.file)
		if code != 0 {
			t.Fatalf("%s: etld run: exit %d: %s", c.name, code, stderr)
		}
		etldOut[c.name] = stdout
		script, stderr, code := etld(t, dirs["flink"], "export", "flink", "--allow-differences", c.file)
		if code != 0 {
			t.Fatalf("%s: etld export flink: exit %d: %s", c.name, code, stderr)
		}
		if c.differs != "" && !strings.Contains(script, c.differs) {
			t.Errorf("%s: the script lists no difference %q:\n%s", c.name, c.differs, script)
		}
		for _, d := range c.listed {
			if !strings.Contains(script, d) {
				t.Errorf("%s: the script lists no difference %q:\n%s", c.name, d, script)
			}
		}
		if len(password) >= 6 && strings.Contains(script, password) {
			t.Errorf("%s: the script holds the MySQL password", c.name)
		}
		// Paths relative to the Flink side's directory; placeholders
		// filled as a user would (envsubst).
		script = strings.ReplaceAll(script, "'path' = '", "'path' = '"+dirs["flink"]+"/")
		script = os.Expand(script, func(name string) string {
			switch name {
			case "ETLD_MYSQL_DSN_PASSWORD":
				return password
			}
			return os.Getenv(name)
		})
		for _, m := range createTableRE.FindAllStringSubmatch(script, -1) {
			mysqlExec(t, dsn, m[1])
		}
		path := filepath.Join(dirs["flink"], c.name+".sql")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, path)
	}

	start := time.Now()
	results := testenv.RunFlink(t, 90*time.Second, scripts...)
	t.Logf("Flink ran %d scripts in %s", len(scripts), time.Since(start).Round(time.Second))

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if results[i].Err != "" {
				t.Fatalf("Flink failed the script:\n%s\n--- script:\n%s", results[i].Err, readFile(t, scripts[i]))
			}
			equal := true
			for _, s := range c.sinks {
				got := sinkTable(t, s, "flink", dirs["flink"], results[i].Out, expand)
				want := sinkTable(t, s, "etld", dirs["etld"], etldOut[c.name], expand)
				if len(want) == 0 {
					t.Errorf("sink %s: etld's table is empty: the case tests nothing", s.target)
				}
				same := slices.Equal(got, want)
				if c.countOnly {
					same = len(got) == len(want)
				}
				equal = equal && same
				if !same && c.differs == "" {
					t.Errorf("sink %s: Flink's final table differs from etld's\n--- Flink:\n%s\n--- etld:\n%s\n--- script:\n%s",
						s.target, strings.Join(got, "\n"), strings.Join(want, "\n"), readFile(t, scripts[i]))
				}
			}
			if c.differs != "" && equal {
				t.Errorf("the tables are equal although the script lists %q as changing them: drop differs, or the difference", c.differs)
			}
		})
	}
}

// createTableRE finds the CREATE TABLE the script says to run on MySQL
// before the job (create_table: Flink's jdbc connector creates none).
var createTableRE = regexp.MustCompile(`(?m)as etld would: (CREATE TABLE .*)$`)

// flinkSink names a sink's output and how to read it.
type flinkSink struct {
	// kind is print, file, kafka-append, kafka-upsert, kafka-debezium or
	// mysql; target the path, topic or table ({{side}}, {{uniq}}).
	kind, target string
	// header: etld's csv file starts with a header line (Flink's has
	// none, a listed difference).
	header bool
}

func sinkTable(t *testing.T, s flinkSink, side, dir, printed string, expand func(string, string) string) []string {
	t.Helper()
	target := expand(s.target, side)
	switch s.kind {
	case "print":
		return foldPrinted(t, printed)
	case "file":
		return fileLines(t, filepath.Join(dir, target), s.header && side == "etld")
	case "kafka-append":
		return topicAppended(t, os.Getenv("KAFKA_BROKERS"), target)
	case "kafka-upsert":
		return topicUpserted(t, os.Getenv("KAFKA_BROKERS"), target)
	case "kafka-debezium":
		return topicDebezium(t, os.Getenv("KAFKA_BROKERS"), target)
	case "mysql":
		return tableRows(t, os.Getenv("ETLD_MYSQL_DSN"), target)
	}
	t.Fatalf("unknown sink kind %q", s.kind)
	return nil
}

func createTopics(t *testing.T, brokers string, topics []string) {
	t.Helper()
	if len(topics) == 0 {
		return
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers), Timeout: 30 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, tp := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: tp, NumPartitions: 1, ReplicationFactor: 1})
	}
	res, err := client.CreateTopics(context.Background(), req)
	if err != nil {
		t.Fatalf("creating topics: %v", err)
	}
	for tp, err := range res.Errors {
		if err != nil {
			t.Fatalf("creating topic %s: %v", tp, err)
		}
	}
}

// produce writes JSON values to every topic names gives.
func produce(t *testing.T, brokers string, topics []string, values ...string) {
	t.Helper()
	for _, tp := range topics {
		w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: tp, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
		msgs := make([]kafka.Message, len(values))
		for i, v := range values {
			msgs[i] = kafka.Message{Value: []byte(v)}
		}
		if err := w.WriteMessages(context.Background(), msgs...); err != nil {
			t.Fatalf("producing to %s: %v", tp, err)
		}
		w.Close()
	}
}
