package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
)

func TestBoundedRead(t *testing.T) {
	addr := testenv.Kafka(t)
	tests := []struct {
		format string
		values []string
		want4  string // the fourth row
	}{
		{"json", []string{`{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`, `{"id":3,"name":"c"}`, `{"id":4,"name":null}`, `{"id":5,"name":"e"}`}, "+I[4, null]"},
		// csv's empty field is '' in a STRING column, as in Flink.
		{"csv", []string{"1,a", "2,b", "3,c", "4,", "5,e"}, "+I[4, ]"},
	}
	for _, tt := range tests {
		want := []string{"+I[1, a]", "+I[2, b]", "+I[3, c]", tt.want4, "+I[5, e]"}
		t.Run(tt.format, func(t *testing.T) {
			topic := testenv.KafkaTopic(t, addr, 2)
			var msgs []kafka.Message
			for i, v := range tt.values {
				msgs = append(msgs, msg(i%2, "", v))
			}
			produce(t, addr, topic, msgs...)
			ts := testSource{schema: testenv.Schema(t, "id BIGINT", "name STRING")}
			s := ts.open(t, Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: tt.format}}, nil)
			if !s.Bounded() {
				t.Fatal("stop: latest is not bounded")
			}
			got := conntest.ReadAll(t, s, 100)
			if !reflect.DeepEqual(printed(got), want) {
				t.Errorf("read %v, want %v", printed(got), want)
			}
			// A bounded source that ended stays ended.
			if _, err := s.Read(context.Background(), 10); !errors.Is(err, io.EOF) {
				t.Errorf("Read after the end: %v, want io.EOF", err)
			}
			if s.Bytes() == 0 || s.Lag() != 0 {
				t.Errorf("Bytes = %d, Lag = %d; want > 0 and 0 at the end", s.Bytes(), s.Lag())
			}
		})
	}
}

func TestBoundedEmptyTopicEnds(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 3)
	s := testSource{schema: testenv.Schema(t, "id BIGINT")}.open(t, Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}, nil)
	if got := conntest.ReadAll(t, s, 100); len(got) != 0 {
		t.Errorf("read %v from an empty topic", got)
	}
}

func TestMetadataAndKeyColumns(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	at := time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	m1 := msg(1, `{"k":7}`, `{"name":"x","k":999}`)
	m1.Time = at
	m2 := msg(1, "", `{"name":"y"}`)
	m2.Time = at.Add(time.Second)
	produce(t, addr, topic, m1, m2)

	// Columns in an order that is not the value's, so that the value, the
	// key and the metadata land at their places.
	ts := testSource{
		schema: testenv.Schema(t, "t STRING", "k BIGINT", "name STRING", "p INT", "off BIGINT", "ts TIMESTAMP_LTZ(3)", "raw_key BYTES"),
		meta:   []string{"topic", "", "", "partition", "offset", "timestamp", "key"},
	}
	s := ts.open(t, Config{
		Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest",
		Format: connector.FormatSpec{Type: "json"}, KeyFormat: connector.FormatSpec{Type: "json"},
		KeyFields: []string{"k"}, ValueFieldsInclude: "except_key",
	}, nil)
	if keys := s.MetadataKeys(); keys["timestamp"].ID != row.TimestampLTZ || keys["offset"].ID != row.BigInt {
		t.Errorf("MetadataKeys = %v", keys)
	}
	got := conntest.ReadAll(t, s, 100)
	if len(got) != 2 {
		t.Fatalf("read %v, want 2 rows", got)
	}
	r0, r1 := got[0].Row, got[1].Row
	if r0[0].Str() != topic || r0[1].Int64() != 7 || r0[2].Str() != "x" || r0[3].Int64() != 1 || r0[4].Int64() != 0 ||
		!r0[5].Time().Equal(at) || r0[6].Str() != `{"k":7}` {
		t.Errorf("first row %v: want topic %s, key column 7 (from the key, not the value's 999), partition 1, offset 0, %v, raw key", r0, topic, at)
	}
	if r1[1].IsNull() != true || r1[4].Int64() != 1 || !r1[6].IsNull() || !r1[5].Time().Equal(at.Add(time.Second)) {
		t.Errorf("second row %v: want a NULL key column and key, offset 1", r1)
	}
}

func TestDebeziumIsAChangelog(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	produce(t, addr, topic,
		msg(0, "", `{"before":null,"after":{"id":1,"v":"a"},"op":"c"}`),
		msg(0, "", `{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}`),
		msg(0, "", `{"before":{"id":1,"v":"b"},"after":null,"op":"d"}`),
		msg(0, "", ``), // the tombstone Debezium sends after a delete
	)
	s := testSource{schema: testenv.Schema(t, "id BIGINT", "v STRING")}.open(t,
		Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "debezium-json"}}, nil)
	if !s.Updating() {
		t.Error("a debezium-json source is not updating")
	}
	var got []string
	for _, c := range conntest.ReadAll(t, s, 100) {
		got = append(got, c.String())
	}
	want := []string{"+I[1, a]", "-U[1, a]", "+U[1, b]", "-D[1, b]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}

func TestBadMessagesFollowOnError(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(0, "", `{"id":"x"}`), msg(0, "", `{"id":3}`))
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
	schema := testenv.Schema(t, "id BIGINT")

	t.Run("skip", func(t *testing.T) {
		var bad []connector.BadRecord
		s := testSource{schema: schema, reject: func(b connector.BadRecord) error { bad = append(bad, b); return nil }}.open(t, cfg, nil)
		got := printed(conntest.ReadAll(t, s, 100))
		if !reflect.DeepEqual(got, []string{"+I[1]", "+I[3]"}) {
			t.Errorf("read %v", got)
		}
		want := topic + "/0/1"
		if len(bad) != 1 || bad[0].Position != want || string(bad[0].Raw) != `{"id":"x"}` || !strings.Contains(bad[0].Error(), "id") {
			t.Errorf("rejected %+v, want one record at %s", bad, want)
		}
	})
	t.Run("fail", func(t *testing.T) {
		stop := errors.New("on_error: fail")
		s := testSource{schema: schema, reject: func(b connector.BadRecord) error { return fmt.Errorf("%w: %v", stop, b) }}.open(t, cfg, nil)
		ctx := testenv.Context(t, 30*time.Second)
		var got []row.Change
		var err error
		for err == nil {
			var b *row.Batch
			b, err = s.Read(ctx, 10)
			if b != nil {
				got = append(got, b.Changes...)
			}
		}
		if !errors.Is(err, stop) || !strings.Contains(err.Error(), topic+"/0/1") {
			t.Errorf("Read error %v, want the policy's error naming %s/0/1", err, topic)
		}
		if len(got) != 1 {
			t.Errorf("read %v before the bad message, want +I[1]", got)
		}
		// The position stays before the bad message, so that no
		// checkpoint steps over it.
		pos, _ := s.Position()
		if want := fmt.Sprintf(`{"v":1,"offsets":{"%[1]s/0":1},"from":{"%[1]s/0":0}}`, topic); string(pos) != want {
			t.Errorf("Position = %s, want %s", pos, want)
		}
		if _, again := s.Read(ctx, 10); !errors.Is(again, stop) {
			t.Errorf("second Read = %v, want the same error", again)
		}
	})
}

// TestNotJSONMessageSaysSo: a plain-text message on a JSON topic is
// reported as not JSON, with its offset in the record and an excerpt,
// not as "expected a JSON object, got null".
func TestNotJSONMessageSaysSo(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(0, "", `not json`))
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
	var bad []connector.BadRecord
	s := testSource{schema: testenv.Schema(t, "id BIGINT"), reject: func(b connector.BadRecord) error { bad = append(bad, b); return nil }}.open(t, cfg, nil)
	if got := printed(conntest.ReadAll(t, s, 100)); !reflect.DeepEqual(got, []string{"+I[1]"}) {
		t.Errorf("read %v, want +I[1]", got)
	}
	want := topic + `/0/1: invalid JSON at byte 0: not a JSON value; expected a JSON object (near "not json")`
	if len(bad) != 1 || bad[0].Error() != want {
		t.Fatalf("rejected %v, want one record: %s", bad, want)
	}
}

// TestPositionRestoreResumesExactly reads part of two partitions, takes
// the position, and a new source restored there reads exactly the rest.
func TestPositionRestoreResumesExactly(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	var msgs []kafka.Message
	for i := range 40 {
		msgs = append(msgs, msg(i%2, "", fmt.Sprintf(`{"id":%d}`, i)))
	}
	produce(t, addr, topic, msgs...)
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Format: connector.FormatSpec{Type: "json"}}
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}

	s1 := ts.open(t, cfg, nil)
	first := readN(t, s1, 15, 7)
	pos, err := s1.Position()
	if err != nil {
		t.Fatal(err)
	}
	var p position
	if err := json.Unmarshal(pos, &p); err != nil {
		t.Fatal(err)
	}
	if n := p.Offsets[topic+"/0"] + p.Offsets[topic+"/1"]; n != 15 {
		t.Errorf("position %s sums to %d offsets, want the 15 rows read", pos, n)
	}
	closeSource(t, s1)

	// Restore wins over start: latest.
	cfg.Start = "latest"
	s2 := ts.open(t, cfg, pos)
	rest := readN(t, s2, 25, 100)
	seen := map[int64]int{}
	for _, c := range append(first, rest...) {
		seen[c.Row[0].Int64()]++
	}
	for i := range int64(40) {
		if seen[i] != 1 {
			t.Errorf("id %d read %d times, want once", i, seen[i])
		}
	}
	// Nothing more: a Read now waits until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if b, err := s2.Read(ctx, 10); b != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read past the end = %v, %v; want nothing until the deadline", b, err)
	}
	if lag := s2.Lag(); lag != 0 {
		t.Errorf("Lag = %d at the end, want 0", lag)
	}
}

// TestCommitThenGroupOffsetsResume commits a position to the group; a new
// member of the group starts there, and nothing read before the commit
// but after the position is lost.
func TestCommitThenGroupOffsetsResume(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	group := testenv.UniqueName(t, "g")
	var msgs []kafka.Message
	for i := range 30 {
		msgs = append(msgs, msg(i%2, "", fmt.Sprintf(`{"id":%d}`, i)))
	}
	produce(t, addr, topic, msgs...)
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Format: connector.FormatSpec{Type: "json"}}
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}

	s1 := ts.open(t, cfg, nil)
	first := readN(t, s1, 10, 4)
	pos, err := s1.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Commit(testenv.Context(t, 30*time.Second), pos); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	// Rows read after the committed position are not delivered: the next
	// member must read them again.
	readN(t, s1, 5, 5)
	closeSource(t, s1)

	committed := groupOffsets(t, addr, group, topic, 2)
	var p position
	if err := json.Unmarshal(pos, &p); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if want := p.Offsets[fmt.Sprintf("%s/%d", topic, i)]; committed[i] != want {
			t.Errorf("committed offset of partition %d = %d, want %d from the position", i, committed[i], want)
		}
	}

	cfg.Start = "group-offsets"
	s2 := ts.open(t, cfg, nil)
	rest := readN(t, s2, 20, 100)
	seen := map[int64]int{}
	for _, c := range append(first, rest...) {
		seen[c.Row[0].Int64()]++
	}
	for i := range int64(30) {
		if seen[i] != 1 {
			t.Errorf("id %d read %d times, want once", i, seen[i])
		}
	}
}

// groupOffsets reads a group's committed offsets of partitions 0..n-1.
func groupOffsets(t *testing.T, addr, group, topic string, n int) []int64 {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	var parts []int
	for i := range n {
		parts = append(parts, i)
	}
	res, err := client.OffsetFetch(testenv.Context(t, 30*time.Second), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err != nil {
		t.Fatalf("OffsetFetch: %v", err)
	}
	out := make([]int64, n)
	for _, p := range res.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

func TestStartModes(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var msgs []kafka.Message
	for i := range 6 {
		m := msg(0, "", fmt.Sprintf(`{"id":%d}`, i))
		m.Time = base.Add(time.Duration(i) * time.Minute)
		msgs = append(msgs, m)
	}
	produce(t, addr, topic, msgs...)
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	cfg := func(start, at string) Config {
		return Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, Start: start, StartTimestamp: at, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
	}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"earliest", cfg("earliest", ""), []string{"+I[0]", "+I[1]", "+I[2]", "+I[3]", "+I[4]", "+I[5]"}},
		{"latest", cfg("latest", ""), []string{}},
		{"timestamp ms", cfg("timestamp", fmt.Sprint(base.Add(4*time.Minute).UnixMilli())), []string{"+I[4]", "+I[5]"}},
		{"timestamp rfc3339", cfg("timestamp", base.Add(3*time.Minute-time.Second).Format(time.RFC3339Nano)), []string{"+I[3]", "+I[4]", "+I[5]"}},
		{"timestamp after the end", cfg("timestamp", fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := printed(conntest.ReadAll(t, ts.open(t, tt.cfg, nil), 100))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
}

// owned lists the partitions s reads now.
func (s *Source) owned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for tp, p := range s.parts {
		if p.cur.Load() != nil {
			out = append(out, tp.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestRebalance: a second member takes half of the partitions. Each member
// then reads and positions only its own, and a member's stale commit does
// not move back the offsets of partitions it gave away.
func TestRebalance(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 4)
	group := testenv.UniqueName(t, "g")
	batch := func(from int) []kafka.Message {
		var msgs []kafka.Message
		for i := from; i < from+40; i++ {
			msgs = append(msgs, msg(i%4, "", fmt.Sprintf(`{"id":%d}`, i)))
		}
		return msgs
	}
	produce(t, addr, topic, batch(0)...)
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Format: connector.FormatSpec{Type: "json"}}
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	ctx := testenv.Context(t, 60*time.Second)

	// Two processes of one group each have their own static member id.
	cfg.GroupInstanceID = group + "-a"
	a := ts.open(t, cfg, nil)
	readN(t, a, 40, 100)
	stale, _ := a.Position()
	if err := a.Commit(ctx, stale); err != nil {
		t.Fatal(err)
	}

	cfg.GroupInstanceID = group + "-b"
	b := ts.open(t, cfg, nil)
	testenv.Eventually(t, 45*time.Second, "the partitions split between the members", func() error {
		if oa, ob := a.owned(), b.owned(); len(oa) != 2 || len(ob) != 2 {
			return fmt.Errorf("a owns %v, b owns %v", oa, ob)
		}
		return nil
	})
	produce(t, addr, topic, batch(40)...)
	got := append(readN(t, a, 20, 100), readN(t, b, 20, 100)...)
	seen := map[int64]int{}
	for _, c := range got {
		seen[c.Row[0].Int64()]++
	}
	for i := int64(40); i < 80; i++ {
		if seen[i] != 1 {
			t.Errorf("id %d read %d times, want once", i, seen[i])
		}
	}

	var pa position
	posA, _ := a.Position()
	if err := json.Unmarshal(posA, &pa); err != nil {
		t.Fatal(err)
	}
	if len(pa.Offsets) != 2 {
		t.Errorf("a's position %s names partitions it no longer owns (%v)", posA, a.owned())
	}
	posB, _ := b.Position()
	if err := b.Commit(ctx, posB); err != nil {
		t.Fatal(err)
	}
	// a's position from before the rebalance names all four partitions at
	// 10; only a's own two may be committed from it.
	if err := a.Commit(ctx, stale); err != nil {
		t.Fatal(err)
	}
	committed := groupOffsets(t, addr, group, topic, 4)
	for _, tp := range b.owned() {
		var n int
		fmt.Sscanf(tp[strings.LastIndexByte(tp, '/')+1:], "%d", &n)
		if committed[n] != 20 {
			t.Errorf("committed offset of b's %s = %d, want 20 (a's stale commit must not move it back)", tp, committed[n])
		}
	}
}

// TestBoundedGroupCommitsRestoredOffsets: a bounded source with a
// group_id never joins the group, so a commit it makes before its readers
// are placed (the runtime commits a restored checkpoint right after Open)
// commits the checkpoint's offsets as they are, rather than logging that
// the group is rebalancing.
func TestBoundedGroupCommitsRestoredOffsets(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	group := testenv.UniqueName(t, "g")
	var msgs []kafka.Message
	for i := range 10 {
		msgs = append(msgs, msg(i%2, "", fmt.Sprintf(`{"id":%d}`, i)))
	}
	produce(t, addr, topic, msgs...)
	logs := &testenv.Buffer{}
	ts := testSource{schema: testenv.Schema(t, "id BIGINT"), logger: slog.New(slog.NewTextHandler(logs, nil))}
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Stop: "latest", Format: connector.FormatSpec{Type: "json"}}
	pos := []byte(fmt.Sprintf(`{"v":1,"offsets":{"%s/0":3,"%s/1":2}}`, topic, topic))
	s := ts.open(t, cfg, pos)
	if err := s.Commit(testenv.Context(t, 30*time.Second), pos); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := groupOffsets(t, addr, group, topic, 2); got[0] != 3 || got[1] != 2 {
		t.Errorf("committed offsets %v, want [3 2] from the restored checkpoint", got)
	}
	if rest := conntest.ReadAll(t, s, 100); len(rest) != 5 {
		t.Errorf("read %d rows after the restored offsets, want 5", len(rest))
	}
	if strings.Contains(logs.String(), "rebalancing") {
		t.Errorf("a bounded source, never a member, logged a rebalance:\n%s", logs)
	}
}

// TestGracefulStopLeavesTheGroup: a source that closes leaves the group,
// so another member (a different static id) gets its partitions at once,
// not after the closed one's session timeout (30s).
func TestGracefulStopLeavesTheGroup(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 2)
	group := testenv.UniqueName(t, "g")
	produce(t, addr, topic, msg(0, "", `{"id":1}`), msg(1, "", `{"id":2}`))
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Format: connector.FormatSpec{Type: "json"}}
	cfg.GroupInstanceID = group + "-a"
	a := ts.open(t, cfg, nil)
	readN(t, a, 2, 10)
	closeSource(t, a)

	cfg.GroupInstanceID = group + "-b"
	start := time.Now()
	b := ts.open(t, cfg, nil)
	testenv.Eventually(t, 20*time.Second, "b owns both partitions", func() error {
		if ob := b.owned(); len(ob) != 2 {
			return fmt.Errorf("b owns %v", ob)
		}
		return nil
	})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the next member got the partitions %.1f s after the first one closed, want within 5 s", took.Seconds())
	}
}

// TestSameInstanceIDFencesTheOlderMember: a second member under the same
// group_instance_id takes the first one's place; the first stops with an
// error that says why and is permanent (restarting it would fence the
// second in turn).
func TestSameInstanceIDFencesTheOlderMember(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 1)
	group := testenv.UniqueName(t, "g")
	produce(t, addr, topic, msg(0, "", `{"id":1}`))
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, GroupInstanceID: group + "-same", Format: connector.FormatSpec{Type: "json"}}
	a := ts.open(t, cfg, nil)
	readN(t, a, 1, 10)
	b := ts.open(t, cfg, nil)
	readN(t, b, 1, 10)
	ctx := testenv.Context(t, 30*time.Second)
	var err error
	for err == nil && ctx.Err() == nil {
		_, err = a.Read(ctx, 10)
	}
	if err == nil || !strings.Contains(err.Error(), "same group_instance_id") || !retry.IsPermanent(err) {
		t.Errorf("the fenced member's Read: %v (permanent %v), want a permanent error naming the group_instance_id", err, retry.IsPermanent(err))
	}
}
