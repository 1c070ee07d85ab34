package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// fullDiskPipeline is file-to-file's pipeline with its output (and, for
// the crashing runs, its state) on a small tmpfs.
const fullDiskPipeline = `version: 1
name: crash-disk-{{.Out}}
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp DOUBLE
transforms:
  - name: hot
    sql: |
      SELECT id, UPPER(sensor) AS sensor, temp * 1.8 + 32 AS temp_f
      FROM readings
      WHERE temp > 10
sinks:
  - name: out
    from: hot
    type: file
    path: {{.Vars.outdir}}/{{.Out}}.csv
    format: { type: csv, header: true }
`

// TestCrashFullDisk is the full-disk scenario: file -> file with the output
// and the state dir on a 4 MiB tmpfs. Before each life the disk is filled to
// leave a random amount free (sometimes enough, mostly not), and the life is
// killed at a random moment or ends on its own, most often failing for want
// of room; the space is freed between lives. After every life the output
// holds whole records only, a prefix of the reference; a life that failed
// said which file and how many bytes it needed; the final output is
// byte-identical to a run without faults.
func TestCrashFullDisk(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("ETLD_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	faults := intEnv("ETLD_CRASH_KILLS", 20)
	t.Logf("scenario full-disk: seed %d (replay with ETLD_CRASH_SEED=%d), %d lives with a fault", seed, seed, faults)
	disk := testenv.Tmpfs(t, 4<<20)
	e := &env{Dir: t.TempDir(), Vars: map[string]string{}, rnd: rand.New(rand.NewPCG(seed, 1)), data: map[string]any{}}
	writeReadings(t, filepath.Join(e.Dir, "in.csv"), intEnv("ETLD_CRASH_ROWS", 300_000)/5, e)

	// The reference: one uninterrupted run beside the input, not on the
	// small disk.
	e.Vars["outdir"] = e.Dir
	ref := e.render(t, fullDiskPipeline, "ref")
	p, err := pipeline.Load(ref, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	took := time.Since(began)
	want, err := os.ReadFile(filepath.Join(e.Dir, "ref.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(want)) > testenv.FreeBytes(t, disk)/3 {
		t.Fatalf("the output (%d bytes) and its parts do not fit the %d bytes of the disk: lower ETLD_CRASH_ROWS", len(want), testenv.FreeBytes(t, disk))
	}

	e.Vars["outdir"] = disk
	e.Round = 1
	state := filepath.Join(disk, "state")
	out := filepath.Join(disk, "out.csv")
	spread := took + 3*childInterval
	full, killed, restores, rounds := 0, 0, 0, 0
	for life := 1; ; life++ {
		if life > 10*faults+10 {
			t.Fatalf("no end after %d lives (%d failed for want of room, %d killed)", life, full, killed)
		}
		fault := full+killed < faults
		var fill string
		var delay time.Duration
		if fault {
			// A third of the lives are only killed; the others find the
			// disk nearly full (less room than the rest of the output
			// needs, at times none at all), and half of those are killed
			// too if they last.
			kind := e.rnd.IntN(3)
			if kind > 0 {
				leave := e.rnd.Int64N(int64(len(want)) / 2)
				if e.rnd.IntN(4) == 0 {
					leave = 0
				}
				fill = testenv.Fill(t, disk, leave)
			}
			if kind != 1 {
				delay = 50*time.Millisecond + time.Duration(e.rnd.Int64N(int64(spread)))
			}
		}
		e.Life = life
		before := latestID(state)
		var killWhen func() bool
		interval := childInterval
		if fault && restores == 0 && faults-(full+killed) == 1 {
			// On a loaded machine every life so far may have ended before
			// its first checkpoint, and on a fast one the whole run takes
			// less than childInterval: this one runs with room and
			// checkpoints every 2ms, and is killed once it has written
			// one, so that the next restores it. (Killed after its end's
			// checkpoint, the next finds the pipeline finished: it then
			// tries again.)
			interval = 2 * time.Millisecond
			if fill != "" {
				if err := os.Remove(fill); err != nil {
					t.Fatal(err)
				}
				fill = ""
			}
			delay = 0
			killWhen = func() bool { return latestID(state) > before }
		}
		file := e.render(t, fullDiskPipeline, "out")
		res := runChildUntil(t, file, state, interval, delay, killWhen)
		restores += strings.Count(res.stderr, "restored checkpoint")
		if fill != "" {
			if err := os.Remove(fill); err != nil {
				t.Fatal(err)
			}
		}
		all := res.stdout + res.stderr
		switch {
		case res.killed:
			killed++
		case res.err != nil && strings.Contains(all, "no space left on device"):
			full++
			if !strings.Contains(all, out) || !strings.Contains(all, "bytes needed") {
				if !strings.Contains(all, state) {
					t.Errorf("life %d failed for want of room without naming the output %s and the bytes it needed:\n%s", life, out, lastLines(all, 8))
				}
			}
		case res.err != nil:
			t.Fatalf("life %d failed: %v\nstdout:\n%s\nstderr:\n%s", life, res.err, res.stdout, res.stderr)
		}
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			t.Logf("life %d: fill=%v killed=%v failed=%v delay %s, checkpoint %d -> %d", life, fill != "", res.killed, res.err != nil && !res.killed, delay.Round(time.Millisecond), before, latestID(state))
			if res.err != nil && !res.killed {
				for _, l := range strings.Split(all, "\n") {
					if strings.Contains(l, "no space left") {
						t.Logf("  %s", strings.TrimSpace(l))
						break
					}
				}
			}
		}
		got, err := os.ReadFile(out)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(want, got) || (len(got) > 0 && got[len(got)-1] != '\n') {
			t.Fatalf("after life %d the output (%d bytes) is not whole records of the reference; its tail: %q", life, len(got), excerpt(got, len(got)))
		}
		if res.err != nil || res.killed {
			continue
		}
		// The pipeline finished: check it, and with faults still to
		// come start another round from nothing.
		rounds++
		sameFile(t, filepath.Join(e.Dir, "ref.csv"), out)
		if t.Failed() || !fault {
			break
		}
		for _, pat := range []string{"state", "out.*", ".out.*"} {
			matches, _ := filepath.Glob(filepath.Join(disk, pat))
			for _, m := range matches {
				if err := os.RemoveAll(m); err != nil {
					t.Fatal(err)
				}
			}
		}
		e.Round++
	}
	t.Logf("scenario full-disk: %d lives failed for want of room, %d killed, in %d rounds, %d restores from a checkpoint; reference run %s", full, killed, rounds, restores, took.Round(time.Millisecond))
	if full == 0 {
		t.Errorf("no life ran out of room: the full disk tested nothing")
	}
	if restores == 0 {
		t.Errorf("no life restored a checkpoint: the faults tested nothing")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// followedPipeline reads a file that grows (follow: true) into a file on
// the small disk.
const followedPipeline = `version: 1
name: full-disk-followed
sources:
  - name: readings
    type: file
    path: %s
    follow: %v
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp DOUBLE
transforms:
  - name: hot
    sql: SELECT id, UPPER(sensor) AS sensor, temp * 1.8 + 32 AS temp_f FROM readings WHERE temp > 10
sinks:
  - name: out
    from: hot
    type: file
    path: %s
    format: { type: csv, header: true }
`

// TestFullDiskFollowed is a full disk under a followed source, which never
// ends: the run that fills the disk (a write to a part or a commit fails)
// must leave the output at whole records when it returns its error, not only
// after the next start. With room again, the next run restores its
// checkpoint, reads the rest as it arrives and, once stopped, leaves the
// output byte-identical to a bounded run's.
func TestFullDiskFollowed(t *testing.T) {
	disk := testenv.Tmpfs(t, 4<<20)
	dir := t.TempDir()
	e := &env{rnd: rand.New(rand.NewPCG(21, 1))}
	full := filepath.Join(dir, "full.csv")
	writeReadings(t, full, 60_000, e)
	input, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	load := func(name, yaml string) *pipeline.Pipeline {
		t.Helper()
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref := filepath.Join(dir, "ref.csv")
	if _, err := load("ref", fmt.Sprintf(followedPipeline, full, false, ref)).Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}

	in := filepath.Join(dir, "in.csv")
	out := filepath.Join(disk, "out.csv")
	yaml := fmt.Sprintf(followedPipeline, in, true, out)
	opts := pipeline.RunOptions{StateDir: filepath.Join(disk, "state"), CheckpointInterval: 50 * time.Millisecond}
	// The input arrives in pieces, cut at line ends.
	fed := 0
	feed := func(upTo int) {
		t.Helper()
		upTo = min(upTo, len(input))
		if i := bytes.LastIndexByte(input[:upTo], '\n'); i >= 0 {
			upTo = i + 1
		}
		if upTo <= fed {
			return
		}
		f, err := os.OpenFile(in, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(input[fed:upTo]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fed = upTo
	}
	start := func() (chan struct{}, chan error) {
		stop, done := make(chan struct{}), make(chan error, 1)
		p := load("followed", yaml) // a run's connectors serve one run
		go func() {
			_, err := p.Run(context.Background(), pipeline.RunOptions{Stop: stop, StateDir: opts.StateDir, CheckpointInterval: opts.CheckpointInterval})
			done <- err
		}()
		return stop, done
	}

	// Life 1: room for about a third of the output.
	feed(len(input) / 10)
	fill := testenv.Fill(t, disk, int64(len(want)/3))
	stop, done := start()
	var runErr error
	deadline := time.Now().Add(time.Minute)
	for runErr == nil {
		select {
		case runErr = <-done:
		case <-time.After(20 * time.Millisecond):
			if time.Now().After(deadline) {
				close(stop)
				t.Fatalf("the run did not fail on a full disk within a minute (%d of %d input bytes fed)", fed, len(input))
			}
			feed(fed + len(input)/50)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the run failed with %d bytes of output: %v", len(got), runErr)
	for _, w := range []string{"no space left on device", out, "bytes needed"} {
		if !strings.Contains(runErr.Error(), w) {
			t.Errorf("the error %q does not say %q", runErr, w)
		}
	}
	if !bytes.HasPrefix(want, got) || (len(got) > 0 && got[len(got)-1] != '\n') {
		t.Fatalf("when the run returned, the output (%d bytes) was not whole records of the reference; its tail: %q", len(got), excerpt(got, len(got)))
	}

	// Life 2: room again; the rest of the input arrives while it runs.
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	stop, done = start()
	deadline = time.Now().Add(time.Minute)
	for {
		feed(fed + len(input)/20)
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the restarted run ended: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			close(stop)
			t.Fatalf("the output did not reach the reference's %d bytes within a minute (%d bytes)", len(want), len(got))
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("the graceful stop: %v", err)
	}
	sameFile(t, ref, out)
}

// TestFullDiskOneShotRun is a full disk as first met in use: a bounded run
// without a state directory (etld run FILE) fills the disk before its first
// checkpoint, with rows going straight into the output. It fails naming the
// file and the bytes needed, the output holds whole records, no in-progress
// file is left holding the disk, and the same run, with room again, gives the
// output of a run without the fault.
func TestFullDiskOneShotRun(t *testing.T) {
	disk := testenv.Tmpfs(t, 2<<20)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeReadings(t, in, 60_000, &env{rnd: rand.New(rand.NewPCG(21, 2))})
	run := func(out string) error {
		t.Helper()
		file := filepath.Join(dir, "oneshot.yaml")
		if err := os.WriteFile(file, []byte(fmt.Sprintf(followedPipeline, in, false, out)), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Run(context.Background(), pipeline.RunOptions{})
		return err
	}
	ref := filepath.Join(dir, "ref.csv")
	if err := run(ref); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(disk, "out.csv")
	fill := testenv.Fill(t, disk, int64(len(want)/2))
	err = run(out)
	if err == nil {
		t.Fatal("the run succeeded on a disk with room for half its output")
	}
	for _, w := range []string{"no space left on device", out, "bytes needed"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error %q does not say %q", err, w)
		}
	}
	got, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	t.Logf("the run failed with %d bytes of output: %v", len(got), err)
	if !bytes.HasPrefix(want, got) || (len(got) > 0 && got[len(got)-1] != '\n') {
		t.Fatalf("the output (%d bytes) is not whole records of the reference; its tail: %q", len(got), excerpt(got, len(got)))
	}
	if left, _ := filepath.Glob(filepath.Join(disk, ".*.inprogress")); len(left) != 0 {
		t.Errorf("the failed run left in-progress files: %v", left)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := run(out); err != nil {
		t.Fatalf("the run again, with room: %v", err)
	}
	sameFile(t, ref, out)
}
