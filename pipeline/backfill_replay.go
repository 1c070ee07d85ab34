package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
)

// The replays of a backfill: a plan run from its sources' start up to a
// checkpoint's positions, its sinks replaced by in-memory tables, with a
// store of its own whose final checkpoint holds the state its operators
// reached.

// replayState is a replay's final checkpoint and the store holding its
// parts.
type replayState struct {
	cp    *checkpoint.Checkpoint
	store *checkpoint.Store
}

// replayRun is the replays of one plan (the edited one, or the one the
// state was built with) in one backfill: from the sources' start up to a
// checkpoint, then, while the pipeline's running version went on, from
// that checkpoint up to a later one. Its store and its sinks' tables go
// on from one to the next.
type replayRun struct {
	store  *checkpoint.Store
	tables map[string]*sinkTable
	// at is where each source's last replay ended, by source ID: the
	// position it was read up to, or the one a source replayed from a
	// snapshot reached.
	at map[string][]byte
	// rows counts the records the replays read.
	rows *atomic.Int64
}

func newReplayRun(dir, name string, rows *atomic.Int64) (*replayRun, error) {
	store, err := checkpoint.Open(dir, name)
	if err != nil {
		return nil, err
	}
	return &replayRun{store: store, tables: map[string]*sinkTable{}, at: map[string][]byte{}, rows: rows}, nil
}

// state is the state the last replay ended with.
func (r *replayRun) state() (*replayState, error) {
	final, err := r.store.Latest()
	if err != nil {
		return nil, err
	}
	if final == nil {
		return nil, errors.New("the replay stored no checkpoint")
	}
	return &replayState{cp: final, store: r.store}, nil
}

// run runs g, the graph of q's plan, up to to's positions into the
// run's tables: with from nil, from the sources' start; else from
// the positions in from (by source ID: where the previous replay
// ended), restoring the state the previous replay ended with (q must
// then be a plan of the same file). A source whose position in to was
// at its end ends as it did (its watermark then closes every window);
// the others wait at their position until all are there, and the run
// then stops as a stop with a state directory does, keeping open
// windows. A source replayed from a snapshot
// (connector.SnapshotRereader) reads a fresh snapshot instead of its
// history up to to, and ends at a position of its own (r.at).
func (r *replayRun) run(ctx context.Context, q *Pipeline, g *runtime.Graph, from map[string][]byte, to *checkpoint.Checkpoint) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var waiting sync.WaitGroup
	var rereads []*rereadSource
	for i, sn := range g.Sources {
		if i >= len(q.Plan.Sources) {
			break // the constant tables a query reads
		}
		comp := to.Find(sn.ID)
		if comp == nil {
			return fmt.Errorf("source %q: no position to read again up to", sn.Name)
		}
		rs := &rereadSource{Source: sn.Source, id: sn.ID, ended: comp.Ended, rows: r.rows, at: comp.Connector}
		if err := reread(sn.Source, from, rs); err != nil {
			return fmt.Errorf("source %q: %w", sn.Name, err)
		}
		rereads = append(rereads, rs)
		if !comp.Ended {
			waiting.Add(1)
			rs.reached = sync.OnceFunc(waiting.Done)
		}
		sn.Source = rs
		if ss, ok := rs.Source.(connector.SplitSource); ok {
			// The watermark of a source of splits (Kafka's partitions)
			// is their least, as in the run that took the checkpoint.
			sn.Source = &rereadSplitSource{rereadSource: rs, splits: ss}
		}
	}
	defer func() {
		for _, rs := range rereads {
			r.at[rs.id] = rs.at
		}
	}()
	for i, sn := range g.Sinks {
		t := r.tables[sn.Name]
		if t == nil {
			t = newSinkTable(sn.Mode, sn.Key, q.Plan.Sinks[i].Input.Root.Schema.Names())
			r.tables[sn.Name] = t
		}
		sn.Sink = t
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runtime.Run(ctx, g, runtime.Options{Stop: stop, Checkpoint: runtime.CheckpointOptions{Interval: time.Hour, Store: r.store}, MaxStateBytes: q.Spec.MaxStateBytes})
	}()
	all := make(chan struct{})
	go func() {
		waiting.Wait()
		close(all)
	}()
	var err error
	select {
	case err = <-done:
	case <-all:
		close(stop)
		err = <-done
	}
	return err
}

// reread readies src for a replay: from its start (from nil) or from
// its position in from, up to rs.at.
func reread(src connector.Source, from map[string][]byte, rs *rereadSource) error {
	sr, snap := src.(connector.SnapshotRereader)
	if from == nil {
		if snap {
			if _, ok := src.(connector.Positioner); !ok {
				return errors.New("a source replayed from a snapshot must say its position")
			}
			return sr.RereadSnapshot(rs.at)
		}
		rr, ok := src.(connector.Rereader)
		if !ok {
			return errors.New("it cannot be read again up to a checkpoint's position")
		}
		return rr.RereadTo(rs.at)
	}
	start, ok := from[rs.id]
	if !ok {
		return errors.New("the replay before has no position to read on from")
	}
	if snap {
		return sr.RereadRange(start, rs.at)
	}
	ranged, ok := src.(connector.RangeRereader)
	if !ok {
		return errors.New("it cannot read its input again from a checkpoint's position")
	}
	return ranged.RereadRange(start, rs.at)
}

// rereadSource is a source read again up to a checkpoint's position. At
// that position (the source's io.EOF), one that had ended there ends;
// one that had not waits until the run stops, as a source with nothing
// more to read does, after calling reached. It hides the source's other
// interfaces but those that change what the run makes of its rows
// (UpdatingSource, SplitSource): a replay commits nothing (a Kafka
// group's offsets) and keeps no position of its own.
type rereadSource struct {
	connector.Source
	id string
	// at is the position the read ends at: to's, or for a source
	// replayed from a snapshot what its Position says at its end.
	at      []byte
	ended   bool
	reached func()
	atEnd   bool
	rows    *atomic.Int64
}

// Updating implements connector.UpdatingSource: a source of updates
// stays one (the runtime never fuses a Calc over it).
func (r *rereadSource) Updating() bool {
	u, ok := r.Source.(connector.UpdatingSource)
	return ok && u.Updating()
}

// rereadSplitSource is a rereadSource of a connector.SplitSource.
type rereadSplitSource struct {
	*rereadSource
	splits connector.SplitSource
}

func (r *rereadSplitSource) Splits() []string                 { return r.splits.Splits() }
func (r *rereadSplitSource) Split(b *row.Batch, i int) string { return r.splits.Split(b, i) }

func (r *rereadSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	if !r.atEnd {
		b, err := r.Source.Read(ctx, max)
		if b != nil && r.rows != nil {
			r.rows.Add(int64(b.Len()))
		}
		if !errors.Is(err, io.EOF) {
			return b, err
		}
		r.atEnd = true
		if _, snap := r.Source.(connector.SnapshotRereader); snap {
			pos, perr := r.Source.(connector.Positioner).Position()
			if perr != nil {
				return b, perr
			}
			r.at = pos
		}
		if r.ended {
			return b, err
		}
		r.reached()
		if b != nil && b.Len() > 0 {
			return b, nil
		}
	}
	if r.ended {
		return nil, io.EOF
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// sinkTable is what a sink would hold: for an upsert sink the last row
// of each key, for the others every row added and not retracted, counted.
type sinkTable struct {
	mode connector.Mode
	key  []int
	// names are the sink's columns.
	names []string
	mu    sync.Mutex
	// rows maps a key (upsert) or a whole row (the other modes) to the
	// row and, outside upsert mode, how many times it is held.
	rows map[string]*heldRow
	buf  []byte
}

type heldRow struct {
	r     row.Row
	count int
}

func newSinkTable(mode connector.Mode, key []int, names []string) *sinkTable {
	return &sinkTable{mode: mode, key: key, names: names, rows: map[string]*heldRow{}}
}

func (t *sinkTable) Capabilities() connector.Capabilities { return connector.Capabilities{} }
func (t *sinkTable) Bind(connector.SinkInput) error       { return nil }
func (t *sinkTable) Open(context.Context) error           { return nil }
func (t *sinkTable) Flush(context.Context) error          { return nil }
func (t *sinkTable) Close(context.Context) error          { return nil }

func (t *sinkTable) Write(_ context.Context, b *row.Batch) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range b.Changes {
		if t.mode == connector.Upsert {
			t.buf = row.KeyOf(t.buf[:0], c.Row, t.key)
			switch c.Kind {
			case row.Insert, row.UpdateAfter:
				t.rows[string(t.buf)] = &heldRow{r: row.Detach(c.Row)}
			case row.Delete:
				delete(t.rows, string(t.buf))
			}
			continue
		}
		t.buf = row.AppendRow(t.buf[:0], c.Row)
		h := t.rows[string(t.buf)]
		if c.Kind.IsAdd() {
			if h == nil {
				h = &heldRow{r: row.Detach(c.Row)}
				t.rows[string(t.buf)] = h
			}
			h.count++
			continue
		}
		if h != nil {
			if h.count--; h.count == 0 {
				delete(t.rows, string(t.buf))
			}
		}
	}
	return nil
}

var (
	_ connector.Sink           = (*sinkTable)(nil)
	_ connector.UpdatingSource = (*rereadSource)(nil)
	_ connector.SplitSource    = (*rereadSplitSource)(nil)
)
