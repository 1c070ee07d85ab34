package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func TestPosRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		input string
		p     pos
		text  string
	}{
		{"events/2", pos{num: 17}, "events/2@17"},
		{"a@b.csv", pos{num: 3, sub: 2}, "a@b.csv@3#2"},
		{"", pos{num: 0}, "@0"},
	} {
		got := string(appendPos(nil, tc.input, tc.p))
		if got != tc.text {
			t.Errorf("appendPos(%q, %+v) = %q, want %q", tc.input, tc.p, got, tc.text)
		}
		input, p, ok := parsePos([]byte(got))
		if !ok || input != tc.input || p != tc.p {
			t.Errorf("parsePos(%q) = %q, %+v, %v", got, input, p, ok)
		}
	}
	for _, bad := range []string{"", "x", "x@", "x@y", "x@1#", "x@1#0", "x@1#-2"} {
		if _, _, ok := parsePos([]byte(bad)); ok {
			t.Errorf("parsePos(%q) accepted", bad)
		}
	}
}

// TestDedupSkip: the skip rule over what a scan found, per partition and
// input: at or before the last written position is skipped, after it is
// written, and an input's entry goes once passed.
func TestDedupSkip(t *testing.T) {
	mine := []byte("p/out@abc")
	d := &dedup{id: mine, written: []map[string]pos{{}, {}}}
	hdr := func(id, p string) []kafka.Header {
		return []kafka.Header{{Key: headerSink, Value: []byte(id)}, {Key: headerPos, Value: []byte(p)}}
	}
	d.note(0, hdr("p/out@abc", "t/0@5"))
	d.note(0, hdr("p/out@abc", "t/0@9#1"))
	d.note(0, hdr("p/out@abc", "t/0@7"))   // older: the last stays 9#1
	d.note(0, hdr("q/out@abc", "t/1@100")) // another pipeline
	d.note(0, hdr("p/out@zzz", "t/1@100")) // another instance
	d.note(1, hdr("p/out@abc", "t/1@3"))
	d.note(1, []kafka.Header{{Key: headerPos, Value: []byte("t/1@50")}}) // no sink header
	d.note(1, hdr("p/out@abc", "garbage"))
	for _, m := range d.written {
		d.pending += len(m)
	}
	if d.pending != 2 {
		t.Fatalf("pending = %d, want 2 (t/0 in partition 0, t/1 in partition 1): %v", d.pending, d.written)
	}
	steps := []struct {
		part  int
		input string
		p     pos
		skip  bool
	}{
		{0, "t/0", pos{num: 9}, true},
		{0, "t/0", pos{num: 9, sub: 1}, true},
		{1, "t/0", pos{num: 9, sub: 2}, false}, // partition 1 never had t/0
		{0, "t/1", pos{num: 2}, false},         // partition 0 never had t/1 of this sink
		{1, "t/1", pos{num: 3}, true},
		{0, "t/0", pos{num: 9, sub: 2}, false}, // passed: t/0's entry goes
		{0, "t/0", pos{num: 1}, false},         // and nothing of t/0 is skipped in partition 0 again
		{1, "t/1", pos{num: 4}, false},
	}
	for i, st := range steps {
		if got := d.skip(st.part, st.input, st.p); got != st.skip {
			t.Errorf("step %d: skip(%d, %s, %+v) = %v, want %v", i, st.part, st.input, st.p, got, st.skip)
		}
	}
	if d.pending != 0 || d.skipped != 3 {
		t.Errorf("pending %d, skipped %d; want 0 and 3", d.pending, d.skipped)
	}
}

// TestDedupNumbersARecordsChanges: a record's changes are numbered in
// their input, also when another input's changes come between them (a
// UNION ALL passes its inputs' batches on as they come, and a batch may
// end within a record's changes).
func TestDedupNumbersARecordsChanges(t *testing.T) {
	d := &dedup{}
	var got []pos
	for _, r := range []struct {
		in  string
		num int64
	}{{"a", 1}, {"a", 1}, {"a", 2}, {"b", 2}, {"b", 2}, {"b", 2}, {"a", 2}, {"c", 1}, {"b", 2}, {"a", 3}, {"b", 3}} {
		got = append(got, d.next(r.in, r.num))
	}
	want := []pos{{1, 0}, {1, 1}, {2, 0}, {2, 0}, {2, 1}, {2, 2}, {2, 1}, {1, 0}, {2, 3}, {3, 0}, {3, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("next = %v, want %v", got, want)
	}
}

// TestDedupKeylessIsAFunctionOfTheRecord: keyless partitions depend on the
// record only, move on every keylessBlock records (every record
// round-robin) and spread over all partitions.
func TestDedupKeylessIsAFunctionOfTheRecord(t *testing.T) {
	d1, d2 := &dedup{}, &dedup{}
	seen := map[int]bool{}
	for num := int64(0); num < 8*keylessBlock; num++ {
		p := d1.keyless("t/3", num, 3, false)
		if q := d2.keyless("t/3", num, 3, false); p != q {
			t.Fatalf("record %d: partition %d, then %d", num, p, q)
		}
		if num%keylessBlock != 0 && p != d1.keyless("t/3", num-1, 3, false) {
			t.Fatalf("record %d left its block's partition", num)
		}
		seen[p] = true
	}
	if len(seen) != 3 {
		t.Errorf("keyless messages reached partitions %v of 3", seen)
	}
	if a, b := d1.keyless("x", 10, 4, true), d1.keyless("x", 11, 4, true); (a+1)%4 != b {
		t.Errorf("round-robin: record 10 to %d, 11 to %d", a, b)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	carried := []map[string]pos{{"t/0": {num: 5, sub: 1}, "a@b": {num: 1 << 50}}, {}, {"": {num: 0}}}
	s := &Sink{name: "out", eo: &dedup{written: carried}, parts: []*part{{id: 0, next: 12}, {id: 1, next: 0}, {id: 2, next: 1 << 40}}}
	state, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := &Sink{name: "out"}
	if err := r.Restore(state); err != nil {
		t.Fatal(err)
	}
	if want := []int64{12, 0, 1 << 40}; !slices.Equal(r.resumeAt, want) {
		t.Errorf("restored %v, want %v", r.resumeAt, want)
	}
	if !slices.EqualFunc(r.carried, carried, maps.Equal) {
		t.Errorf("restored positions %v, want %v", r.carried, carried)
	}
	for _, bad := range [][]byte{{2}, {snapshotVersion, 5, 1}, {snapshotVersion}, append(slices.Clone(state), 0), state[:len(state)-1]} {
		if err := r.Restore(bad); err == nil {
			t.Errorf("Restore(%v) accepted", bad)
		}
	}
	if err := r.Restore(nil); err != nil || r.resumeAt != nil {
		t.Errorf("Restore(nil) = %v, resumeAt %v", err, r.resumeAt)
	}
	if state, _ := (&Sink{}).Snapshot(context.Background()); state != nil {
		t.Errorf("without exactly-once mode Snapshot = %v, want nil", state)
	}
}

func TestExactlyOnceOption(t *testing.T) {
	_, err := New(Config{Kafka: kafkaconf.Config{Brokers: []string{"127.0.0.1:1"}}, Topic: "t", ExactlyOnce: "of"}, connector.SinkEnv{Name: "out", Formats: testRegistry()})
	if err == nil || !strings.Contains(err.Error(), `did you mean "off"`) {
		t.Errorf("exactly_once: of: err = %v", err)
	}
	for _, tc := range []struct {
		opt    string
		replay connector.Replay
		yes    bool
		why    string
	}{
		{"", connector.Replay{ByRecord: true}, true, ""},
		{"auto", connector.Replay{Why: "NOW() reads the clock"}, false, "NOW() reads the clock"},
		{"off", connector.Replay{ByRecord: true}, false, "exactly_once: off"},
	} {
		s, err := New(Config{Kafka: kafkaconf.Config{Brokers: []string{"127.0.0.1:1"}}, Topic: "t", ExactlyOnce: tc.opt}, connector.SinkEnv{Name: "out", Formats: testRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Bind(connector.SinkInput{Schema: testenv.Schema(t, "id BIGINT"), Mode: connector.Append, Replay: tc.replay}); err != nil {
			t.Fatal(err)
		}
		if yes, why := s.ExactlyOnce(); yes != tc.yes || why != tc.why {
			t.Errorf("exactly_once %q, %+v: ExactlyOnce() = %v, %q; want %v, %q", tc.opt, tc.replay, yes, why, tc.yes, tc.why)
		}
	}
}

// recordBatch is a batch of rows id from..to-1 read from input "in/<id%3>",
// record number id, as a Kafka source with three partitions marks them;
// each id gives as many changes as per says.
func recordBatch(from, to, per int) *row.Batch {
	b := &row.Batch{}
	pos := row.NewPositions(to-from, "/")
	for id := from; id < to; id++ {
		for k := 0; k < per; k++ {
			b.Append(row.Insert, row.Row{row.BigIntValue(int64(id)), row.StringValue(fmt.Sprintf("s%d", id%7)), row.DoubleValue(float64(k))})
		}
		pos.Mark(b.Len(), fmt.Sprintf("in/%d", id%3), int64(id))
	}
	b.Origin = pos
	return b
}

// life is one run of the sink in a pipeline with a state directory.
type life struct {
	s     *Sink
	state []byte // its last snapshot
}

func startLife(t *testing.T, addr string, cfg Config, run connector.RunInfo, restore []byte) *life {
	t.Helper()
	s, _ := newSink(t, addr, cfg, connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append, Replay: connector.Replay{ByRecord: true}})
	if restore != nil {
		if err := s.Restore(restore); err != nil {
			t.Fatal(err)
		}
		run.Restored = true
	}
	s.SetRun(run)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	return &life{s: s}
}

func (l *life) write(t *testing.T, b *row.Batch) {
	t.Helper()
	if err := l.s.Write(testenv.Context(t, time.Minute), b); err != nil {
		t.Fatal(err)
	}
}

// checkpoint flushes and snapshots, as the runtime does at a barrier.
func (l *life) checkpoint(t *testing.T) {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	if err := l.s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	state, err := l.s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.state = state
}

// crash flushes what was written (a crash after the brokers took it, the
// worst case for duplicates) and closes without a checkpoint.
func (l *life) crash(t *testing.T) {
	t.Helper()
	if err := l.s.Flush(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := l.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// counts returns how often each (id, k) of the sensor rows is in the topic.
func counts(t *testing.T, addr, topic string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, m := range readTopic(t, addr, topic) {
		var v struct {
			ID   int64
			Temp float64
		}
		if err := json.Unmarshal(m.Value, &v); err != nil {
			t.Fatalf("message %s: %v", m.Value, err)
		}
		n[fmt.Sprintf("%d.%g", v.ID, v.Temp)]++
	}
	return n
}

func checkExactlyOnce(t *testing.T, got map[string]int, ids, per int) {
	t.Helper()
	missing, dups := 0, 0
	for id := range ids {
		for k := range per {
			c := got[fmt.Sprintf("%d.%d", id, k)]
			if c == 0 {
				missing++
			}
			dups += max(0, c-1)
		}
	}
	if missing > 0 || dups > 0 || len(got) != ids*per {
		t.Errorf("%d of %d changes missing, %d duplicates, %d distinct in the topic", missing, ids*per, dups, len(got))
	}
}

// TestExactlyOnceAfterCrashes runs lives that crash after writing past
// their last checkpoint; each next life restores it and replays from
// there, as a deterministic pipeline does. The topic must end with every
// change exactly once, keyless (partitions chosen by record) and keyed.
// Another pipeline's messages with the same positions share the topic and
// must not make the sink skip anything.
func TestExactlyOnceAfterCrashes(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		per  int
	}{
		{name: "keyless", per: 1},
		{name: "keyed, two changes a record", cfg: Config{KeyFields: []string{"name"}}, per: 2},
		{name: "round-robin", cfg: Config{Partitioner: "round-robin"}, per: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addr, 3)
			cfg := tc.cfg
			cfg.Topic, cfg.Linger = topic, new(time.Duration)
			run := connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i1", Since: time.Now()}
			other := startLife(t, addr, cfg, connector.RunInfo{Resumable: true, Pipeline: "q", Instance: "i1", Since: time.Now()}, nil)
			other.write(t, recordBatch(0, 3000, tc.per))
			other.checkpoint(t)

			// Life 1: checkpoint at 1000, crash having written to 1700.
			l := startLife(t, addr, cfg, run, nil)
			l.write(t, recordBatch(0, 1000, tc.per))
			l.checkpoint(t)
			l.write(t, recordBatch(1000, 1700, tc.per))
			l.crash(t)
			// Life 2 replays from 1000, checkpoints at 1500 and crashes at 2100.
			l2 := startLife(t, addr, cfg, run, l.state)
			l2.write(t, recordBatch(1000, 1500, tc.per))
			l2.checkpoint(t)
			l2.write(t, recordBatch(1500, 2100, tc.per))
			l2.crash(t)
			// Life 3 replays from 1500, checkpoints at 1800 while it is
			// still skipping, and crashes: the checkpoint must carry what
			// is left to skip, written before its offsets.
			l3 := startLife(t, addr, cfg, run, l2.state)
			l3.write(t, recordBatch(1500, 1800, tc.per))
			l3.checkpoint(t)
			if l3.s.eo.skipped != int64(300*tc.per) {
				t.Errorf("life 3 skipped %d changes, want %d (1500 to 1800)", l3.s.eo.skipped, 300*tc.per)
			}
			l3.crash(t)
			// Life 4 replays from 1800 to the end.
			l4 := startLife(t, addr, cfg, run, l3.state)
			l4.write(t, recordBatch(1800, 3000, tc.per))
			l4.checkpoint(t)
			if l4.s.eo.skipped != int64(300*tc.per) {
				t.Errorf("life 4 skipped %d changes, want %d (1800 to 2100)", l4.s.eo.skipped, 300*tc.per)
			}

			got := counts(t, addr, topic)
			// The other pipeline wrote everything once too.
			for k, n := range got {
				got[k] = n - 1
			}
			checkExactlyOnce(t, got, 3000, tc.per)
		})
	}
}

// TestExactlyOnceCrashBeforeFirstCheckpoint: a life killed before its
// first checkpoint leaves no state but the instance; the next life starts
// over from the first record and must skip what the first wrote. A run
// under a new instance (the state was removed) writes everything again.
func TestExactlyOnceCrashBeforeFirstCheckpoint(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 2)
	cfg := Config{Topic: topic, Linger: new(time.Duration)}
	run := connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i1", Since: time.Now()}
	l := startLife(t, addr, cfg, run, nil)
	l.write(t, recordBatch(0, 800, 1))
	l.crash(t)
	l2 := startLife(t, addr, cfg, run, nil)
	l2.write(t, recordBatch(0, 2000, 1))
	l2.checkpoint(t)
	checkExactlyOnce(t, counts(t, addr, topic), 2000, 1)

	fresh := run
	fresh.Instance, fresh.Since = "i2", time.Now()
	l3 := startLife(t, addr, cfg, fresh, nil)
	l3.write(t, recordBatch(0, 2000, 1))
	l3.checkpoint(t)
	got := counts(t, addr, topic)
	for k, n := range got {
		got[k] = n - 1
	}
	checkExactlyOnce(t, got, 2000, 1)
}

// TestExactlyOnceHeadersOnlyWhenResumable: without a state directory, or
// with exactly_once: off, messages carry no headers and nothing is read
// back at Open.
func TestExactlyOnceHeadersOnlyWhenResumable(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, tc := range []struct {
		name    string
		opt     string
		run     connector.RunInfo
		headers bool
	}{
		{"resumable", "", connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i", Since: time.Now()}, true},
		{"no state dir", "", connector.RunInfo{}, false},
		{"off", "off", connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i", Since: time.Now()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addr, 1)
			l := startLife(t, addr, Config{Topic: topic, ExactlyOnce: tc.opt, Linger: new(time.Duration)}, tc.run, nil)
			l.write(t, recordBatch(0, 3, 1))
			l.checkpoint(t)
			msgs := readTopic(t, addr, topic)
			if len(msgs) != 3 {
				t.Fatalf("%d messages, want 3", len(msgs))
			}
			var got []string
			for _, h := range msgs[0].Headers {
				got = append(got, h.Key+"="+string(h.Value))
			}
			want := []string(nil)
			if tc.headers {
				want = []string{"etld-sink=p/out@i", "etld-pos=in/0@0"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("headers %v, want %v", got, want)
			}
		})
	}
}

// TestLateProduceOfAKilledLife: the first life's produce request is held
// on its way while the life is killed; the next life restores the
// checkpoint, takes a new producer epoch, and writes the replayed records
// and more; the held request reaches the broker after the next life wrote
// to its partition, or after the next life opened and before it wrote
// anything. The broker must refuse it in both cases (an older epoch than
// the partition knows), and the topic hold every record once. Without an
// epoch the held request is appended: 100 duplicates. With the epoch
// carried by the next life's batches alone, the partition learns of it at
// the first of them, so a request that arrives before is appended too.
func TestLateProduceOfAKilledLife(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release int // the records the next life writes before the release
	}{
		{"after the next life wrote", 200},
		{"before the next life wrote", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := testenv.Kafka(t)
			topic := createTopic(t, addr, 1)
			proxy := testenv.NewHoldProxy(t, addr, testenv.KafkaFraming)
			cfg := Config{Topic: topic, Linger: new(time.Duration), Kafka: kafkaconf.Config{Brokers: []string{proxy.Addr()}}}
			run := connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i1", Since: time.Now()}
			first := killWithHeldProduce(t, proxy, addr, cfg, run)

			next := startLife(t, addr, cfg, run, first.state)
			if !next.s.fenced() {
				t.Fatal("the next life writes without a producer epoch")
			}
			if tc.release > 0 {
				next.write(t, recordBatch(100, 100+tc.release, 1))
				next.checkpoint(t)
			}
			select {
			case <-proxy.Release():
			case <-testenv.Context(t, time.Minute).Done():
				t.Fatal("the held produce request was not answered")
			}
			next.write(t, recordBatch(100+tc.release, 300, 1))
			next.checkpoint(t)
			checkExactlyOnce(t, counts(t, addr, topic), 300, 1)
		})
	}
}

// killWithHeldProduce runs a first life that writes records 0 to 100,
// checkpoints, and is killed while its produce request of records 100 to
// 200 is held by proxy.
func killWithHeldProduce(t *testing.T, proxy *testenv.HoldProxy, addr string, cfg Config, run connector.RunInfo) *life {
	t.Helper()
	first := startLife(t, addr, cfg, run, nil)
	first.write(t, recordBatch(0, 100, 1))
	first.checkpoint(t)
	held := proxy.Hold(testenv.KafkaProduce)
	first.write(t, recordBatch(100, 200, 1))
	killed, kill := context.WithCancel(context.Background())
	flushed := make(chan error, 1)
	go func() { flushed <- first.s.Flush(killed) }()
	<-held
	kill()
	if err := <-flushed; err == nil {
		t.Fatal("the held flush succeeded")
	}
	// The process dies: its sender stops, its sockets end. Close cannot
	// deliver the held messages and says so.
	if err := first.s.Close(killed); err == nil || !strings.Contains(err.Error(), "not acknowledged") {
		t.Fatalf("Close of the killed life returned %v, want the unacknowledged messages named", err)
	}
	proxy.DropClients()
	return first
}

// TestRetriedProduceIsNotDuplicated: a produce request is held while its
// connection breaks, so the sink sends it again on another one and the
// broker appends it; then the first try arrives. With the sink's
// producer (a run with a state directory) the broker knows it by its
// sequence numbers and drops it; without one it would append it again.
func TestRetriedProduceIsNotDuplicated(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 1)
	proxy := testenv.NewHoldProxy(t, addr, testenv.KafkaFraming)
	cfg := Config{Topic: topic, Linger: new(time.Duration), Kafka: kafkaconf.Config{Brokers: []string{proxy.Addr()}}}
	l := startLife(t, addr, cfg, connector.RunInfo{Resumable: true, Pipeline: "p", Instance: "i1", Since: time.Now()}, nil)
	held := proxy.Hold(testenv.KafkaProduce)
	l.write(t, recordBatch(0, 100, 1))
	flushed := make(chan error, 1)
	go func() { flushed <- l.s.Flush(testenv.Context(t, time.Minute)) }()
	<-held
	proxy.DropClients() // the connection breaks: the sink tries again
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-proxy.Release():
	case <-testenv.Context(t, time.Minute).Done():
		t.Fatal("the held produce request was not answered")
	}
	checkExactlyOnce(t, counts(t, addr, topic), 100, 1)
}
