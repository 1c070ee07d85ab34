package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

func TestRingAndRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r ring
	for i := range HistoryLength + 5 {
		r.add(sample{at: t0.Add(time.Duration(i) * time.Second), in: int64(10 * i), out: int64(20 * i)})
	}
	got := r.ordered()
	if len(got) != HistoryLength || got[0].in != 50 || got[len(got)-1].in != int64(10*(HistoryLength+4)) {
		t.Fatalf("ring keeps %d samples from %d to %d", len(got), got[0].in, got[len(got)-1].in)
	}
	cases := []struct {
		name    string
		samples []sample
		want    []Rate
	}{
		{"none", nil, []Rate{}},
		{"one", []sample{{at: t0, in: 5}}, []Rate{}},
		{"steady", []sample{{at: t0, in: 0, out: 0}, {at: t0.Add(2 * time.Second), in: 10, out: 30}}, []Rate{{At: t0.Add(2 * time.Second).UTC(), In: 5, Out: 15}}},
		{"same instant skipped", []sample{{at: t0, in: 0}, {at: t0, in: 9}}, []Rate{}},
		{"never negative", []sample{{at: t0, in: 10}, {at: t0.Add(time.Second), in: 4}}, []Rate{{At: t0.Add(time.Second).UTC(), In: 0, Out: 0}}},
	}
	for _, tc := range cases {
		got := rates(tc.samples)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: rates = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The recent rate spans the last 10 s of samples, not only the last step.
	s := []sample{{at: t0, in: 0}, {at: t0.Add(5 * time.Second), in: 100}, {at: t0.Add(10 * time.Second), in: 100}, {at: t0.Add(11 * time.Second), in: 110}}
	if r := recentRate(s, 10*time.Second); r == nil || r.In != 10 {
		t.Errorf("recentRate = %+v, want 10 rows/s over the last 10 s", r)
	}
}

func TestHistoryOfARunningPipeline(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", pipelineYAML("p", "    endless: true\n    rows: 30"))
	h.reload()
	h.waitState("p.yaml", Running)
	testenv.Eventually(t, 10*time.Second, "the rows counted", func() error {
		if st := h.status("p.yaml"); sumOut(st.Sinks) != 30 {
			return fmt.Errorf("rows out %d", sumOut(st.Sinks))
		}
		return nil
	})
	t0 := time.Now()
	h.sup.sampleAll(t0)
	h.sup.sampleAll(t0.Add(2 * time.Second))
	hist, ok := h.sup.History("p")
	if !ok || len(hist.Rates) < 1 {
		t.Fatalf("History = %+v, %v", hist, ok)
	}
	if _, ok := h.sup.History("nothing"); ok {
		t.Error("History of an unknown pipeline")
	}
	if st := h.status("p.yaml"); st.RowsOutPerSecond == nil {
		t.Error("Status has no rate after samples")
	}
}

func TestFileView(t *testing.T) {
	t.Setenv("CONSOLE_PW", "s3cret-console-value")
	h := newHarness(t)
	// Line 7 holds a secret reference, line 8 an unknown key.
	broken := pipelineYAML("bad", "    password: ${CONSOLE_PW}\n    bogus: 1")
	h.write("bad.yaml", broken)
	h.write("good.yaml", pipelineYAML("good", "    endless: true"))
	h.reload()
	v, ok := h.sup.File("bad")
	if !ok || v.State != Failed || v.Refused {
		t.Fatalf("File(bad) = %+v, %v", v, ok)
	}
	if len(v.Errors) != 1 || v.Errors[0].Line != 8 || v.Errors[0].Col != 5 || !strings.Contains(v.Errors[0].Message, "unknown key") {
		t.Errorf("errors = %+v, want the unknown key at 8:5", v.Errors)
	}
	if !strings.Contains(v.Text, "password: ${CONSOLE_PW}") || strings.Contains(v.Text, "s3cret") {
		t.Errorf("text shows %q", v.Text)
	}
	if err := h.sup.SetSample("bad", true); !errors.Is(err, ErrNotRunnable) {
		t.Errorf("SetSample of a file that did not load = %v", err)
	}
	if _, ok := h.sup.Plan("bad"); ok {
		t.Error("a file that did not load has a plan")
	}

	// A running pipeline: its file, no errors; after an edit that does
	// not load, the refused text with its errors.
	h.waitState("good.yaml", Running)
	if v, _ := h.sup.File("good"); len(v.Errors) != 0 || !strings.Contains(v.Text, "name: good") {
		t.Errorf("File(good) = %+v", v)
	}
	h.write("good.yaml", pipelineYAML("good", "    endless: true\n    nope: 2"))
	h.reload()
	v, _ = h.sup.File("good")
	if !v.Refused || v.State != Running || len(v.Errors) != 1 || v.Errors[0].Line != 8 || !strings.Contains(v.Text, "nope: 2") {
		t.Errorf("File(good) after a refused edit = %+v", v)
	}
	if d, ok := h.sup.Plan("good"); !ok || len(d.Nodes) == 0 {
		t.Errorf("Plan(good) = %+v, %v", d, ok)
	}
	if err := h.sup.SetSample("nothing", true); !errors.Is(err, ErrNoPipeline) {
		t.Errorf("SetSample of an unknown pipeline = %v", err)
	}
}

func TestSampler(t *testing.T) {
	batch := func(kinds ...row.Kind) *row.Batch {
		b := row.NewBatch(len(kinds), 1)
		for i, k := range kinds {
			r := b.NewRow()
			r[0] = row.StringValue(fmt.Sprintf("v%d-hunter22", i))
			b.Append(k, r)
		}
		return b
	}
	var sm sampler
	sm.tap("out", batch(row.Insert))
	if len(sm.buf) != 0 {
		t.Fatal("sampled while off")
	}
	sm.set(true)
	sm.tap("out", batch(row.Insert, row.UpdateBefore, row.UpdateAfter, row.Delete, row.Insert, row.Insert))
	if len(sm.buf) != samplePerBatch || sm.buf[1].Kind != "-U" || sm.buf[2].Kind != "+U" || sm.buf[3].Kind != "-D" {
		t.Fatalf("sampled %+v, want the first %d changes", sm.buf, samplePerBatch)
	}
	for i := range SampleCapacity {
		sm.tap(fmt.Sprintf("s%03d", i), batch(row.Insert))
	}
	if len(sm.buf) != SampleCapacity || sm.seen != int64(samplePerBatch+SampleCapacity) {
		t.Errorf("buffer %d, seen %d", len(sm.buf), sm.seen)
	}
	// Through the supervisor: oldest first, values redacted.
	secrets := redact.NewSet()
	secrets.Add(redact.Classify("", "SINK_PASSWORD", "hunter22")...)
	s := &Supervisor{opt: Options{Secrets: secrets}, units: map[string]*unit{"p.yaml": {name: "p", file: "p.yaml", sample: &sm}}}
	v, ok := s.Sample("p")
	if !ok || !v.Enabled || len(v.Changes) != SampleCapacity {
		t.Fatalf("Sample = %v, %d changes", ok, len(v.Changes))
	}
	for i, c := range v.Changes {
		// The first batch's four were pushed out; the rest come in order.
		if strings.Contains(c.Row, "hunter22") || !strings.Contains(c.Row, "${SINK_PASSWORD}") || c.Sink != fmt.Sprintf("s%03d", i) {
			t.Fatalf("sampled change %d: %+v", i, c)
		}
	}
	sm.set(false)
	sm.tap("out", batch(row.Insert))
	if sm.seen != int64(samplePerBatch+SampleCapacity) {
		t.Error("sampled after being turned off")
	}
}

// A piece of a secret in the pipelines directory's path is hidden where
// the path is shown, but the supervisor finds its pipelines by their real
// keys: every /pipelines/{name}/... answer still works.
func TestSecretInThePathKeepsLookups(t *testing.T) {
	const pw = "Zq7x9k2!w"
	t.Setenv("ETLD_TEST_DIR_PASSWORD", pw)
	h := newHarness(t)
	h.dir = filepath.Join(h.dir, "pipes-x9k2")
	if err := os.Mkdir(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.sup.opt.Dir = h.dir
	h.write("p.yaml", pipelineYAML("p", "    password: ${ETLD_TEST_DIR_PASSWORD}\n    endless: true"))
	h.reload()
	st := h.waitState("p.yaml", Running)
	if leaks := testenv.SecretLeaks(st.File, pw); len(leaks) > 0 || !strings.Contains(st.File, "pipes-${ETLD_TEST_DIR_PASSWORD}") {
		t.Errorf("status shows the file as %q (%v)", st.File, leaks)
	}
	v, ok := h.sup.File("p")
	if !ok || v.File != st.File || !strings.Contains(v.Text, "name: p") {
		t.Errorf("File(p) = %+v, %v; want the file as the status shows it", v, ok)
	}
	if _, ok := h.sup.Plan("p"); !ok {
		t.Error("Plan(p) not found")
	}
	if _, ok := h.sup.History("p"); !ok {
		t.Error("History(p) not found")
	}
	if err := h.sup.SetSample("p", true); err != nil {
		t.Errorf("SetSample(p) = %v", err)
	}
	if s, ok := h.sup.Sample("p"); !ok || !s.Enabled {
		t.Errorf("Sample(p) = %+v, %v", s, ok)
	}
}
