package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/testenv"
)

// resetKafkaPipeline counts a topic's orders per category, as a member
// of a consumer group, to the topic's end (stop: latest).
const resetKafkaPipeline = `version: 1
name: kreset
sources:
  - name: orders
    type: kafka
    brokers: [%[1]s]
    topic: %[2]s
    group_id: %[2]s
    stop: latest
    format: json
    schema: [cat STRING, price BIGINT]
transforms:
  - name: bycat
    sql: SELECT cat, COUNT(*) AS n, SUM(price) AS total FROM orders GROUP BY cat
sinks:
  - name: out
    from: bycat
    type: print
`

// TestStateResetKafka: removing a pipeline's state by hand, as etld once
// advised, makes a Kafka source resume from its group's committed
// offsets with an empty GROUP BY, a table of the topic's tail (the
// baseline below shows it); `etld state reset` also deletes the group's
// offsets, so that the next run over the same topic gives the table a
// first run over all of it gives.
func TestStateResetKafka(t *testing.T) {
	brokers := testenv.Kafka(t)
	ctx := testenv.Context(t, 2*time.Minute)
	topic := testenv.KafkaTopic(t, brokers, 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "kreset.yaml")
	writeFile(t, file, fmt.Sprintf(resetKafkaPipeline, brokers, topic))
	state := filepath.Join(dir, "state")
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	produce := func(orders ...string) {
		t.Helper()
		var msgs []kafka.Message
		for _, o := range orders {
			cat, price, _ := strings.Cut(o, ":")
			msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"cat":%q,"price":%s}`, cat, price)})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	table := func() []string {
		t.Helper()
		// The print sink writes to the process's stdout.
		cmd := exec.CommandContext(ctx, etldBin, "run", "--quiet", "--state-dir", state, file)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("etld run: %v: %s", err, stderr.String())
		}
		return foldPrinted(t, stdout.String())
	}

	produce("a:10", "a:20", "b:5")
	if got, want := table(), []string{"a, 2, 30", "b, 1, 5"}; !slices.Equal(got, want) {
		t.Fatalf("first run: %v, want %v", got, want)
	}
	produce("a:1", "c:7")
	whole := []string{"a, 3, 31", "b, 1, 5", "c, 1, 7"}

	// The baseline: the state removed by hand.
	if err := os.RemoveAll(filepath.Join(state, "kreset")); err != nil {
		t.Fatal(err)
	}
	if got, want := table(), []string{"a, 1, 1", "c, 1, 7"}; !slices.Equal(got, want) {
		t.Fatalf("a run after the state was removed by hand: %v; want the topic's tail %v (the group's offsets win)", got, want)
	}

	// Refused while a daemon holds the state directory, and without the
	// pipeline file.
	release, err := daemon.LockStateDir(state)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := etldCLI("state", "reset", state, "kreset", "--pipeline", file)
	release()
	if code != 1 || !strings.Contains(stderr, "held by a running etld (pid ") {
		t.Fatalf("reset beside a daemon: exit %d: %s", code, stderr)
	}
	if code, _, stderr := etldCLI("state", "reset", state, "kreset"); code != 2 || !strings.Contains(stderr, "--pipeline FILE") {
		t.Fatalf("reset without the pipeline file: exit %d: %s", code, stderr)
	}

	code, stdout, stderr := etldCLI("state", "reset", state, "kreset", "--pipeline", file)
	if code != 0 {
		t.Fatalf("etld state reset: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("source orders: deleted the committed offsets of consumer group %q (%s/0 at 5)", topic, topic),
		"removed the state of pipeline kreset in " + state,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("etld state reset said:\n%s\nwant a line with %q", stdout, want)
		}
	}
	if got := table(); !slices.Equal(got, whole) {
		t.Fatalf("a run after etld state reset: %v, want the whole topic's %v", got, whole)
	}
	// A pipeline whose state was removed by hand (the whole state
	// directory here) is reset outside all the same: the offsets the last
	// run committed go.
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = etldCLI("state", "reset", state, "kreset", "--pipeline", file)
	if code != 0 || !strings.Contains(stdout, "deleted the committed offsets") || !strings.Contains(stdout, "had no state") {
		t.Fatalf("reset of a pipeline without state: exit %d: %s%s", code, stdout, stderr)
	}
	if got := table(); !slices.Equal(got, whole) {
		t.Fatalf("a run after the second reset: %v, want %v", got, whole)
	}
}

// TestStateResetKafkaRefusedWhileTheGroupReads: a run of the pipeline
// elsewhere (another state directory, another host: the state
// directory's lock cannot see it) is a member of the group, and the
// broker refuses to delete the offsets of a topic members read: the
// reset fails, saying so, and leaves the state as it was; once the run
// stopped (a graceful stop leaves the group) it goes through.
func TestStateResetKafkaRefusedWhileTheGroupReads(t *testing.T) {
	brokers := testenv.Kafka(t)
	ctx := testenv.Context(t, 2*time.Minute)
	topic := testenv.KafkaTopic(t, brokers, 1)
	dir := t.TempDir()
	bounded := filepath.Join(dir, "bounded", "kreset.yaml")
	if err := os.MkdirAll(filepath.Dir(bounded), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, bounded, fmt.Sprintf(resetKafkaPipeline, brokers, topic))
	file := filepath.Join(dir, "kreset.yaml")
	writeFile(t, file, strings.Replace(fmt.Sprintf(resetKafkaPipeline, brokers, topic), "    stop: latest\n", "", 1))
	state, elsewhere := filepath.Join(dir, "state"), filepath.Join(dir, "elsewhere")
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(`{"cat":"a","price":1}`)}); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", state, bounded); code != 0 {
		t.Fatalf("the run that leaves the state to reset: exit %d: %s", code, stderr)
	}
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(`{"cat":"a","price":2}`)}); err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd := exec.CommandContext(ctx, etldBin, "run", "--quiet", "--state-dir", elsewhere, "--checkpoint-interval", "100ms", file)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Eventually(t, time.Minute, "the run elsewhere read the new row", func() error {
		if !strings.Contains(out.String(), "+I[a, 1, 2]") { // from the group's committed offset
			return fmt.Errorf("output so far: %q", out.String())
		}
		return nil
	})
	code, stdout, stderr := etldCLI("state", "reset", state, "kreset", "--pipeline", file)
	if code != 1 || !strings.Contains(stderr, "a running pipeline reads it") {
		t.Fatalf("reset while the group reads: exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(state, "kreset", "MANIFEST")); err != nil {
		t.Fatalf("a refused reset touched the state: %v", err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("etld run: %v: %s", err, out.String())
	}
	code, stdout, stderr = etldCLI("state", "reset", state, "kreset", "--pipeline", file)
	if code != 0 || !strings.Contains(stdout, "deleted the committed offsets") || !strings.Contains(stdout, "removed the state") {
		t.Fatalf("reset after the run stopped: exit %d: %s%s", code, stdout, stderr)
	}
}
