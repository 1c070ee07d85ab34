package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// scalePipeline is a stateless pipeline (filter and projection) that
// several processes run on one shared consumer group, into one MySQL
// table in append mode: every row any process delivered stays there, so
// the table shows both losses (ids missing) and duplicates.
const scalePipeline = `version: 1
name: kscale
checkpoint_interval: 500ms
sources:
  - name: events
    type: kafka
    brokers: [%s]
    topic: %s
    group_id: %s
    group_shared: true
    session_timeout: 6s
    format: json
    schema:
      - id BIGINT
      - pad STRING
      - part INT METADATA FROM 'partition'
transforms:
  - name: kept
    sql: SELECT id, part, CHAR_LENGTH(pad) AS len FROM events WHERE id >= 0
sinks:
  - name: db
    from: kept
    type: mysql
    dsn: ${KSCALE_DSN}
    table: %s
    create_table: true
`

// TestKafkaSharedGroupSurvivesAKill: three etld processes on one host,
// each with its own state directory, run one stateless pipeline on one
// consumer group (group_shared) over a topic of 6 partitions. They split
// the partitions two each (default member ids of their own: none fences
// another). One is killed with SIGKILL while messages keep coming; after
// its session times out, the group gives its partitions to the other two,
// which read them on from the committed offsets. Every message arrives:
// the table holds each of the N ids, duplicates allowed (at least once:
// what the killed process delivered after its last commit is read again).
func TestKafkaSharedGroupSurvivesAKill(t *testing.T) {
	brokers := testenv.Kafka(t)
	dsn := testenv.MySQLDSN(t)
	ctx := testenv.Context(t, 4*time.Minute)
	topic := testenv.UniqueName(t, "kscale")
	const partitions, procs, total = 6, 3, 6000
	client := &kafka.Client{Addr: kafka.TCP(brokers), Timeout: 30 * time.Second}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTopics(context.Background(), &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	})
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	table := strings.ReplaceAll(testenv.UniqueName(t, "kscale"), "-", "_")
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS " + table)
		db.Close()
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "kscale.yaml")
	writeFile(t, file, fmt.Sprintf(scalePipeline, brokers, topic, topic, table))

	// The processes: same file, own state directory, own output.
	type proc struct {
		cmd *exec.Cmd
		out *lockedBuffer
	}
	start := func(i int) *proc {
		p := &proc{out: &lockedBuffer{}}
		p.cmd = exec.Command(etldBin, "run", "--quiet", "--log-format", "json", "--state-dir", filepath.Join(dir, fmt.Sprintf("state-%d", i)), file)
		p.cmd.Dir = dir
		p.cmd.Env = append(os.Environ(), "KSCALE_DSN="+dsn)
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
		return p
	}
	var ps []*proc
	for i := range procs {
		ps = append(ps, start(i))
	}
	// owns is a process's partitions in its latest generation.
	owns := func(p *proc) []string {
		var last []string
		for _, line := range strings.Split(p.out.String(), "\n") {
			var rec struct {
				Msg        string `json:"msg"`
				Partitions string `json:"partitions"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch rec.Msg {
			case "kafka source: partitions assigned":
				last = strings.Fields(strings.Trim(rec.Partitions, "[]"))
			case "kafka source: generation ended; rejoining the group":
				last = nil
			}
		}
		return last
	}
	split := func(live []*proc, each int) error {
		seen := map[string]bool{}
		for i, p := range live {
			o := owns(p)
			if len(o) != each {
				return fmt.Errorf("process %d owns %v, want %d partitions", i, o, each)
			}
			for _, tp := range o {
				if seen[tp] {
					return fmt.Errorf("partition %s owned twice", tp)
				}
				seen[tp] = true
			}
		}
		return nil
	}
	testenv.Eventually(t, 90*time.Second, "three processes own two partitions each", func() error { return split(ps, partitions/procs) })
	for i, p := range ps {
		if strings.Contains(p.out.String(), "same group_instance_id") {
			t.Errorf("process %d was fenced:\n%s", i, p.out)
		}
	}
	victim := owns(ps[0])
	t.Logf("process 0 owns %v", victim)

	// The producer writes the ids 0..total-1 round-robin over the
	// partitions, 60 at a time, paced so that the kill falls mid-stream.
	produce := func(first, end int) <-chan error {
		produced := make(chan error, 1)
		go func() {
			w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll,
				Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) })}
			defer w.Close()
			tick := time.NewTicker(10 * time.Millisecond) // the input's rate, not a wait for anything
			defer tick.Stop()
			for from := first; from < end; from += 60 {
				msgs := make([]kafka.Message, 0, 60)
				for id := from; id < min(from+60, end); id++ {
					msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"id":%d,"pad":"%s"}`, id, strings.Repeat("x", id%7)), WriterData: id % partitions})
				}
				if err := w.WriteMessages(ctx, msgs...); err != nil {
					produced <- err
					return
				}
				<-tick.C
			}
			produced <- nil
		}()
		return produced
	}
	produced := produce(0, total)
	counts := func() (rows, distinct int, err error) {
		err = db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT id) FROM "+table).Scan(&rows, &distinct)
		return rows, distinct, err
	}
	// Kill process 0 once its partitions have rows in the table and the
	// input is still coming.
	var mine int
	testenv.Eventually(t, 60*time.Second, "rows of process 0's partitions in the table", func() error {
		var p0, p1 int
		// The log may mask part of the topic's name: take the number.
		fmt.Sscanf(victim[0][strings.LastIndexByte(victim[0], '/')+1:], "%d", &p0)
		fmt.Sscanf(victim[1][strings.LastIndexByte(victim[1], '/')+1:], "%d", &p1)
		if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE part IN (?, ?)", p0, p1).Scan(&mine); err != nil {
			return err
		}
		if mine < 200 {
			return fmt.Errorf("%d rows", mine)
		}
		// And a commit of them, so that its checkpoint holds offsets
		// the others then go past: the restart below restores them.
		res, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: topic, Topics: map[string][]int{topic: {p0, p1}}})
		if err != nil {
			return err
		}
		for _, po := range res.Topics[topic] {
			if po.CommittedOffset <= 0 {
				return fmt.Errorf("partition %d: nothing committed yet", po.Partition)
			}
		}
		return nil
	})
	if err := ps[0].cmd.Process.Kill(); err != nil { // SIGKILL: no leave, no final checkpoint
		t.Fatal(err)
	}
	killedAt := time.Now()
	_ = ps[0].cmd.Wait()
	rows, distinct, _ := counts()
	t.Logf("killed process 0 with %d rows of its partitions in the table (%d rows, %d ids in all)", mine, rows, distinct)
	if distinct >= total {
		t.Fatalf("the input had all arrived before the kill: the test shows nothing; slow the producer")
	}

	testenv.Eventually(t, 90*time.Second, "the two others own three partitions each", func() error { return split(ps[1:], partitions/(procs-1)) })
	t.Logf("the partitions moved %.1f s after the kill (session_timeout 6s)", time.Since(killedAt).Seconds())
	if err := <-produced; err != nil {
		t.Fatalf("produce: %v", err)
	}
	testenv.Eventually(t, 90*time.Second, "every id in the table", func() error {
		rows, distinct, err := counts()
		if err != nil {
			return err
		}
		if distinct != total {
			return fmt.Errorf("%d of %d ids (%d rows)", distinct, total, rows)
		}
		return nil
	})
	rows, distinct, _ = counts()
	var low, high int
	if err := db.QueryRow("SELECT MIN(id), MAX(id) FROM "+table).Scan(&low, &high); err != nil {
		t.Fatal(err)
	}
	if low != 0 || high != total-1 {
		t.Errorf("ids from %d to %d, want 0 to %d", low, high, total-1)
	}
	var wrong int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table + " WHERE len <> MOD(id, 7) OR part <> MOD(id, 6)").Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%d rows with a wrong len or partition", wrong)
	}
	t.Logf("%d ids, %d rows: %d duplicates (read again after the kill)", distinct, rows, rows-distinct)

	// The killed process restarts with its state directory: the same
	// member id, a checkpoint whose offsets of its old partitions are
	// stale (the others read on from the committed offsets). The group
	// splits two by two again, and the restarted process starts each
	// partition at the committed offset where that is further than its
	// checkpoint: the rows the others delivered are not read again.
	ps[0] = start(0)
	testenv.Eventually(t, 90*time.Second, "three processes own two partitions each after the restart", func() error { return split(ps, partitions/procs) })
	// Static members are ranged in the order of their ids: the restart
	// gets back the partitions it had.
	if got := owns(ps[0]); !slices.Equal(got, victim) {
		t.Errorf("restarted process 0 owns %v, want its partitions from before the kill %v", got, victim)
	}
	if err := <-produce(total, total+600); err != nil {
		t.Fatalf("produce: %v", err)
	}
	testenv.Eventually(t, 90*time.Second, "every id after the restart in the table", func() error {
		var n int
		if err := db.QueryRow("SELECT COUNT(DISTINCT id) FROM "+table+" WHERE id >= ?", total).Scan(&n); err != nil {
			return err
		}
		if n != 600 {
			return fmt.Errorf("%d of 600 ids", n)
		}
		return nil
	})
	var again int
	if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE id < ?", total).Scan(&again); err != nil {
		t.Fatal(err)
	}
	if again != rows {
		t.Errorf("the restarted process read %d rows again that the others had delivered (its checkpoint's offsets were stale)", again-rows)
	}
	for i, p := range ps {
		if strings.Contains(p.out.String(), `"level":"ERROR"`) {
			t.Errorf("process %d logged an error:\n%s", i, p.out)
		}
	}
}
