package pipeline_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/edittest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// editFile is one version of the pipeline file.
type editFile struct {
	name, sql, opts, more, sinks string
}

func (f editFile) text(dir string) string {
	name := f.name
	if name == "" {
		name = "q"
	}
	return fmt.Sprintf(edittest.Pipeline, dir, f.sql, f.opts, name, f.more, f.sinks)
}

// edits are the edits that keep the operator's state: each turns the
// operator's query into the edited file; id is the operator's state ID
// after the edit when it moves (a renamed transform).
var edits = []struct {
	name string
	edit func(sql string) editFile
	id   string
}{
	{"none", func(sql string) editFile { return editFile{sql: sql} }, ""},
	{"filter after", func(sql string) editFile {
		return editFile{sql: "SELECT * FROM (" + sql + ") WHERE k <> 'none'"}
	}, ""},
	{"projection after", func(sql string) editFile {
		return editFile{sql: "SELECT *, UPPER(k) AS kk FROM (" + sql + ")"}
	}, ""},
	{"new sink", func(sql string) editFile {
		return editFile{sql: sql, sinks: "  - name: out2\n    from: q\n    type: blackhole\n"}
	}, ""},
	{"new transform", func(sql string) editFile {
		return editFile{sql: sql, more: "  - name: r\n    sql: SELECT k, COUNT(*) AS n FROM b GROUP BY k\n", sinks: "  - name: out2\n    from: r\n    type: blackhole\n"}
	}, ""},
	{"state ttl", func(sql string) editFile {
		return editFile{sql: sql, opts: "    state_ttl: 1h\n"}
	}, ""},
	{"renamed", func(sql string) editFile {
		return editFile{sql: sql, name: "q2", opts: "    renamed_from: q\n"}
	}, "transform/q2/"},
	{"uid kept across a rename", func(sql string) editFile {
		return editFile{sql: sql, name: "q3", opts: "    uid: q\n"}
	}, ""},
}

// editRun runs file over dir's input (follow mode) with store until
// every source read rowsA and rowsB rows in this run, stops it
// gracefully (a final checkpoint) and returns the pipeline and its graph.
func editRun(t *testing.T, dir, text string, store *checkpoint.Store, rowsA, rowsB int64, reset ...string) (*pipeline.Pipeline, *runtime.Graph, error) {
	t.Helper()
	file := filepath.Join(dir, "edits.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Plan.Close() })
	g, err := p.Plan.Graph()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runtime.Run(context.Background(), g, runtime.Options{Stop: stop, Checkpoint: runtime.CheckpointOptions{Interval: time.Hour, Store: store, ResetState: reset}})
	}()
	var runErr error
	testenv.Eventually(t, 20*time.Second, "every row read", func() error {
		select {
		case runErr = <-done:
			return nil
		default:
		}
		if a, b := g.Sources[0].Stats.RowsIn.Load(), g.Sources[1].Stats.RowsIn.Load(); a != rowsA || b != rowsB {
			return fmt.Errorf("%d and %d rows", a, b)
		}
		return nil
	})
	if runErr != nil {
		return p, g, runErr
	}
	close(stop)
	return p, g, <-done
}

// opState lists the state of g's operator with state ID id as it is now.
func opState(t *testing.T, p *pipeline.Pipeline, g *runtime.Graph, id string) []string {
	t.Helper()
	for _, on := range g.Ops {
		if on.ID == id {
			if _, ok := on.Op.(operator.Snapshotter); !ok {
				t.Fatalf("%s keeps no state", id)
			}
			return dumpLines(t, func(d *pipeline.StateDump) error { return p.DumpLive(on, d) })
		}
	}
	var ids []string
	for _, on := range g.Ops {
		ids = append(ids, on.ID)
	}
	t.Fatalf("no operator %s among %q", id, ids)
	return nil
}

// splitInput cuts a and b's input (as dumpInput writes it) in halves:
// first appends the first halves to dir's files, rest the second.
func splitInput(t *testing.T, dir string) (first, rest func()) {
	t.Helper()
	full := t.TempDir()
	dumpInput(t, full)
	cut := func(name string) (head, tail []byte) {
		data, err := os.ReadFile(filepath.Join(full, name))
		if err != nil {
			t.Fatal(err)
		}
		h, tl := edittest.Halves(string(data))
		return []byte(h), []byte(tl)
	}
	aHead, aTail := cut("a.csv")
	bHead, bTail := cut("b.csv")
	write := func(name string, data []byte) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return func() { write("a.csv", aHead); write("b.csv", bHead) },
		func() { write("a.csv", aTail); write("b.csv", bTail) }
}

// TestEditMatrix: for each stateful operator kind and each edit around
// it that keeps its state, a run restored from the checkpoint of the
// unedited pipeline over the first half of the input, then fed the
// second half, holds the same state in that operator as a from-scratch
// run of the edited pipeline over the whole input (so its state was
// kept: without it the counts would be of the second half only); and
// an edit of the operator itself is refused, naming it, unless the run
// resets it, when it starts empty.
func TestEditMatrix(t *testing.T) {
	for _, op := range edittest.Ops {
		for _, e := range edits {
			t.Run(op.Name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				first, rest := splitInput(t, dir)
				first()
				store, err := checkpoint.Open(filepath.Join(dir, "state"), "edits")
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := editRun(t, dir, editFile{sql: op.SQL}.text(dir), store, 20, 15); err != nil {
					t.Fatal(err)
				}
				rest()
				edited := e.edit(op.SQL)
				id := "transform/q/" + op.ID
				if e.id != "" {
					id = e.id + op.ID
				}
				p, g, err := editRun(t, dir, edited.text(dir), store, 20, 15)
				if err != nil {
					t.Fatalf("the edited pipeline did not restore: %v", err)
				}
				if g.Checkpoints.Restored.Load() == 0 {
					t.Fatal("nothing was restored")
				}
				got := opState(t, p, g, id)

				scratch := t.TempDir()
				all, more := splitInput(t, scratch)
				all()
				more()
				sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "edits")
				if err != nil {
					t.Fatal(err)
				}
				sp, sg, err := editRun(t, scratch, edited.text(scratch), sstore, 40, 30)
				if err != nil {
					t.Fatal(err)
				}
				want := opState(t, sp, sg, id)
				if strings.HasSuffix(op.Name, "join") {
					// An inner join's $matches is not kept up to date (only
					// an outer side needs it): it depends on the order the
					// two inputs were read in.
					got, want = withoutMatches(got), withoutMatches(want)
				}
				if len(want) < 2 {
					t.Fatalf("the from-scratch run holds no state in %s: the case proves nothing", id)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s after the edit holds\n %q\nwant (a from-scratch run of the edited pipeline)\n %q", id, got, want)
				}
			})
		}
		t.Run(op.Name+"/changed", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first, rest := splitInput(t, dir)
			first()
			store, err := checkpoint.Open(filepath.Join(dir, "state"), "edits")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := editRun(t, dir, editFile{sql: op.SQL}.text(dir), store, 20, 15); err != nil {
				t.Fatal(err)
			}
			rest()
			id := "transform/q/" + op.ID
			_, g, err := editRun(t, dir, editFile{sql: op.Changed}.text(dir), store, 20, 15)
			if err == nil {
				t.Fatal("a changed operator ran on its old state")
			}
			for _, want := range []string{"does not fit the edited pipeline", `transform "q"`, "[" + id + "]", "--reset-state " + id, "--backfill"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
			if g.Sources[0].Stats.RowsIn.Load() != 0 {
				t.Error("the refused run read rows")
			}
			// Reset, it starts empty: it holds only the second half.
			p, g, err := editRun(t, dir, editFile{sql: op.Changed}.text(dir), store, 20, 15, id)
			if err != nil {
				t.Fatalf("--reset-state %s: %v", id, err)
			}
			got := opState(t, p, g, id)
			half := t.TempDir()
			_, more := splitInput(t, half)
			more()
			hstore, err := checkpoint.Open(filepath.Join(half, "state"), "edits")
			if err != nil {
				t.Fatal(err)
			}
			hp, hg, err := editRun(t, half, editFile{sql: op.Changed}.text(half), hstore, 20, 15)
			if err != nil {
				t.Fatal(err)
			}
			want := opState(t, hp, hg, id)
			if strings.HasSuffix(op.Name, "join") {
				got, want = withoutMatches(got), withoutMatches(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s reset holds\n %q\nwant (the second half alone)\n %q", id, got, want)
			}
		})
	}
}

// withoutMatches cuts the last column ($matches) off a join's dump lines.
func withoutMatches(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if j := strings.LastIndex(l, ", "); j > 0 && strings.HasSuffix(l, "]") && strings.Contains(l, ": +I[") {
			l = l[:j] + "]"
		}
		out[i] = l
	}
	return out
}

// writeFormat3 writes cp into store's directory as a checkpoint file of
// format 3 (the layout of 4, operators named by depth) and points the
// manifest at it, as an etld before the state IDs by kind left it.
func writeFormat3(t *testing.T, store *checkpoint.Store, cp *checkpoint.Checkpoint) {
	t.Helper()
	body := append([]byte("ETLDCKPT"), 3)
	body = binary.AppendVarint(body, cp.ID)
	body = binary.AppendVarint(body, cp.Time.UnixNano())
	flag := func(b bool) byte {
		if b {
			return 1
		}
		return 0
	}
	body = append(body, flag(cp.Finished))
	body = row.AppendString(body, cp.Pipeline)
	body = binary.AppendUvarint(body, uint64(len(cp.Components)))
	for _, c := range cp.Components {
		body = row.AppendString(body, c.ID)
		body = row.AppendString(body, c.Fingerprint)
		body = append(body, flag(c.Ended))
		body = row.AppendString(body, c.RuntimePart)
		body = binary.AppendVarint(body, c.Entries)
		body = binary.AppendUvarint(body, uint64(len(c.Runtime)))
		body = append(body, c.Runtime...)
		body = append(body, flag(c.Connector != nil))
		body = binary.AppendUvarint(body, uint64(len(c.Connector)))
		body = append(body, c.Connector...)
	}
	body = binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	name := fmt.Sprintf("chk-%020d", cp.ID)
	if err := os.WriteFile(filepath.Join(store.Dir(), name), body, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"version":3,"id":%d,"file":%q,"time":"x"}`+"\n", cp.ID, name)
	if err := os.WriteFile(filepath.Join(store.Dir(), "MANIFEST"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint of format 3, whose operators are named by their depth
// below the transform's result (the GROUP BY of q is transform/q/1 under
// its result's Calc), restores into the operators it was taken of.
func TestFormat3CheckpointRestores(t *testing.T) {
	op := edittest.Ops[0]
	dir := t.TempDir()
	first, rest := splitInput(t, dir)
	first()
	store, err := checkpoint.Open(filepath.Join(dir, "state"), "edits")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := editRun(t, dir, editFile{sql: op.SQL}.text(dir), store, 20, 15); err != nil {
		t.Fatal(err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("checkpoint %v, %v", cp, err)
	}
	if cp.Format != checkpoint.Version {
		t.Errorf("written in format %d, want %d", cp.Format, checkpoint.Version)
	}
	found := false
	for i := range cp.Components {
		if cp.Components[i].ID == "transform/q/"+op.ID {
			cp.Components[i].ID, found = "transform/q/1", true
		}
	}
	if !found {
		t.Fatalf("no transform/q/%s in %+v", op.ID, cp.Components)
	}
	cp.ID++
	writeFormat3(t, store, cp)
	if old, err := store.Latest(); err != nil || old.Format != 3 {
		t.Fatalf("the format 3 file reads as %+v, %v", old, err)
	}
	rest()
	p, g, err := editRun(t, dir, editFile{sql: op.SQL}.text(dir), store, 20, 15)
	if err != nil {
		t.Fatal(err)
	}
	got := opState(t, p, g, "transform/q/"+op.ID)
	scratch := t.TempDir()
	all, more := splitInput(t, scratch)
	all()
	more()
	sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "edits")
	if err != nil {
		t.Fatal(err)
	}
	sp, sg, err := editRun(t, scratch, editFile{sql: op.SQL}.text(scratch), sstore, 40, 30)
	if err != nil {
		t.Fatal(err)
	}
	if want := opState(t, sp, sg, "transform/q/"+op.ID); !slices.Equal(got, want) {
		t.Errorf("restored from format 3 it holds\n %q\nwant\n %q", got, want)
	}
	if cp, err := store.Latest(); err != nil || cp.Format != checkpoint.Version || cp.Find("transform/q/"+op.ID) == nil {
		t.Errorf("the next checkpoint is not of format %d with the new IDs: %+v, %v", checkpoint.Version, cp, err)
	}
}

// A source column widened migrates the GROUP BY's state in place and
// the state ends as a from-scratch run's of the edited pipeline: SMALLINT
// to INT (the saved values read as they are), and INT to BIGINT and FLOAT
// to DOUBLE in the aggregates' values and in the group key (the saved
// values and keys retagged); a narrowing is refused naming the column.
func TestWidenedColumnMigrates(t *testing.T) {
	for _, c := range []struct {
		name, sql, from, to, why string
	}{
		{"SMALLINT to INT", "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM a GROUP BY k", "SMALLINT", "INT", "SMALLINT -> INT"},
		{"INT to BIGINT in values", "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m, MIN(v) AS mi FROM a GROUP BY k", "INT", "BIGINT", "INT -> BIGINT"},
		// The input's v values never repeat: keys of them would not
		// meet again after the restore.
		{"INT to BIGINT in the key", "SELECT v / 10 AS m, COUNT(*) AS n, MAX(k) AS mk FROM a GROUP BY v / 10", "INT", "BIGINT", "INT -> BIGINT"},
		{"FLOAT to DOUBLE", "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM a GROUP BY k", "FLOAT", "DOUBLE", "FLOAT -> DOUBLE"},
		{"FLOAT to DOUBLE in the key", "SELECT FLOOR(v / 10) AS f, COUNT(*) AS n FROM a GROUP BY FLOOR(v / 10)", "FLOAT", "DOUBLE", "FLOAT -> DOUBLE"},
		// Two workers: a retagged key hashes into another key group,
		// which another worker may own.
		{"INT to BIGINT in the key, two workers", "parallelism 2: SELECT v / 10 AS m, COUNT(*) AS n, MAX(k) AS mk FROM a GROUP BY v / 10", "INT", "BIGINT", "INT -> BIGINT"},
	} {
		t.Run(c.name, func(t *testing.T) { widenedColumn(t, c.sql, c.from, c.to, c.why) })
	}
}

func widenedColumn(t *testing.T, sql, from, to, why string) {
	sql, par := strings.CutPrefix(sql, "parallelism 2: ")
	typed := func(dir, typ string) string {
		text := strings.ReplaceAll(editFile{sql: sql}.text(dir), "v BIGINT", "v "+typ)
		if par {
			text = strings.Replace(text, "name: edits\n", "name: edits\nparallelism: 2\n", 1)
		}
		return text
	}
	dir := t.TempDir()
	first, rest := splitInput(t, dir)
	first()
	store, err := checkpoint.Open(filepath.Join(dir, "state"), "edits")
	if err != nil {
		t.Fatal(err)
	}
	fp, fg, err := editRun(t, dir, typed(dir, from), store, 20, 15)
	if err != nil {
		t.Fatal(err)
	}
	before := opState(t, fp, fg, "transform/q/group_aggregate#1")
	rest()
	cp, err := store.Latest()
	if err != nil {
		t.Fatal(err)
	}
	// What validate --against-state shows.
	verdicts := func(typ string) map[string]pipeline.StateVerdict {
		file := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(file, []byte(typed(dir, typ)), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Plan.Close()
		vs, err := p.StateVerdicts(cp, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]pipeline.StateVerdict{}
		for _, v := range vs {
			out[v.ID] = v
		}
		return out
	}
	const id = "transform/q/group_aggregate#1"
	// A narrowing (where v reaches the operator as it is: v / 10 of a
	// TINYINT is an INT) is refused.
	if v := verdicts("TINYINT")[id]; strings.Contains(sql, "GROUP BY k") && (v.Action != pipeline.StateRefuse || !strings.Contains(v.Why, "changed from "+from+" to ")) {
		t.Errorf("%s to TINYINT: %+v, want refused naming the column", from, v)
	}
	if v := verdicts(to)[id]; v.Action != pipeline.StateMigrate || !strings.Contains(v.Why, why) {
		t.Errorf("%s to %s: %+v, want migrate", from, to, v)
	}
	// `etld state dump` of the checkpoint with the edited file lists the
	// saved state under the wider types: the same values.
	dumped := func() []string {
		file := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(file, []byte(typed(dir, to)), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Plan.Close()
		return dumpLines(t, func(d *pipeline.StateDump) error { return p.DumpState(store, cp, id, d) })
	}()
	if !slices.Equal(dumped, before) {
		t.Errorf("the checkpoint dumped under %s:\n %q\nthe state it was taken of:\n %q", to, dumped, before)
	}
	p, g, err := editRun(t, dir, typed(dir, to), store, 20, 15)
	if err != nil {
		t.Fatal(err)
	}
	got := opState(t, p, g, id)
	scratch := t.TempDir()
	all, more := splitInput(t, scratch)
	all()
	more()
	sstore, err := checkpoint.Open(filepath.Join(scratch, "state"), "edits")
	if err != nil {
		t.Fatal(err)
	}
	sp, sg, err := editRun(t, scratch, typed(scratch, to), sstore, 40, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := opState(t, sp, sg, id)
	if !slices.Equal(got, want) {
		t.Errorf("migrated state\n %q\nwant\n %q", got, want)
	}
	if len(want) == 0 {
		t.Error("the state is empty: the test shows nothing")
	}
}
