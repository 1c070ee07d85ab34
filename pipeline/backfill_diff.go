package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// sinkWrite is what a backfill gives one sink: the changes that turn the
// table the old pipeline left (its replay) into the edited one's.
type sinkWrite struct {
	SinkDiff
	// index is the sink's in the edited plan's Sinks.
	index   int
	changes *row.Batch
}

// diffSinks compares, sink by sink of the edited plan, the table the
// pipeline the state was built with gives and the edited one's. An upsert
// sink gets the rows that differ (a new column counts as a difference)
// and a delete of each key gone; a sink of another mode whose rows would
// change refuses the backfill. A sink new in the edited file is left out:
// as after any edit, it receives the changes from now on.
func diffSinks(edited *Pipeline, oldTables, newTables map[string]*sinkTable) ([]sinkWrite, error) {
	var out []sinkWrite
	var errs spec.List
	for i, s := range edited.Plan.Sinks {
		name := s.Spec.Name
		oldT, newT := oldTables[name], newTables[name]
		if oldT == nil || newT == nil {
			continue
		}
		names := s.Input.Root.Schema.Names()
		if s.Mode != connector.Upsert {
			if add, retract := multisetDiff(oldT, newT); add+retract > 0 {
				errs = append(errs, spec.Errorf(s.Spec.Pos, "sinks."+name, "sink %q runs in %s mode: the backfill would add %d of its rows and take back %d, which only an upsert sink, by key, can take", name, s.Mode, add, retract))
			}
			continue
		}
		if oldT.mode != connector.Upsert {
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sinks."+name, "sink %q ran in %s mode: what it holds has no key to update by", name, oldT.mode))
			continue
		}
		oldNames := oldT.names
		oldKey := keyNames(oldT.key, oldNames)
		if newKey := keyNames(s.Key, names); !slices.Equal(oldKey, newKey) {
			errs = append(errs, spec.Errorf(s.Spec.Pos, "sinks."+name, "sink %q's key changed from (%s) to (%s): the rows it holds cannot be matched with the new ones", name, strings.Join(oldKey, ", "), strings.Join(newKey, ", ")))
			continue
		}
		out = append(out, upsertDiff(i, name, names, s.Key, oldT, newT))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("backfill refused: %w", errs)
	}
	return out, nil
}

func keyNames(key []int, names []string) []string {
	out := make([]string, len(key))
	for i, k := range key {
		out[i] = strings.ToLower(names[k])
	}
	return out
}

// upsertDiff is the changes that turn oldT into newT by key: -D (the
// key's columns, the others NULL) for a key gone, then +U for a row new
// or different. The key's encoding is the same in both: the key columns are
// the same, by name and order.
func upsertDiff(index int, name string, names []string, key []int, oldT, newT *sinkTable) sinkWrite {
	w := sinkWrite{SinkDiff: SinkDiff{Sink: name}, index: index, changes: &row.Batch{}}
	// Where each new column was in the old rows, -1 when it is new.
	from := make([]int, len(names))
	for i, n := range names {
		from[i] = slices.IndexFunc(oldT.names, func(o string) bool { return strings.EqualFold(o, n) })
	}
	// The deletes go first: were a key's encoding to differ between the
	// two tables (a key column's type widened), its delete and its
	// upsert would meet in one batch, and a sink folding each key's
	// changes keeps the last.
	var keys []string
	for k := range oldT.rows {
		if newT.rows[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // the sink gets the rows in one order, run after run
	oldKey := oldT.key
	for _, k := range keys {
		or := oldT.rows[k].r
		del := make(row.Row, len(names))
		for j, c := range key {
			del[c] = or[oldKey[j]]
		}
		w.changes.Append(row.Delete, del)
		w.Deleted++
	}
	keys = keys[:0]
	for k := range newT.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		nr := newT.rows[k].r
		if or := oldT.rows[k]; or != nil && sameRow(nr, or.r, from) {
			w.Unchanged++
			continue
		}
		w.changes.Append(row.UpdateAfter, nr)
		w.Upserted++
	}
	return w
}

// sameRow reports whether the new row nr equals the old row or, column
// by column (from: each new column's place in the old row, -1 if new).
func sameRow(nr, or row.Row, from []int) bool {
	for i, v := range nr {
		if from[i] < 0 || !row.Equal(v, or[from[i]]) {
			return false
		}
	}
	return true
}

// multisetDiff counts the rows newT holds more of than oldT (add) and
// fewer (retract).
func multisetDiff(oldT, newT *sinkTable) (add, retract int) {
	for k, h := range newT.rows {
		n := h.count
		if o := oldT.rows[k]; o != nil {
			n -= o.count
		}
		if n > 0 {
			add += n
		} else {
			retract -= n
		}
	}
	for k, h := range oldT.rows {
		if newT.rows[k] == nil {
			retract += h.count
		}
	}
	return add, retract
}

// write gives the sink its changes through the sink of writer, a fresh
// plan of the edited file: Open, Write, Flush and, for a sink that takes
// part in checkpoints, the snapshot and commit a checkpoint would make.
// The sink's writes are of a new life of the state directory
// (connector.RunInfo.Fence).
func (w sinkWrite) write(ctx context.Context, writer *Pipeline, store *checkpoint.Store) error {
	if w.changes.Len() == 0 {
		return nil
	}
	conn := writer.Plan.Sinks[w.index].Conn
	fail := func(what string, err error) error {
		return fmt.Errorf("backfill: sink %q: %s: %w", w.Sink, what, err)
	}
	if ra, ok := conn.(connector.RunAware); ok {
		id, since, err := store.Instance()
		if err != nil {
			return fail("state", err)
		}
		ra.SetRun(connector.RunInfo{Resumable: true, Pipeline: writer.Name(), Instance: id, Since: since,
			Fence: func() (uint64, error) { return store.Fence(time.Now()) }})
	}
	if err := conn.Open(ctx); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return fail("open", err)
	}
	err := conn.Write(ctx, w.changes)
	if err == nil {
		err = conn.Flush(ctx)
	}
	if err == nil {
		var state []byte
		if sn, ok := conn.(connector.SinkSnapshotter); ok {
			state, err = sn.Snapshot(ctx)
		}
		if c, ok := conn.(connector.Committer); ok && err == nil {
			err = c.Commit(ctx, state)
		}
	}
	if cerr := conn.Close(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}
	if err != nil {
		return fail("write", err)
	}
	return nil
}
