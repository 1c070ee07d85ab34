package runtime

import (
	"context"
	"io"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// changelogSource reads three records of a changelog format, the second
// an update that decodes into two changes (-U and +U), and marks each
// change with its record, as the file and Kafka sources do.
type changelogSource struct{ done bool }

func (s *changelogSource) Bounded() bool               { return true }
func (s *changelogSource) Open(context.Context) error  { return nil }
func (s *changelogSource) Close(context.Context) error { return nil }
func (s *changelogSource) Read(context.Context, int) (*row.Batch, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	b := &row.Batch{}
	pos := row.NewPositions(4, ":")
	b.Origin = pos
	b.Append(row.Insert, row.Row{row.BigIntValue(1)})
	pos.Mark(b.Len(), "cdc.json", 1)
	b.Append(row.UpdateBefore, row.Row{row.BigIntValue(1)})
	b.Append(row.UpdateAfter, row.Row{row.BigIntValue(2)})
	pos.Mark(b.Len(), "cdc.json", 2)
	b.Append(row.Delete, row.Row{row.BigIntValue(2)})
	pos.Mark(b.Len(), "cdc.json", 3)
	return b, io.EOF
}

// A source's IN counts the records it read, its OUT the changes they
// became.
func TestSourceCountsRecordsInAndChangesOut(t *testing.T) {
	g := graph(&changelogSource{}, nil)
	sink := &memSink{}
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "out", Kind: "sink"}, Input: &g.Sources[0].Node, Sink: sink, Mode: connector.Retract})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	st := &g.Sources[0].Stats
	if in, out := st.RowsIn.Load(), st.RowsOut.Load(); in != 3 || out != 4 || len(sink.changes) != 4 {
		t.Errorf("source in %d, out %d, sink got %d; want 3 records in, 4 changes out and in the sink", in, out, len(sink.changes))
	}
}
