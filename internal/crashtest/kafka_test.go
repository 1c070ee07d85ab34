package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// The input of the Kafka scenarios: JSON events {"id","k","v"} spread
// over several partitions.
const (
	kafkaPartitions = 4
	kafkaKeys       = 200
)

// event is one input message.
type event struct {
	ID int64  `json:"id"`
	K  string `json:"k"`
	V  int64  `json:"v"`
}

// Every life of a round uses the same consumer group, as a restarted
// process would. The bounded source (stop: latest) reads every partition
// itself and uses the group only for committed offsets, so the members of
// killed lives cannot keep partitions from it. Before a life that
// restores a checkpoint, misleadGroup commits random offsets to the
// group: the source must start at the checkpoint's offsets, not at the
// group's (rows counted twice or missing otherwise).
//
// ETLD_CRASH_KAFKA_GROUP_PER_LIFE=1 gives every life a group of its own.
var sameGroup = os.Getenv("ETLD_CRASH_KAFKA_GROUP_PER_LIFE") == ""

// groupTemplate is the group_id of the scenarios' pipelines.
var groupTemplate = func() string {
	if sameGroup {
		return "{{.Vars.group}}_{{.Out}}{{.Round}}"
	}
	return "{{.Vars.group}}_{{.Out}}{{.Round}}_{{.Life}}"
}()

// groupID is the group groupTemplate names for a round and life (life 0:
// the reference run, or one group per round).
func groupID(e *env, out string, round, life int) string {
	if sameGroup || life == 0 {
		return fmt.Sprintf("%s_%s%d", e.Vars["group"], out, round)
	}
	return fmt.Sprintf("%s_%s%d_%d", e.Vars["group"], out, round, life)
}

// misleadGroup commits random offsets of the input topic to the group of
// a life that restores a checkpoint (see sameGroup).
// It also notes every group used, for the cleanup.
func misleadGroup(t *testing.T, e *env, restoring bool) {
	t.Helper()
	group := groupID(e, "out", e.Round, e.Life)
	e.data["groups"].(map[string]bool)[group] = true
	if !restoring {
		return
	}
	commitOffsets(t, e, group, func(_ int, end int64) int64 { return e.rnd.Int64N(end + 1) })
}

// commitOffsets commits, for every partition of the input topic, the
// offset at gives to group, which has no members.
func commitOffsets(t *testing.T, e *env, group string, at func(partition int, end int64) int64) {
	t.Helper()
	var commits []kafka.OffsetCommit
	for p, end := range e.data["ends"].(map[int]int64) {
		commits = append(commits, kafka.OffsetCommit{Partition: p, Offset: at(p, end)})
	}
	client := &kafka.Client{Addr: kafka.TCP(e.Vars["kafka"]), Timeout: 30 * time.Second}
	ctx := testenv.Context(t, 60*time.Second)
	resp, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{e.Vars["topic"]: commits},
	})
	if err == nil {
		for _, p := range resp.Topics[e.Vars["topic"]] {
			if p.Error != nil {
				err = p.Error
			}
		}
	}
	if err != nil {
		t.Fatalf("committing offsets to group %s: %v", group, err)
	}
}

// kafkaNeeds gives the scenario a broker, an input topic and a group name.
func kafkaNeeds(extra func(t *testing.T, vars map[string]string)) func(t *testing.T) map[string]string {
	return func(t *testing.T) map[string]string {
		vars := map[string]string{
			"kafka": testenv.Kafka(t),
			"topic": testenv.UniqueName(t, "crash"),
			"group": testenv.UniqueName(t, "crashg"),
		}
		if extra != nil {
			extra(t, vars)
		}
		return vars
	}
}

// produceEvents creates the input topic and writes n events to it with a
// plain kafka-go Writer, keyed by k; it stores them for the checks. The
// topic and every group the runs may have used are deleted at the end.
func produceEvents(t *testing.T, e *env, n int) []event {
	t.Helper()
	addr, topic := e.Vars["kafka"], e.Vars["topic"]
	createTopic(t, addr, topic, kafkaPartitions)
	t.Cleanup(func() {
		groups := []string{groupID(e, "ref", 0, 0)}
		for g := range e.data["groups"].(map[string]bool) {
			groups = append(groups, g)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
		// Best effort: a group whose killed member has not timed out yet
		// is not empty and cannot be deleted; the broker expires it.
		_, _ = client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: groups})
	})

	events := make([]event, n)
	msgs := make([]kafka.Message, n)
	for i := range events {
		events[i] = event{ID: int64(i), K: fmt.Sprintf("key_%03d", e.rnd.IntN(kafkaKeys)), V: e.rnd.Int64N(1_000_000)}
		b, err := json.Marshal(events[i])
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = kafka.Message{Key: []byte(events[i].K), Value: b}
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(addr),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		BatchSize:    1000,
	}
	ctx := testenv.Context(t, 2*time.Minute)
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e.data["events"] = events
	e.data["ends"] = endOffsets(t, addr, topic)
	e.data["groups"] = map[string]bool{}
	return events
}

func createTopic(t *testing.T, addr, topic string, partitions int) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	ctx := testenv.Context(t, 60*time.Second)
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}},
	})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
	t.Cleanup(func() { deleteTopics(t, addr, topic) })
}

func deleteTopics(t *testing.T, addr string, topics ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	resp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: topics})
	if err != nil {
		t.Logf("deleting topics %v: %v", topics, err)
		return
	}
	for topic, err := range resp.Errors {
		if err != nil && err != kafka.UnknownTopicOrPartition {
			t.Logf("deleting topic %s: %v", topic, err)
		}
	}
}

// endOffsets returns the end offset of every partition of topic.
func endOffsets(t *testing.T, addr, topic string) map[int]int64 {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatalf("partitions of %s: %v", topic, err)
	}
	ends := map[int]int64{}
	for _, p := range parts {
		pc, err := kafka.DialLeader(ctx, "tcp", addr, topic, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		last, err := pc.ReadLastOffset()
		pc.Close()
		if err != nil {
			t.Fatalf("end offset of %s/%d: %v", topic, p.ID, err)
		}
		ends[p.ID] = last
	}
	return ends
}

// readTopic reads every message a topic holds now, all partitions.
func readTopic(t *testing.T, addr, topic string) []kafka.Message {
	t.Helper()
	ctx := testenv.Context(t, 2*time.Minute)
	var out []kafka.Message
	for p, last := range endOffsets(t, addr, topic) {
		if last == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: []string{addr}, Topic: topic, Partition: p,
			MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 100 * time.Millisecond,
		})
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("reading %s/%d: %v", topic, p, err)
			}
			out = append(out, m)
			if m.Offset >= last-1 {
				break
			}
		}
		r.Close()
	}
	return out
}

// (b) Kafka (several partitions, a consumer group, bounded by stop:
// latest) -> GROUP BY with a HAVING that removes and re-adds groups ->
// Elasticsearch upsert. Restoring a checkpoint must start every partition
// at the checkpoint's offsets, not the group's committed ones (a commit
// follows its checkpoint, so a kill between them leaves the group behind
// the checkpoint, and reading from there would count rows twice). The
// index must end with exactly one document per key holding the final
// values, as computed directly from the input.
var kafkaGroupByToES = scenario{
	name: "kafka-groupby-elasticsearch",
	pipeline: `version: 1
name: crash-kafka-es-{{.Out}}
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
transforms:
  - name: stats
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS max_v
      FROM events
      GROUP BY k
      HAVING MOD(COUNT(*), 3) <> 0
sinks:
  - name: es
    from: stats
    type: elasticsearch
    hosts: {{.Vars.es}}
    index: {{.Vars.index}}_{{.Out}}
`,
	needs: kafkaNeeds(func(t *testing.T, vars map[string]string) {
		vars["es"] = testenv.ElasticsearchURL(t)
		vars["index"] = testenv.UniqueName(t, "crash")
	}),
	beforeLife: misleadGroup,
	setup: func(t *testing.T, e *env) {
		events := produceEvents(t, e, intEnv("ETLD_CRASH_ROWS", 300_000)/5)
		e.Vars["want"] = strings.Join(groupByTable(events), "\n")
		t.Cleanup(func() {
			esDelete(e.Vars["es"], e.Vars["index"]+"_ref")
			esDelete(e.Vars["es"], e.Vars["index"]+"_out")
		})
	},
	check: func(t *testing.T, e *env) {
		want := strings.Split(e.Vars["want"], "\n")
		ref := esDocs(t, e.Vars["es"], e.Vars["index"]+"_ref")
		if !slices.Equal(ref, want) {
			t.Fatalf("the reference run's index has %d documents, the direct computation %d rows; first differences:\n%s", len(ref), len(want), diffLines(want, ref))
		}
		got := esDocs(t, e.Vars["es"], e.Vars["index"]+"_out")
		if !slices.Equal(got, want) {
			t.Errorf("index after crashes has %d documents, want %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
		} else {
			t.Logf("index %s_out: %d documents, one per key, equal to the direct computation", e.Vars["index"], len(got))
		}
	},
	reset: func(t *testing.T, e *env) {
		if err := esDelete(e.Vars["es"], e.Vars["index"]+"_out"); err != nil {
			t.Fatal(err)
		}
	},
}

// groupByTable computes the scenario's query directly: per key, COUNT,
// SUM and MAX of v, keeping keys whose count is not a multiple of 3; the
// rows are id=k, k, n, total, max_v, in key order.
func groupByTable(events []event) []string {
	type agg struct{ n, total, maxV int64 }
	m := map[string]*agg{}
	for _, ev := range events {
		a := m[ev.K]
		if a == nil {
			a = &agg{maxV: ev.V}
			m[ev.K] = a
		}
		a.n++
		a.total += ev.V
		a.maxV = max(a.maxV, ev.V)
	}
	var out []string
	for k, a := range m {
		if a.n%3 != 0 {
			out = append(out, fmt.Sprintf("%s: k=%s n=%d total=%d max_v=%d", k, k, a.n, a.total, a.maxV))
		}
	}
	sort.Strings(out)
	return out
}

// esDocs refreshes index and returns its documents as "_id: fields" in
// _id order.
func esDocs(t *testing.T, url, index string) []string {
	t.Helper()
	if _, err := esCall(http.MethodPost, url+"/"+index+"/_refresh", ""); err != nil {
		t.Fatalf("refresh %s: %v", index, err)
	}
	body, err := esCall(http.MethodPost, url+"/"+index+"/_search",
		`{"size":10000,"track_total_hits":true,"query":{"match_all":{}}}`)
	if err != nil {
		t.Fatalf("search %s: %v", index, err)
	}
	var resp struct {
		Hits struct {
			Total struct{ Value int }
			Hits  []struct {
				ID     string                     `json:"_id"`
				Source map[string]json.RawMessage `json:"_source"`
			}
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("search %s: %v", index, err)
	}
	if resp.Hits.Total.Value != len(resp.Hits.Hits) {
		t.Fatalf("search %s: %d hits of %d", index, len(resp.Hits.Hits), resp.Hits.Total.Value)
	}
	var out []string
	for _, h := range resp.Hits.Hits {
		var k string
		_ = json.Unmarshal(h.Source["k"], &k)
		out = append(out, fmt.Sprintf("%s: k=%s n=%s total=%s max_v=%s", h.ID, k, h.Source["n"], h.Source["total"], h.Source["max_v"]))
	}
	sort.Strings(out)
	return out
}

func esCall(method, url, body string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return b, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// esDelete deletes an index; one that does not exist is fine.
func esDelete(url, index string) error {
	_, err := esCall(http.MethodDelete, url+"/"+index+"?ignore_unavailable=true", "")
	return err
}

// exactlyOnce is the Kafka sinks' exactly_once option in the scenarios:
// auto, unless ETLD_CRASH_KAFKA_EXACTLY_ONCE=off measures at-least-once
// delivery (duplicates are then counted, not refused).
var exactlyOnce = func() string {
	if os.Getenv("ETLD_CRASH_KAFKA_EXACTLY_ONCE") == "off" {
		return "off"
	}
	return "auto"
}()

// (d) Kafka (four partitions) -> projection -> Kafka append (three
// partitions, keyless): exactly once. Every input event must be in the
// output topic once, with the projected value: a restored run reads back
// what the killed one wrote after the checkpoint and skips it.
var kafkaToKafka = scenario{
	name: "kafka-to-kafka",
	pipeline: `version: 1
name: crash-kafka-kafka-{{.Out}}
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
transforms:
  - name: doubled
    sql: |
      SELECT id, UPPER(k) AS k, v * 2 AS v2
      FROM events
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
		produceEvents(t, e, intEnv("ETLD_CRASH_ROWS", 300_000)/3)
		t.Cleanup(func() {
			topics := []string{e.Vars["topic"] + "_ref0"}
			for r := 1; r <= e.Round; r++ {
				topics = append(topics, e.Vars["topic"]+"_out"+strconv.Itoa(r))
			}
			deleteTopics(t, e.Vars["kafka"], topics...)
		})
	},
	check: func(t *testing.T, e *env) {
		events := e.data["events"].([]event)
		if d := checkAppend(t, events, readTopic(t, e.Vars["kafka"], e.Vars["topic"]+"_ref0"), "reference"); d != 0 {
			t.Errorf("the uninterrupted reference run wrote %d duplicates", d)
		}
		topic := fmt.Sprintf("%s_out%d", e.Vars["topic"], e.Round)
		reportDuplicates(t, topic, len(events), checkAppend(t, events, readTopic(t, e.Vars["kafka"], topic), "after crashes"))
	},
}

// reportDuplicates logs the duplicates of an exactly-once scenario's
// output and fails on any, unless exactly-once is off.
func reportDuplicates(t *testing.T, topic string, events, dups int) {
	t.Helper()
	t.Logf("topic %s: every one of %d events present, %d duplicates (%.2f%%), exactly_once: %s", topic, events, dups, 100*float64(dups)/float64(events), exactlyOnce)
	if dups > 0 && exactlyOnce != "off" {
		t.Errorf("topic %s: %d duplicates; exactly-once output must have none", topic, dups)
	}
}

// (e) file (CSV) -> projection -> Kafka append (three partitions,
// keyless): exactly once, the records named by file and line.
var fileToKafka = scenario{
	name: "file-to-kafka",
	pipeline: `version: 1
name: crash-file-kafka-{{.Out}}
sources:
  - name: events
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
      SELECT id, UPPER(k) AS k, v * 2 AS v2
      FROM events
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
	needs: kafkaNeeds(nil),
	setup: func(t *testing.T, e *env) {
		n := intEnv("ETLD_CRASH_ROWS", 300_000) / 3
		events := make([]event, n)
		var b strings.Builder
		for i := range events {
			events[i] = event{ID: int64(i), K: fmt.Sprintf("key_%03d", e.rnd.IntN(kafkaKeys)), V: e.rnd.Int64N(1_000_000)}
			fmt.Fprintf(&b, "%d,%s,%d\n", events[i].ID, events[i].K, events[i].V)
		}
		if err := os.WriteFile(e.Dir+"/in.csv", []byte(b.String()), 0o644); err != nil {
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
	check: func(t *testing.T, e *env) {
		events := e.data["events"].([]event)
		if d := checkAppend(t, events, readTopic(t, e.Vars["kafka"], e.Vars["topic"]+"_ref0"), "reference"); d != 0 {
			t.Errorf("the uninterrupted reference run wrote %d duplicates", d)
		}
		topic := fmt.Sprintf("%s_out%d", e.Vars["topic"], e.Round)
		reportDuplicates(t, topic, len(events), checkAppend(t, events, readTopic(t, e.Vars["kafka"], topic), "after crashes"))
	},
}

// checkAppend checks that out holds every event, projected, at least once
// and nothing else; it returns the number of duplicates.
func checkAppend(t *testing.T, events []event, out []kafka.Message, what string) int {
	t.Helper()
	seen := make([]int, len(events))
	bad := 0
	for _, m := range out {
		var o struct {
			ID int64
			K  string
			V2 int64
		}
		err := json.Unmarshal(m.Value, &o)
		switch {
		case err != nil:
			t.Errorf("%s: undecodable message at %s/%d@%d: %v", what, m.Topic, m.Partition, m.Offset, err)
		case o.ID < 0 || o.ID >= int64(len(events)):
			t.Errorf("%s: unknown id %d in %s", what, o.ID, m.Value)
		case o.K != strings.ToUpper(events[o.ID].K) || o.V2 != 2*events[o.ID].V:
			t.Errorf("%s: message %s; want k %s, v2 %d", what, m.Value, strings.ToUpper(events[o.ID].K), 2*events[o.ID].V)
		default:
			seen[o.ID]++
			continue
		}
		if bad++; bad > 5 {
			t.FailNow()
		}
	}
	missing, dups := 0, 0
	var first []int
	for id, n := range seen {
		if n == 0 {
			missing++
			if len(first) < 10 {
				first = append(first, id)
			}
		}
		dups += max(0, n-1)
	}
	if missing > 0 {
		t.Errorf("%s: %d of %d events missing from the output (%d messages, %d duplicates); first missing ids %v",
			what, missing, len(events), len(out), dups, first)
	}
	return dups
}

func TestCrashKafka(t *testing.T) {
	for _, sc := range []scenario{kafkaGroupByToES, kafkaToKafka, fileToKafka} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// TestMisleadingOffsetsAreSeen shows that misleadGroup's commits would
// mislead a source that used them: without a checkpoint, the committed
// offsets win over start (sources/kafka's rule 3), so a run in a group
// committed at the end reads nothing, and one committed halfway reads
// exactly the rest. The Kafka scenarios pass only because restored
// positions win over these commits.
func TestMisleadingOffsetsAreSeen(t *testing.T) {
	vars := kafkaNeeds(nil)(t)
	e := &env{Dir: t.TempDir(), Vars: vars, rnd: rand.New(rand.NewPCG(1, 2)), data: map[string]any{}}
	events := produceEvents(t, e, 2000)
	ends := e.data["ends"].(map[int]int64)
	t.Cleanup(func() { deleteTopics(t, vars["kafka"], vars["topic"]+"_out1") })
	for _, tc := range []struct {
		name string
		at   func(end int64) int64
	}{
		{"at the end", func(end int64) int64 { return end }},
		{"halfway", func(end int64) int64 { return end / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Round, e.Life = 1, e.Life+1
			want := 0
			for _, end := range ends {
				want += int(end - tc.at(end))
			}
			group := groupID(e, "out", e.Round, e.Life)
			e.data["groups"].(map[string]bool)[group] = true
			commitOffsets(t, e, group, func(_ int, end int64) int64 { return tc.at(end) })
			e.Out = "out"
			file := e.render(t, kafkaToKafka.pipeline, "out")
			p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := p.Run(testenv.Context(t, 2*time.Minute), pipeline.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var read int64
			for _, c := range sum.Sources {
				read += c.Out
			}
			if read != int64(want) {
				t.Errorf("the source read %d of %d events from a group committed %s; want %d", read, len(events), tc.name, want)
			}
		})
	}
}
