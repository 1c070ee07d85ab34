package kafka

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// TestStatefulSourceRefusesAShareOfTheGroup: a source under an operator
// that keeps state (the planner called KeepsState) that joins a group in
// which another member holds partitions of its topics fails at once,
// permanently, with the reason and the way out, and leaves the group; the
// member that was there gets every partition back and reads on.
func TestStatefulSourceRefusesAShareOfTheGroup(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 4)
	group := testenv.UniqueName(t, "g")
	for i := range 4 {
		produce(t, addr, topic, msg(i, "", fmt.Sprintf(`{"id":%d}`, i)))
	}
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Format: connector.FormatSpec{Type: "json"}}
	cfg.GroupInstanceID = group + "-a"
	a := ts.open(t, cfg, nil)
	readN(t, a, 4, 10)

	cfg.GroupInstanceID = group + "-b"
	b := ts.build(t, cfg)
	b.KeepsState(`transform "counts" (GroupAggregate(groupBy=[k], select=[COUNT(*)]))`)
	ctx := testenv.Context(t, 60*time.Second)
	if err := b.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSource(t, b) })
	var err error
	n := 0
	for err == nil && ctx.Err() == nil {
		var got int
		if batch, rerr := b.Read(ctx, 10); batch != nil {
			got = batch.Len()
		} else {
			err = rerr
		}
		n += got
	}
	for _, want := range []string{"other members hold partitions", `transform "counts"`, "keeps state", "etld export flink"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the stateful newcomer's Read: %v, want an error containing %q", err, want)
		}
	}
	if !retry.IsPermanent(err) {
		t.Errorf("the refusal is not permanent: a restart would only meet the same group")
	}
	if n > 0 {
		t.Errorf("the refused member read %d rows of its share before refusing", n)
	}
	testenv.Eventually(t, 45*time.Second, "a owns all 4 partitions again", func() error {
		if oa := a.owned(); len(oa) != 4 {
			return fmt.Errorf("a owns %v", oa)
		}
		return nil
	})
	produce(t, addr, topic, msg(2, "", `{"id":9}`))
	if got := readN(t, a, 1, 10); got[0].Row[0].Int64() != 9 {
		t.Errorf("a read %v after the newcomer left, want id 9", got[0].Row)
	}
}

// TestRebalanceCommitsWhatWasDeliveredFirst: told of a rebalance, a
// member asks the runtime for a checkpoint and waits for its Commit
// before it gives its partitions up; that commit, still in the old
// generation, holds every row it read, so the partitions' next owner
// starts after them and reads none of them again.
func TestRebalanceCommitsWhatWasDeliveredFirst(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := testenv.KafkaTopic(t, addr, 4)
	group := testenv.UniqueName(t, "g")
	batch := func(from int) {
		for i := from; i < from+40; i++ {
			produce(t, addr, topic, msg(i%4, "", fmt.Sprintf(`{"id":%d}`, i)))
		}
	}
	batch(0)
	ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
	cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, Format: connector.FormatSpec{Type: "json"}}
	cfg.GroupInstanceID = group + "-a"
	a := ts.build(t, cfg)
	asked := make(chan struct{}, 1)
	a.AskCheckpoints(func() {
		select {
		case asked <- struct{}{}:
		default:
		}
	})
	ctx := testenv.Context(t, 90*time.Second)
	if err := a.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSource(t, a) })
	readN(t, a, 40, 100) // delivered, not committed: no checkpoint yet

	cfg.GroupInstanceID = group + "-b"
	b := ts.open(t, cfg, nil)
	// The runtime's part: a checkpoint (Position at the barrier, Commit
	// once the sinks have the rows), on a's goroutine.
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("a did not ask for a checkpoint on the rebalance within 30 s")
	}
	pos, err := a.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx, pos); err != nil {
		t.Fatal(err)
	}
	committed := groupOffsets(t, addr, group, topic, 4)
	for p := range 4 {
		if committed[p] != 10 {
			t.Errorf("partition %d committed at %d before the rebalance, want 10 (all a read)", p, committed[p])
		}
	}
	testenv.Eventually(t, 45*time.Second, "the partitions split between the members", func() error {
		if oa, ob := a.owned(), b.owned(); len(oa) != 2 || len(ob) != 2 {
			return fmt.Errorf("a owns %v, b owns %v", oa, ob)
		}
		return nil
	})
	batch(40)
	for _, c := range readN(t, b, 20, 100) {
		if id := c.Row[0].Int64(); id < 40 {
			t.Errorf("b read id %d again, which a had delivered before the rebalance", id)
		}
	}
}

// TestRestoredOffsetAgainstCommitted: a restored checkpoint's offset wins
// over the group's committed one, as in Flink, unless the group is
// declared shared: there a further committed offset is where another
// process delivered up to while this one was down.
func TestRestoredOffsetAgainstCommitted(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			topic := testenv.KafkaTopic(t, addr, 1)
			group := testenv.UniqueName(t, "g")
			for i := range 8 {
				produce(t, addr, topic, msg(0, "", fmt.Sprintf(`{"id":%d}`, i)))
			}
			// Another member's commit, made while this process was down.
			client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 10 * time.Second}
			res, err := client.OffsetCommit(testenv.Context(t, 30*time.Second), &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
				Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 5}}}})
			if err == nil {
				err = commitError(res)
			}
			if err != nil {
				t.Fatal(err)
			}
			ts := testSource{schema: testenv.Schema(t, "id BIGINT")}
			cfg := Config{Kafka: kafkaconf.Config{Brokers: []string{addr}}, Topic: []string{topic}, GroupID: group, GroupShared: shared, Format: connector.FormatSpec{Type: "json"}}
			s := ts.open(t, cfg, fmt.Appendf(nil, `{"v":1,"offsets":{"%s/0":2}}`, topic))
			want := int64(2)
			if shared {
				want = 5
			}
			if got := readN(t, s, 1, 1)[0].Row[0].Int64(); got != want {
				t.Errorf("first id read %d, want %d", got, want)
			}
		})
	}
}
