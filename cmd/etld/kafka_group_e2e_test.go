package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// groupPipeline reads a topic as a member of a consumer group and prints
// every row.
const groupPipeline = `version: 1
name: kgroup
checkpoint_interval: 1s
sources:
  - name: events
    type: kafka
    brokers: [%s]
    topic: %s
    group_id: %s
    format: json
    schema: [id BIGINT]
sinks:
  - name: out
    from: events
    type: print
`

// TestKafkaGroupTakesItsPartitionsBackAfterAKill: a kill -9 leaves the
// killed member in the group until its session times out (30 s by
// default). The restarted process joins with the same static member id
// (group_instance_id, derived from the pipeline, source and host), so it
// takes the killed member's place, and its partitions, at once, instead
// of waiting for that timeout.
func TestKafkaGroupTakesItsPartitionsBackAfterAKill(t *testing.T) {
	brokers := testenv.Kafka(t)
	ctx := testenv.Context(t, 3*time.Minute)
	topic := testenv.KafkaTopic(t, brokers, 2)
	dir := t.TempDir()
	file := filepath.Join(dir, "kgroup.yaml")
	writeFile(t, file, fmt.Sprintf(groupPipeline, brokers, topic, topic))
	state := t.TempDir()
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) })}
	defer w.Close()
	produce := func(id int) {
		t.Helper()
		if err := w.WriteMessages(ctx,
			kafka.Message{Value: fmt.Appendf(nil, `{"id":%d}`, id), WriterData: 0},
			kafka.Message{Value: fmt.Appendf(nil, `{"id":%d}`, id), WriterData: 1}); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}

	// Each life prints id n from both partitions: then both are its own.
	life := func(n int) (*exec.Cmd, time.Duration) {
		t.Helper()
		out := &lockedBuffer{}
		cmd := exec.Command(etldBin, "run", "--quiet", "--log-format", "json", file)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ETLD_STATE_DIR="+state, "ETLD_ADMIN_ADDRESS=127.0.0.1:0")
		cmd.Stdout, cmd.Stderr = out, out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		produce(n)
		want := fmt.Sprintf("+I[%d]", n)
		deadline := time.Now().Add(90 * time.Second)
		for strings.Count(out.String(), want) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("life %d printed %q %d times in 90 s, want 2:\n%s", n, want, strings.Count(out.String(), want), out)
			}
			time.Sleep(20 * time.Millisecond) // polling the output, not waiting for it
		}
		took := time.Since(start)
		t.Logf("life %d: both partitions read %.1f s after start", n, took.Seconds())
		return cmd, took
	}
	first, _ := life(1)
	if err := first.Process.Kill(); err != nil { // SIGKILL: no leave, no final checkpoint
		t.Fatal(err)
	}
	_ = first.Wait()
	_, took := life(2)
	if took > 8*time.Second {
		t.Errorf("after a kill -9 the restarted member read its partitions after %.1f s, want within 8 s (not after the killed member's session timeout)", took.Seconds())
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
