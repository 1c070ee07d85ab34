package runtime

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// refusingSink buffers what Write gives it and, at Flush, keeps the rows
// the target takes and hands those it refuses (values in refuse) to
// reject, as the MySQL and Elasticsearch sinks do with a batch the
// server answered row by row. With failFlush every Flush fails, as a
// target that is down does.
type refusingSink struct {
	memSink
	refuse    map[int64]bool
	reject    func(connector.BadRecord) error
	failFlush bool
	buf       []row.Change
}

func (s *refusingSink) Write(_ context.Context, b *row.Batch) error {
	s.buf = append(s.buf, b.Changes...)
	return nil
}

func (s *refusingSink) Flush(context.Context) error {
	if s.failFlush && len(s.buf) > 0 {
		return errors.New("index_not_found_exception")
	}
	for _, c := range s.buf {
		if s.refuse[c.Row[0].Int64()] {
			if err := s.reject(connector.BadRecord{Position: "sink t", Raw: []byte(c.String()), Err: errors.New("data too long")}); err != nil {
				return err
			}
			continue
		}
		s.changes = append(s.changes, c)
	}
	s.buf = s.buf[:0]
	return nil
}

// A sink's written count is what its target acknowledged: rows it
// refused (handed to on_error) and rows a failed Flush never wrote are
// not written.
func TestSinkCountsWhatTheTargetAcknowledged(t *testing.T) {
	policy, err := NewPolicy("sink", "sinka", "skip", nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	feed := policy.Feed()
	sink := &refusingSink{refuse: map[int64]bool{2: true, 4: true}, reject: feed.Reject}
	g := graph(&seqSource{n: 5}, nil)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "sinka", Kind: "sink", Feed: feed}, Input: &g.Sources[0].Node, Sink: sink, Mode: connector.Append})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	st := &g.Sinks[0].Stats
	if in, out, refused := st.RowsIn.Load(), st.RowsOut.Load(), policy.Skipped(); in != 5 || out != 3 || refused != 2 || len(sink.changes) != 3 {
		t.Errorf("rows in %d, written %d, refused %d, in the target %d; want 5, 3, 2, 3", in, out, refused, len(sink.changes))
	}

	down := &refusingSink{failFlush: true}
	g = graph(&seqSource{n: 80}, nil)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "es", Kind: "sink"}, Input: &g.Sources[0].Node, Sink: down, Mode: connector.Append})
	if err := Run(context.Background(), g, Options{}); err == nil {
		t.Fatal("a run whose sink never flushed succeeded")
	}
	if st := &g.Sinks[0].Stats; st.RowsOut.Load() != 0 {
		t.Errorf("rows in %d, written %d; want written 0: the target acknowledged nothing", st.RowsIn.Load(), st.RowsOut.Load())
	}
}
