package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

// The child's instructions, in its environment.
const (
	envPipeline = "ETLD_CRASH_CHILD_PIPELINE"
	envState    = "ETLD_CRASH_CHILD_STATE"
	envInterval = "ETLD_CRASH_CHILD_INTERVAL"
)

// childInterval is the checkpoint interval of the child runs: short, so
// that kills land between, during and right after checkpoints.
const childInterval = 100 * time.Millisecond

// TestCrashChild is the child process: it does nothing unless the harness
// started it. It runs one pipeline with a state dir until it finishes.
func TestCrashChild(t *testing.T) {
	file := os.Getenv(envPipeline)
	if file == "" {
		return // not a child: nothing to do
	}
	interval, err := time.ParseDuration(os.Getenv(envInterval))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: os.Getenv(envState), CheckpointInterval: interval, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("FINISHED restored=%d checkpoints=%d\n", sum.Checkpoints.Restored, sum.Checkpoints.Count)
}

// scenario is one crash test: a pipeline template, what to prepare before
// the first run, and how to check the result once the crashing runs have
// finished. The template sees .Dir (the scenario's scratch directory),
// .Out (the output's name: "out" for the crashing runs, "ref" for the
// reference run), .Round (0 for the reference run, then 1, 2, ... for each
// round of crashing runs, so that names outside .Dir that cannot simply be
// cleared, such as a consumer group or a topic, can be new every round),
// .Life (the number of the child run, from 1; the template is rendered
// again before every child run) and .Vars.
type scenario struct {
	name     string
	pipeline string
	// needs returns the variables of services the scenario uses, failing
	// or skipping as internal/testenv does when they are missing.
	needs func(t *testing.T) map[string]string
	setup func(t *testing.T, e *env)
	// check compares the crashing runs' result with the reference run's
	// (made with .Out = "ref", without a state dir, in this process).
	check func(t *testing.T, e *env)
	// reset, if set, clears what the crashing runs wrote outside .Dir
	// (a table, a topic) before another round starts from nothing; the
	// state dir and .Dir/out.* are cleared by the harness.
	reset func(t *testing.T, e *env)
	// beforeLife, if set, runs before each child run, after the template
	// is rendered for it; restoring says whether the run will restore a
	// checkpoint.
	beforeLife func(t *testing.T, e *env, restoring bool)
}

type env struct {
	Dir   string
	Out   string
	Round int
	Life  int
	Vars  map[string]string
	rnd   *rand.Rand
	// data holds what a scenario's setup keeps for its check.
	data map[string]any
}

// render writes tmpl, rendered with e for the output out, to
// .Dir/out.yaml and returns the file's path.
func (e *env) render(t *testing.T, tmpl, out string) string {
	t.Helper()
	e.Out = out
	yaml, err := e.yaml(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.Dir, out+".yaml")
	if err := os.WriteFile(path, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fragments are the shared sources and sinks (fragments_test.go), parsed
// once; every pipeline template is parsed into a clone of them.
var fragments = template.Must(template.New("fragments").Option("missingkey=error").Funcs(fragmentFuncs).Parse(fragmentText))

// yaml is the pipeline tmpl gives with e.
func (e *env) yaml(tmpl string) ([]byte, error) {
	tp, err := template.Must(fragments.Clone()).New("pipeline").Parse(tmpl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tp.Execute(&b, e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func intEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// runScenario runs the reference, then the crashing runs, then the check.
func runScenario(t *testing.T, sc scenario) {
	seed := crashSeed()
	kills := intEnv("ETLD_CRASH_KILLS", 20)
	t.Logf("scenario %s: seed %d (replay with ETLD_CRASH_SEED=%d), %d kills", sc.name, seed, seed, kills)
	e := &env{Dir: t.TempDir(), Vars: map[string]string{}, rnd: rand.New(rand.NewPCG(seed, 1)), data: map[string]any{}}
	if sc.needs != nil {
		e.Vars = sc.needs(t)
	}
	if sc.setup != nil {
		sc.setup(t, e)
	}

	took := referenceRun(t, e, sc.pipeline)

	// The crashing runs. Each life gets at least the time to start and
	// take a checkpoint or two, plus a random share of the reference run's
	// length: the kills are spread over the whole run, and most land
	// mid-run, at any point of the checkpoint cycle. Every other kill
	// also waits for a checkpoint the life completed (waitsForCheckpoint),
	// so that some lives restore whatever the machine's load.
	e.Round = 1
	var file string
	state := filepath.Join(e.Dir, "state")
	floor := 100*time.Millisecond + childInterval
	spread := 2*took/time.Duration(kills) + childInterval
	// life is how long the last life that ran to its end took. A run
	// shorter than floor (a fast machine, a build without -race) would
	// never be killed, and one shorter than a few checkpoint intervals
	// never restored: the kills then land within a life's length and
	// the checkpoints come eight times a life.
	var life time.Duration
	killed, restores, rounds := 0, 0, 0
	for attempt := 0; ; attempt++ {
		if attempt > 10*kills+10 {
			t.Fatalf("no end after %d child runs (%d kills)", attempt, killed)
		}
		var k killAt
		if killed < kills {
			k.delay = floor + time.Duration(e.rnd.Int64N(int64(spread)))
			if life > 0 && k.delay >= life {
				// In the life's second half: its first is much the
				// child's start, before any checkpoint.
				k.delay = life/2 + time.Duration(e.rnd.Int64N(int64(life/2)+1))
			}
			k.afterCheckpoint = waitsForCheckpoint(killed, kills, restores)
		}
		interval := childInterval
		if life > 0 {
			interval = min(interval, max(life/8, 2*time.Millisecond))
		}
		before := latestID(state)
		e.Life++
		file = e.render(t, sc.pipeline, "out")
		if sc.beforeLife != nil {
			sc.beforeLife(t, e, before > 0)
		}
		lifeStart := time.Now()
		res := runLife(t, file, state, interval, k)
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			logLife(t, res, attempt, time.Since(lifeStart), k.delay, before, latestID(state))
		}
		restores += strings.Count(res.stderr, "restored checkpoint")
		if res.killed {
			killed++
			if latestID(state) == before {
				// The life was too short to complete a checkpoint (a slow
				// sink): give the next ones more time, or the run never
				// gets anywhere.
				floor += floor / 2
			}
			continue
		}
		if res.err != nil {
			t.Fatalf("child run %d failed: %v\nstdout:\n%s\nstderr:\n%s", attempt, res.err, res.stdout, res.stderr)
		}
		// The pipeline finished: check it. With kills still to do, start
		// it over from nothing for another round.
		if before == 0 {
			life = time.Since(lifeStart) // a whole run, not the end of one
		}
		rounds++
		e.Out = "out"
		sc.check(t, e)
		if t.Failed() || killed >= kills {
			break
		}
		// Lives were long enough to finish: shorten them again.
		floor = max(100*time.Millisecond+childInterval, floor*2/3)
		reset(t, e, state)
		if sc.reset != nil {
			sc.reset(t, e)
		}
		e.Round++
	}
	t.Logf("scenario %s: %d kills in %d rounds, %d restores from a checkpoint; reference run %s", sc.name, killed, rounds, restores, took.Round(time.Millisecond))
	if restores == 0 {
		t.Errorf("no run restored a checkpoint: the kills tested nothing")
	}
}

// crashSeed is the seed of a run: ETLD_CRASH_SEED, else the clock.
func crashSeed() uint64 {
	if v, err := strconv.ParseUint(os.Getenv("ETLD_CRASH_SEED"), 10, 64); err == nil {
		return v
	}
	return uint64(time.Now().UnixNano())
}

// referenceRun runs tmpl, rendered for the output "ref", once and without
// interruption, in this process, and returns how long it took.
func referenceRun(t *testing.T, e *env, tmpl string) time.Duration {
	t.Helper()
	ref := e.render(t, tmpl, "ref")
	p, err := pipeline.Load(ref, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	return time.Since(began)
}

// logLife logs a life with the child's warnings and its restores and
// partition assignments: what a failing seed needs to be read.
func logLife(t *testing.T, res childResult, attempt int, took, delay time.Duration, before, after int64) {
	t.Helper()
	t.Logf("life %d: killed=%v after %s (delay %s), checkpoint %d -> %d", attempt, res.killed, took.Round(time.Millisecond), delay.Round(time.Millisecond), before, after)
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "assigned") || strings.Contains(l, "restored") {
			if i := strings.Index(l, "msg="); i >= 0 {
				l = l[i:]
			}
			t.Logf("  %s", l)
		}
	}
}

// reset removes the state and the outputs of the crashing runs
// (.Dir/out*, hidden in-progress files included).
func reset(t *testing.T, e *env, state string) {
	t.Helper()
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	for _, pat := range []string{"out.*", ".out.*"} {
		matches, _ := filepath.Glob(filepath.Join(e.Dir, pat))
		for _, m := range matches {
			if filepath.Ext(m) == ".yaml" {
				continue
			}
			if err := os.RemoveAll(m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// latestID is the id the newest checkpoint manifest under state names, 0
// if there is none.
func latestID(state string) int64 {
	matches, _ := filepath.Glob(filepath.Join(state, "*", "MANIFEST"))
	var id int64
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var man struct{ ID int64 }
		if json.Unmarshal(b, &man) == nil {
			id = max(id, man.ID)
		}
	}
	return id
}

// killAt is when a life is killed: delay after its start (0: never), and,
// for a kill meant to test a restore, not before a checkpoint newer than
// the one the life started from is complete (its MANIFEST renamed into
// place). A kill at a random moment alone may land before the first
// checkpoint, and on a loaded machine, where the child takes longer to
// start, every one of them may: the next life then restores nothing.
type killAt struct {
	delay           time.Duration
	afterCheckpoint bool
}

// waitsForCheckpoint says whether the n-th kill (from 0) of kills waits
// for a checkpoint: every other one, so that the rest stay at random
// moments (before the first checkpoint too, which tests a start from
// nothing after a crash), and the last if no life has restored yet.
func waitsForCheckpoint(n, kills, restores int) bool {
	return n%2 == 1 || (n == kills-1 && restores == 0)
}

// runLife runs one child life and kills it as k says.
func runLife(t *testing.T, file, state string, interval time.Duration, k killAt) childResult {
	t.Helper()
	if !k.afterCheckpoint || k.delay <= 0 {
		return runChildUntil(t, file, state, interval, k.delay, nil)
	}
	before := latestID(state)
	start := time.Now()
	return runChildUntil(t, file, state, interval, 0, func() bool {
		return time.Since(start) >= k.delay && latestID(state) > before
	})
}

type childResult struct {
	killed         bool
	err            error
	stdout, stderr string
}

// runChild runs the pipeline in a child process; a delay > 0 kills it
// with SIGKILL after that long if it is still running.
func runChild(t *testing.T, file, state string, delay time.Duration) childResult {
	t.Helper()
	return runChildUntil(t, file, state, childInterval, delay, nil)
}

// runChildUntil is runChild with the child's checkpoint interval given,
// that also kills the child as soon as killWhen, polled every
// millisecond, reports true (a checkpoint has been written): a kill that
// lands after the event whatever the machine's speed.
func runChildUntil(t *testing.T, file, state string, interval, delay time.Duration, killWhen func() bool) childResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envPipeline+"="+file, envState+"="+state, envInterval+"="+interval.String(),
		// A race-enabled child otherwise sleeps a second before exiting.
		"GORACE=atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	killed := false
	timeout := time.After(3 * time.Minute)
	var kill <-chan time.Time
	if delay > 0 {
		kill = time.After(delay)
	}
	var poll <-chan time.Time
	if killWhen != nil {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		poll = tick.C
	}
	sigkill := func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err = <-exited
		var ee *exec.ExitError
		killed = errors.As(err, &ee) && !ee.Exited()
	}
	for done := false; !done; {
		select {
		case err = <-exited:
			done = true
		case <-poll:
			if done = killWhen(); done {
				sigkill()
			}
		case <-kill:
			sigkill()
			done = true
		case <-timeout:
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("child run did not end within 3 minutes\nstderr:\n%s", stderr.String())
		}
	}
	if err == nil && !strings.Contains(stdout.String(), "FINISHED") {
		err = errors.New("the child exited without finishing its pipeline")
	}
	return childResult{killed: killed, err: err, stdout: stdout.String(), stderr: stderr.String()}
}
