package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/formats/csv"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/blackhole"
	"github.com/etld/etld/sinks/file"
	"github.com/etld/etld/sinks/mysql"
	srcfile "github.com/etld/etld/sources/file"
	srcmysql "github.com/etld/etld/sources/mysql"
	srcpg "github.com/etld/etld/sources/postgres"
)

// probeConfig is a test source with a password option, as database and
// broker connectors have, that can fail to connect.
type probeConfig struct {
	Password  string `yaml:"password"`
	Port      int    `yaml:"port"`
	Fail      int64  `yaml:"fail"`      // Open fails this many times
	Permanent bool   `yaml:"permanent"` // and the failure is permanent
	Endless   bool   `yaml:"endless"`   // Read waits for the stop
	// Panic names where the probe panics: new (its constructor, while
	// the file is planned), open or read.
	Panic string `yaml:"panic"`
	// BadRecord makes Read hand a record it cannot decode to the
	// source's on_error policy.
	BadRecord bool `yaml:"bad_record"`
	Rows      int  `yaml:"rows"` // rows Read emits first
}

type probe struct {
	cfg     probeConfig
	emitted bool
	opens   *atomic.Int64
	reject  func(connector.BadRecord) error
}

func (p *probe) Bounded() bool { return !p.cfg.Endless }

func (p *probe) Open(ctx context.Context) error {
	if p.cfg.Panic == "open" {
		panic("probe: open bug")
	}
	if p.opens.Add(1) <= p.cfg.Fail {
		// Drivers often put the DSN, password included, in their errors:
		// as it is, escaped in a URL, quoted, or cut at a delimiter.
		pw := p.cfg.Password
		u := url.URL{Scheme: "probe", User: url.UserPassword("admin", pw), Host: fmt.Sprintf("127.0.0.1:%d", p.cfg.Port)}
		err := fmt.Errorf("connect to probe://admin:%s@127.0.0.1:%d (%s, password %q, near %s): connection refused", pw, p.cfg.Port, u.String(), pw, pw[:len(pw)/2])
		if p.cfg.Permanent {
			return retry.Permanent(err)
		}
		return err
	}
	return nil
}

func (p *probe) Read(ctx context.Context, max int) (*row.Batch, error) {
	if p.cfg.Panic == "read" {
		var rows []row.Row
		_ = rows[max] // index out of range, as a decoder bug would be
	}
	if p.cfg.BadRecord {
		if err := p.reject(connector.BadRecord{Position: "probe.log:3", Raw: []byte("x=oops"), Err: errors.New("column x: not an integer")}); err != nil {
			return nil, err
		}
	}
	if p.cfg.Rows > 0 && !p.emitted {
		p.emitted = true
		b := row.NewBatch(p.cfg.Rows, 1)
		for i := range p.cfg.Rows {
			r := b.NewRow()
			r[0] = row.IntValue(int32(i))
			b.Append(row.Insert, r)
		}
		return b, nil
	}
	if p.cfg.Endless {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, io.EOF
}

func (p *probe) Close(ctx context.Context) error { return nil }

// refuser is a sink whose target refuses every row for good, as a
// database refuses a value too long for its column.
type refuser struct {
	blackhole.Sink
	reject func(connector.BadRecord) error
}

func (s *refuser) Write(ctx context.Context, b *row.Batch) error {
	for i := range b.Changes {
		bad := connector.BadRecord{Position: fmt.Sprintf("sink out, change %d of the batch", i+1), Err: errors.New("data too long for column x")}
		if err := s.reject(bad); err != nil {
			return err
		}
	}
	return nil
}

// harness is a supervisor over a temp dir with the probe source.
type harness struct {
	t     *testing.T
	dir   string
	sup   *Supervisor
	logs  *testenv.Buffer
	opens *atomic.Int64
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, dir: t.TempDir(), logs: &testenv.Buffer{}, opens: &atomic.Int64{}}
	r := connector.NewRegistry()
	blackhole.Register(r)
	file.Register(r)
	mysql.Register(r)
	srcfile.Register(r)
	srcpg.Register(r)
	srcmysql.Register(r)
	csv.Register(r)
	connector.RegisterSource(r, "probe", "test source", func(c probeConfig, env connector.SourceEnv) (connector.Source, error) {
		if c.Panic == "new" {
			panic("probe: options bug")
		}
		return &probe{cfg: c, opens: h.opens, reject: env.Reject}, nil
	})
	connector.RegisterSink(r, "refuser", "test sink whose target refuses every row for good", func(_ struct{}, env connector.SinkEnv) (connector.Sink, error) {
		return &refuser{reject: env.Reject}, nil
	})
	secrets := redact.NewSet()
	logger := slog.New(secrets.Handler(slog.NewJSONHandler(h.logs, nil)))
	h.sup = New(Options{
		Dir:     h.dir,
		Load:    NewLoader(pipeline.Env{Registry: r, Logger: logger}, os.LookupEnv),
		Logger:  logger,
		Backoff: retry.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond},
		Secrets: secrets,
		// Abandoned runs say where they resume.
		StateDir: filepath.Join(h.dir, ".state"),
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.sup.Shutdown(ctx)
	})
	return h
}

// pipelineYAML is a pipeline named name whose probe source has opts.
func pipelineYAML(name, opts string) string {
	return fmt.Sprintf("version: 1\nname: %s\nsources:\n  - name: src\n    type: probe\n    schema: [x INT]\n%s\nsinks:\n  - name: out\n    from: src\n    type: blackhole\n", name, opts)
}

func (h *harness) write(file, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, file), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) reload() ReloadResult {
	h.t.Helper()
	res, err := h.sup.Reload()
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func (h *harness) status(file string) Status {
	for _, st := range h.sup.Status() {
		if filepath.Base(st.File) == file {
			return st
		}
	}
	h.t.Fatalf("no status for %s", file)
	return Status{}
}

// waitState polls until file is in state.
func (h *harness) waitState(file string, want State) Status {
	h.t.Helper()
	var st Status
	testenv.Eventually(h.t, 10*time.Second, file+" "+string(want), func() error {
		st = h.status(file)
		if st.State != want {
			return fmt.Errorf("state %s (error %q)", st.State, st.Error)
		}
		return nil
	})
	return st
}

func TestOnePipelineFailingStopsNoOther(t *testing.T) {
	h := newHarness(t)
	h.write("a-endless.yaml", pipelineYAML("endless", "    endless: true"))
	h.write("b-broken-conn.yaml", pipelineYAML("broken", "    fail: 1000\n    permanent: true"))
	h.write("c-bounded.yaml", pipelineYAML("bounded", ""))
	h.write("d-invalid.yaml", "version: 1\nname: [oops\n")
	h.write("notes.txt", "not a pipeline")
	res := h.reload()
	if len(res.Started) != 3 || len(res.Failed) != 1 {
		t.Errorf("reload = %+v, want 3 started and 1 failed", res)
	}
	h.waitState("a-endless.yaml", Running)
	if st := h.waitState("b-broken-conn.yaml", Failed); !strings.Contains(st.Error, "connection refused") {
		t.Errorf("failed pipeline's error = %q", st.Error)
	}
	h.waitState("c-bounded.yaml", Finished)
	if st := h.status("d-invalid.yaml"); st.State != Failed || !strings.Contains(st.Error, "d-invalid.yaml:1:1: invalid YAML") || st.Name != "d-invalid" {
		t.Errorf("invalid file: %+v, want failed with a file:line error", st)
	}
	if len(h.sup.Status()) != 4 {
		t.Errorf("status lists %d files, want the 4 pipeline files", len(h.sup.Status()))
	}
	ready, reasons := h.sup.Ready(true)
	if ready || len(reasons) != 2 || !strings.Contains(strings.Join(reasons, "\n"), "broken") {
		t.Errorf("Ready = %v %q, want not ready because of the two failed files", ready, reasons)
	}
	// The endless one still runs after the others ended.
	if st := h.status("a-endless.yaml"); st.State != Running {
		t.Errorf("endless pipeline is %s", st.State)
	}
}

// TestTestFilesAreNotPipelines: a NAME_test.yaml beside a pipeline holds
// its unit tests (etld test), not a pipeline; the daemon leaves it out.
func TestTestFilesAreNotPipelines(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", pipelineYAML("p", ""))
	h.write("p_test.yaml", "tests:\n  - name: one\n    inputs: {}\n")
	res := h.reload()
	if len(res.Started) != 1 || len(res.Failed) != 0 {
		t.Errorf("reload = %+v, want the pipeline started and nothing failed", res)
	}
	h.waitState("p.yaml", Finished)
	if n := len(h.sup.Status()); n != 1 {
		t.Errorf("status lists %d files, want only p.yaml: %+v", n, h.sup.Status())
	}
}

func TestTransientFailureIsRetried(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", pipelineYAML("p", "    fail: 3\n    endless: true"))
	h.reload()
	// Each attempt reports running before its source opens, so running
	// alone may be the first, failing attempt: wait for the 4th open.
	testenv.Eventually(t, 10*time.Second, "a 4th open", func() error {
		if n := h.opens.Load(); n < 4 {
			return fmt.Errorf("%d opens", n)
		}
		return nil
	})
	st := h.waitState("p.yaml", Running)
	if st.Restarts != 3 || h.opens.Load() != 4 {
		t.Errorf("restarts = %d, opens = %d; want 3 restarts and a 4th open that worked", st.Restarts, h.opens.Load())
	}
	if !strings.Contains(h.logs.String(), "restarting after a backoff") {
		t.Errorf("no retry logged:\n%s", h.logs)
	}
	if ready, reasons := h.sup.Ready(true); !ready {
		t.Errorf("not ready after recovering: %q", reasons)
	}
}

func TestReload(t *testing.T) {
	h := newHarness(t)
	h.write("same.yaml", pipelineYAML("same", "    endless: true"))
	h.write("edit.yaml", pipelineYAML("edit", "    endless: true"))
	h.write("typo.yaml", pipelineYAML("typo", "    endless: true"))
	h.write("gone.yaml", pipelineYAML("gone", "    endless: true"))
	h.reload()
	for _, f := range []string{"same.yaml", "edit.yaml", "typo.yaml", "gone.yaml"} {
		h.waitState(f, Running)
	}
	before := map[string]Status{}
	for _, st := range h.sup.Status() {
		before[filepath.Base(st.File)] = st
	}

	h.write("edit.yaml", pipelineYAML("edit", "    endless: true\n    port: 2"))
	h.write("typo.yaml", pipelineYAML("typo", "    endless: true\n    prot: 2"))
	h.write("new.yaml", pipelineYAML("new", "    endless: true"))
	h.write("clash.yaml", pipelineYAML("same", "    endless: true"))
	if err := os.Remove(filepath.Join(h.dir, "gone.yaml")); err != nil {
		t.Fatal(err)
	}
	res := h.reload()
	want := ReloadResult{
		Started:   []string{"new.yaml"},
		Stopped:   []string{"gone.yaml"},
		Restarted: []string{"edit.yaml"},
		Unchanged: []string{"same.yaml"},
		Failed:    []string{"clash.yaml", "typo.yaml"},
	}
	if got := baseNames(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reload = %+v\nwant %+v", got, want)
	}

	if st := h.status("same.yaml"); st.State != Running || !st.StartedAt.Equal(*before["same.yaml"].StartedAt) {
		t.Errorf("unchanged pipeline was touched: %+v (started %v before)", st, before["same.yaml"].StartedAt)
	}
	if st := h.waitState("edit.yaml", Running); !st.StartedAt.After(*before["edit.yaml"].StartedAt) {
		t.Errorf("changed pipeline was not restarted: started %v, before %v", st.StartedAt, before["edit.yaml"].StartedAt)
	}
	st := h.status("typo.yaml")
	if st.State != Running || !st.StartedAt.Equal(*before["typo.yaml"].StartedAt) || !strings.Contains(st.ReloadError, `did you mean "port"`) {
		t.Errorf("broken edit: %+v, want the old version running with the reload error", st)
	}
	if st := h.status("clash.yaml"); st.State != Failed || !strings.Contains(st.Error, "already used by") {
		t.Errorf("duplicate name: %+v", st)
	}
	h.waitState("new.yaml", Running)
	for _, st := range h.sup.Status() {
		if filepath.Base(st.File) == "gone.yaml" {
			t.Errorf("removed file still listed: %+v", st)
		}
	}
	if !strings.Contains(h.logs.String(), "changed pipeline file does not load; the previous version keeps running") {
		t.Errorf("broken edit not logged:\n%s", h.logs)
	}

	// Fixing the typo restarts it with the new content and clears the error.
	h.write("typo.yaml", pipelineYAML("typo", "    endless: true\n    port: 2"))
	h.reload()
	if st := h.waitState("typo.yaml", Running); st.ReloadError != "" || !st.StartedAt.After(*before["typo.yaml"].StartedAt) {
		t.Errorf("fixed file: %+v", st)
	}
}

func baseNames(r ReloadResult) ReloadResult {
	f := func(in []string) []string {
		var out []string
		for _, s := range in {
			out = append(out, filepath.Base(s))
		}
		return out
	}
	return ReloadResult{f(r.Started), f(r.Stopped), f(r.Restarted), f(r.Unchanged), f(r.Failed), f(r.Backfilling)}
}

func TestShutdownStopsEveryPipeline(t *testing.T) {
	h := newHarness(t)
	h.write("a.yaml", pipelineYAML("a", "    endless: true"))
	h.write("b.yaml", pipelineYAML("b", "    endless: true"))
	h.write("c.yaml", pipelineYAML("c", "    fail: 1000000\n    endless: true")) // retrying forever
	h.reload()
	h.waitState("a.yaml", Running)
	h.waitState("b.yaml", Running)
	h.waitState("c.yaml", Retrying)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !h.sup.Shutdown(ctx) {
		t.Error("Shutdown reported a stop cut short, but every pipeline could stop")
	}
	for _, st := range h.sup.Status() {
		if st.State != Stopped {
			t.Errorf("%s is %s after Shutdown", st.Name, st.State)
		}
	}
	if st := h.status("a.yaml"); st.Error != "" {
		t.Errorf("a graceful stop reported an error: %q", st.Error)
	}
	if _, err := h.sup.Reload(); err == nil {
		t.Error("Reload after Shutdown started pipelines")
	}
}

func TestSecretsNeverInStatusOrLogs(t *testing.T) {
	const secret = "hunter2-Sup3r\"S3cret\\/@:%2F\nend"
	t.Setenv("ETLD_TEST_DB_PASSWORD", secret)
	// A name from a secret variable: /metrics puts names in labels.
	const nameSecret = "src_x7k9q_tok"
	t.Setenv("ETLD_TEST_SRC_TOKEN", nameSecret)
	h := newHarness(t)
	// The connector error quotes the password; the decode error of a
	// wrongly typed option quotes the value.
	h.write("conn.yaml", pipelineYAML("conn", "    password: ${ETLD_TEST_DB_PASSWORD}\n    fail: 1000\n    permanent: true"))
	h.write("retry.yaml", pipelineYAML("retry", "    password: ${ETLD_TEST_DB_PASSWORD}\n    fail: 1\n    endless: true"))
	h.write("typed.yaml", pipelineYAML("typed", "    port: ${ETLD_TEST_DB_PASSWORD}"))
	h.write("named.yaml", strings.ReplaceAll(pipelineYAML("named", "    fail: 1000\n    permanent: true"), "src", "${ETLD_TEST_SRC_TOKEN}"))
	h.reload()
	h.waitState("conn.yaml", Failed)
	h.waitState("retry.yaml", Running)
	named := h.waitState("named.yaml", Failed)
	if len(named.Sources) != 1 || named.Sources[0].Name != "${ETLD_TEST_SRC_TOKEN}" {
		t.Errorf("sources of named.yaml = %+v, want the name shown as its variable", named.Sources)
	}
	status, err := json.Marshal(h.sup.Status())
	if err != nil {
		t.Fatal(err)
	}
	_, reasons := h.sup.Ready(true)
	for what, text := range map[string]string{"status": string(status), "logs": h.logs.String(), "readiness": strings.Join(reasons, "\n")} {
		for _, s := range []string{secret, nameSecret} {
			if leaks := testenv.SecretLeaks(text, s); len(leaks) > 0 {
				t.Errorf("the secret appears in the %s (%v):\n%s", what, leaks, text)
			}
		}
		if !strings.Contains(text, "${ETLD_TEST_DB_PASSWORD}") {
			t.Errorf("the %s do not say which variable was scrubbed:\n%s", what, text)
		}
	}
	if st := h.status("typed.yaml"); !strings.Contains(st.Error, "port: the value of ${ETLD_TEST_DB_PASSWORD} is not an integer") {
		t.Errorf("typed.yaml error = %q", st.Error)
	}
}

func TestReloadOfUnreadableDirChangesNothing(t *testing.T) {
	h := newHarness(t)
	h.write("a.yaml", pipelineYAML("a", "    endless: true"))
	h.reload()
	h.waitState("a.yaml", Running)
	h.sup.opt.Dir = filepath.Join(h.dir, "missing")
	if _, err := h.sup.Reload(); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Reload of a missing dir = %v", err)
	}
	if st := h.status("a.yaml"); st.State != Running {
		t.Errorf("a.yaml is %s after a failed reload", st.State)
	}
}

// stuckSink never finishes a flush until its context ends, as a sink
// retrying a target that stays down does.
type stuckSink struct {
	blackhole.Sink
	cancelled *atomic.Bool
}

func (s *stuckSink) Flush(ctx context.Context) error {
	<-ctx.Done()
	s.cancelled.Store(true)
	return ctx.Err()
}

func TestShutdownDeadlineCancels(t *testing.T) {
	h := newHarness(t)
	var cancelled atomic.Bool
	r := connector.NewRegistry()
	connector.RegisterSource(r, "probe", "test source", func(c probeConfig, env connector.SourceEnv) (connector.Source, error) {
		return &probe{cfg: c, opens: h.opens}, nil
	})
	connector.RegisterSink(r, "stuck", "test sink", func(struct{}, connector.SinkEnv) (connector.Sink, error) {
		return &stuckSink{cancelled: &cancelled}, nil
	})
	h.sup.opt.Load = NewLoader(pipeline.Env{Registry: r, Logger: slog.New(slog.DiscardHandler)}, os.LookupEnv)
	h.write("p.yaml", strings.Replace(pipelineYAML("p", "    endless: true"), "type: blackhole", "type: stuck", 1))
	h.reload()
	h.waitState("p.yaml", Running)
	// The graceful stop waits for the flush, which never ends; the
	// deadline (a second signal, in etld) cancels the run.
	ctx, cancel := context.WithTimeoutCause(context.Background(), 200*time.Millisecond, errors.New("test deadline passed"))
	defer cancel()
	if h.sup.Shutdown(ctx) {
		t.Error("Shutdown reported a graceful stop, but the deadline cut it short")
	}
	if !cancelled.Load() {
		t.Error("Shutdown returned but the stuck flush was never cancelled")
	}
	if st := h.status("p.yaml"); st.State != Stopped {
		t.Errorf("state after a cancelled stop = %s", st.State)
	}
	// One line for the pipeline says why, what it leaves and where its
	// next start resumes (no checkpoint completed: the flush never ends).
	line := findLine(h.logs.String(), "did not stop in time")
	for _, want := range []string{`"pipeline":"p"`, `"reason":"test deadline passed"`, `"resume_from_checkpoint":0`, `"pending_rows_by_sink":{"out":`} {
		if !strings.Contains(line, want) {
			t.Errorf("abandon line lacks %s:\n%s", want, h.logs)
		}
	}
}

// findLine is the first line of logs containing s.
func findLine(logs, s string) string {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func TestReloadCancelsAStopThatTakesTooLong(t *testing.T) {
	h := newHarness(t)
	var cancelled atomic.Bool
	r := connector.NewRegistry()
	blackhole.Register(r)
	connector.RegisterSource(r, "probe", "test source", func(c probeConfig, env connector.SourceEnv) (connector.Source, error) {
		return &probe{cfg: c, opens: h.opens}, nil
	})
	connector.RegisterSink(r, "stuck", "test sink", func(struct{}, connector.SinkEnv) (connector.Sink, error) {
		return &stuckSink{cancelled: &cancelled}, nil
	})
	h.sup.opt.Load = NewLoader(pipeline.Env{Registry: r, Logger: slog.New(slog.DiscardHandler)}, os.LookupEnv)
	h.sup.opt.StopTimeout = 100 * time.Millisecond
	h.write("p.yaml", strings.Replace(pipelineYAML("p", "    endless: true"), "type: blackhole", "type: stuck", 1))
	h.reload()
	h.waitState("p.yaml", Running)
	// The new version writes to a sink that works; the old one's flush
	// never ends, so the reload cancels it after StopTimeout.
	h.write("p.yaml", pipelineYAML("p", "    endless: true"))
	if res := h.reload(); len(res.Restarted) != 1 {
		t.Fatalf("reload = %+v, want p.yaml restarted", res)
	}
	if !cancelled.Load() {
		t.Error("the old version's stuck flush was not cancelled")
	}
	h.waitState("p.yaml", Running)
	line := findLine(h.logs.String(), "did not stop in time")
	for _, want := range []string{`"pipeline":"p"`, `"reason":"shutdown_timeout 100ms passed"`, `"resume_from_checkpoint":`, `"pending_rows_by_sink":{"out":`} {
		if !strings.Contains(line, want) {
			t.Errorf("the reload's abandon line lacks %s:\n%s", want, h.logs)
		}
	}
}
