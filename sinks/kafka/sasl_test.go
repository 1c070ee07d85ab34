package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// TestPipelineSASL runs two pipelines against the broker's SASL_PLAINTEXT
// listener with SCRAM-SHA-512 and the password from ${VAR}: CSV -> kafka
// sink, then kafka source (stop: latest) -> file sink. The file must hold
// exactly the input rows, the topic (read over PLAINTEXT) exactly one
// message per row, and neither pipeline's log the password.
func TestPipelineSASL(t *testing.T) {
	plainAddr := testenv.Kafka(t)
	addr, user, password := testenv.KafkaSASL(t)
	t.Setenv("ETLD_TEST_SASL_PASSWORD", password)
	ctx := testenv.Context(t, 120*time.Second)
	dir := t.TempDir()
	topic := newTopic(t, plainAddr, 2)

	const n = 500
	var in strings.Builder
	var want []string
	for i := range n {
		name := fmt.Sprintf("user-%03d", i)
		if i%7 == 0 {
			name = fmt.Sprintf("Zoë %d", i) // not ASCII
		}
		line := fmt.Sprintf("%d,%s,%d.25", i, name, i*3)
		in.WriteString(line + "\n")
		want = append(want, line)
	}
	inPath := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(inPath, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sasl := fmt.Sprintf(`brokers: %s
    sasl:
      mechanism: SCRAM-SHA-512
      username: %s
      password: ${ETLD_TEST_SASL_PASSWORD}`, addr, user)

	logs := runLogged(t, ctx, dir, "to-kafka.yaml", fmt.Sprintf(`version: 1
name: csv-to-kafka-over-sasl
sources:
  - name: people
    type: file
    path: %s
    format: csv
    schema:
      - id BIGINT
      - name STRING
      - amount DOUBLE
sinks:
  - name: out
    from: people
    type: kafka
    %s
    topic: %s
    format: json
`, inPath, sasl, topic))

	if got := len(readAll(t, plainAddr, topic)); got != n {
		t.Fatalf("topic %s holds %d messages after the first pipeline; want %d", topic, got, n)
	}

	outPath := filepath.Join(dir, "out.csv")
	logs += runLogged(t, ctx, dir, "from-kafka.yaml", fmt.Sprintf(`version: 1
name: kafka-over-sasl-to-file
sources:
  - name: people
    type: kafka
    %s
    topic: %s
    start: earliest
    stop: latest
    format: json
    schema:
      - id BIGINT
      - name STRING
      - amount DOUBLE
sinks:
  - name: out
    from: people
    type: file
    path: %s
`, sasl, topic, outPath))

	data, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("out.csv has %d rows, want %d; first got %q, first want %q", len(got), len(want), first(got), first(want))
	}
	if !strings.Contains(logs, "SCRAM-SHA-512") {
		t.Errorf("the logs never describe the SASL connection, so the password check below proves little:\n%s", logs)
	}
	if strings.Contains(logs, password) {
		t.Errorf("the pipelines' logs hold the SASL password:\n%s", logs)
	}
}

// runLogged is runPipeline with a pipeline file of its own name and the
// logs kept (debug level), which it returns.
func runLogged(t *testing.T, ctx context.Context, dir, file, text string) string {
	t.Helper()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: logger})
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	if _, err := p.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatalf("run %s: %v\nlogs:\n%s", file, err, logs.String())
	}
	return logs.String()
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestPipelineSASLWrongPassword: a kafka sink or source whose password
// the broker refuses fails the run by itself with the broker's
// authentication error (retrying cannot fix a refused login), writes
// nothing, and no password appears in the error or the logs.
func TestPipelineSASLWrongPassword(t *testing.T) {
	plainAddr := testenv.Kafka(t)
	addr, user, password := testenv.KafkaSASL(t)
	const wrong = "not-the-pw-6c1f"
	t.Setenv("ETLD_TEST_SASL_PASSWORD", wrong)
	sasl := fmt.Sprintf(`sasl: {mechanism: SCRAM-SHA-512, username: %s, password: "${ETLD_TEST_SASL_PASSWORD}"}`, user)
	sinkTopic, sourceTopic := newTopic(t, plainAddr, 1), newTopic(t, plainAddr, 1)
	tests := []struct {
		name, yaml string
	}{
		{"sink", fmt.Sprintf(`version: 1
name: wrong-password-sink
sources:
  - name: g
    type: datagen
    rows: 10
    schema:
      - id BIGINT
sinks:
  - name: out
    from: g
    type: kafka
    brokers: %s
    %s
    topic: %s
`, addr, sasl, sinkTopic)},
		{"source", fmt.Sprintf(`version: 1
name: wrong-password-source
sources:
  - name: in
    type: kafka
    brokers: %s
    %s
    topic: %s
    format: json
    schema:
      - id BIGINT
sinks:
  - name: out
    from: in
    type: blackhole
`, addr, sasl, sourceTopic)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			logs := &testenv.Buffer{}
			p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{})
				done <- err
			}()
			var runErr error
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("a run with a wrong SASL password did not fail by itself within 30s; logs:\n%s", logs.String())
			}
			const authFailed = "SASL Authentication failed"
			if runErr == nil || !strings.Contains(runErr.Error(), authFailed) {
				t.Fatalf("run error %v, want one naming %q", runErr, authFailed)
			}
			all := runErr.Error() + "\n" + logs.String()
			if strings.Contains(all, wrong) || strings.Contains(all, password) {
				t.Errorf("error or logs hold a password:\n%s", all)
			}
		})
	}
	if got := len(readAll(t, plainAddr, sinkTopic)); got != 0 {
		t.Errorf("topic holds %d messages after a refused login; want 0", got)
	}
}
