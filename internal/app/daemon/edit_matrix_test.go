package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats/csv"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/edittest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/blackhole"
	srcfile "github.com/etld/etld/sources/file"
)

// reloadEdits are edits around an operator that keep its state, as the
// daemon's reload applies them: the edited transform's query and
// options, and its name.
var reloadEdits = []struct {
	name     string
	sql      func(sql string) string
	opts, to string
}{
	{"projection after", func(sql string) string { return "SELECT *, 1 AS one FROM (" + sql + ")" }, "", "q"},
	{"filter after", func(sql string) string { return "SELECT * FROM (" + sql + ") WHERE k IS NULL OR k <> 'none'" }, "", "q"},
	{"renamed", func(sql string) string { return sql }, "    renamed_from: q\n", "q2"},
}

// editText is the matrix's pipeline file over dir's inputs with transform
// name running sql.
func editText(dir, name, sql, opts string) string {
	return "checkpoint_interval: 20ms\n" + fmt.Sprintf(edittest.Pipeline, dir, sql, opts, name, "", "")
}

// TestReloadEditMatrix is the edit matrix under the daemon's reload
// (what SIGHUP runs): for each stateful operator kind, each edit around
// it that keeps its state, applied while the pipeline runs over the first
// half of its input, leaves the operator holding, once the second half is
// read, what a from-scratch run of the edited file holds over the whole
// input (so the state survived the reload); an edit of the operator
// itself is refused, naming it, and the old version keeps running.
func TestReloadEditMatrix(t *testing.T) {
	aRows, bRows := edittest.Rows(40, 1), edittest.Rows(30, 1)
	aHead, aTail := edittest.Halves(aRows)
	bHead, bTail := edittest.Halves(bRows)
	for _, op := range edittest.Ops {
		for _, e := range reloadEdits {
			t.Run(op.Name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				edited := e.sql(op.SQL)
				id := "transform/" + e.to + "/" + op.ID

				h, in := runOnFirstHalves(t, op.SQL, aHead, bHead)

				h.write("g.yaml", editText(in, e.to, edited, e.opts))
				if res := h.reload(); len(res.Failed) > 0 {
					t.Fatalf("the edit was refused: %+v (%q)", res, h.status("g.yaml").ReloadError)
				}
				appendTo(t, in, "a.csv", aTail)
				appendTo(t, in, "b.csv", bTail)
				waitRead(t, h, int64(strings.Count(aTail, "\n")), int64(strings.Count(bTail, "\n")))
				if st := h.status("g.yaml"); st.Checkpoints.Restored == 0 || st.Restarts != 0 {
					t.Fatalf("the edited version restored %d checkpoints after %d restarts, want its predecessor's state", st.Checkpoints.Restored, st.Restarts)
				}
				got := stoppedState(t, h, editText(in, e.to, edited, e.opts), id)

				scratch := newHarness(t)
				all := t.TempDir()
				appendTo(t, all, "a.csv", aRows)
				appendTo(t, all, "b.csv", bRows)
				scratch.write("g.yaml", editText(all, e.to, edited, e.opts))
				scratch.reload()
				scratch.waitState("g.yaml", Running)
				waitRead(t, scratch, 40, 30)
				want := stoppedState(t, scratch, editText(all, e.to, edited, e.opts), id)
				if strings.HasSuffix(op.Name, "join") {
					// An inner join's $matches depends on the order its
					// inputs were read in (only an outer side keeps it).
					got, want = cutMatches(got), cutMatches(want)
				}
				if len(want) < 2 {
					t.Fatalf("the from-scratch run holds no state in %s: the case proves nothing", id)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s after the reload holds\n %q\nwant (a from-scratch run of the edited file)\n %q", id, got, want)
				}
			})
		}
		t.Run(op.Name+"/changed", func(t *testing.T) {
			t.Parallel()
			h, in := runOnFirstHalves(t, op.SQL, aHead, bHead)
			testenv.Eventually(t, 10*time.Second, "a checkpoint", func() error {
				if h.status("g.yaml").Checkpoints.Count == 0 {
					return fmt.Errorf("none yet")
				}
				return nil
			})
			h.write("g.yaml", editText(in, "q", op.Changed, ""))
			res := h.reload()
			if !slices.Contains(res.Failed, filepath.Join(h.dir, "g.yaml")) {
				t.Errorf("reload %+v does not list the refused edit as failed", res)
			}
			st := h.status("g.yaml")
			if st.State != Running || st.Restarts != 0 {
				t.Errorf("after a refused edit the pipeline is %s with %d restarts, want the old version running", st.State, st.Restarts)
			}
			for _, want := range []string{"does not fit the edited pipeline", "transform/q/" + op.ID, "--reset-state"} {
				if !strings.Contains(st.ReloadError, want) {
					t.Errorf("reload error %q does not say %q", st.ReloadError, want)
				}
			}
		})
	}
}

// runOnFirstHalves starts a daemon running the matrix's file with
// transform q's query sql over inputs holding aHead and bHead, and waits
// until it has read them; it returns the daemon and the inputs' directory.
func runOnFirstHalves(t *testing.T, sql, aHead, bHead string) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	in := t.TempDir()
	appendTo(t, in, "a.csv", aHead)
	appendTo(t, in, "b.csv", bHead)
	h.write("g.yaml", editText(in, "q", sql, ""))
	h.reload()
	h.waitState("g.yaml", Running)
	waitRead(t, h, int64(strings.Count(aHead, "\n")), int64(strings.Count(bHead, "\n")))
	return h, in
}

func appendTo(t *testing.T, dir, name, data string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// waitRead waits until the running version of g.yaml has read a rows
// from source a and b from source b.
func waitRead(t *testing.T, h *harness, a, b int64) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("%d and %d rows read", a, b), func() error {
		st := h.status("g.yaml")
		read := map[string]int64{}
		for _, c := range st.Sources {
			read[c.Name] = c.In
		}
		if read["a"] != a || read["b"] != b {
			return fmt.Errorf("%v read (state %s, error %q)", read, st.State, st.Error)
		}
		return nil
	})
}

// stoppedState stops h's daemon (a final checkpoint) and lists what
// operator id holds in its newest checkpoint, read with the file text.
func stoppedState(t *testing.T, h *harness, text, id string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.sup.Shutdown(ctx)
	store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "edits")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	file := filepath.Join(t.TempDir(), "edits.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := connector.NewRegistry()
	blackhole.Register(r)
	srcfile.Register(r)
	csv.Register(r)
	p, err := pipeline.Load(file, pipeline.Env{Registry: r, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Plan.Close()
	var lines []string
	table := ""
	err = p.DumpState(store, cp, id, &pipeline.StateDump{
		Table: func(name string, cols row.Schema) error {
			table = name
			lines = append(lines, fmt.Sprintf("%s columns %v", name, cols.Names()))
			return nil
		},
		Row: func(r row.Row) error {
			lines = append(lines, table+": "+row.Change{Kind: row.Insert, Row: r}.String())
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// cutMatches cuts the last column ($matches) off a join's dump lines.
func cutMatches(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if j := strings.LastIndex(l, ", "); j > 0 && strings.HasSuffix(l, "]") && strings.Contains(l, ": +I[") {
			l = l[:j] + "]"
		}
		out[i] = l
	}
	return out
}
