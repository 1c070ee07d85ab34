// Package blackhole is Flink's blackhole connector: a sink that takes any
// changelog and discards it. It measures what a pipeline costs without the
// cost of a target.
package blackhole

import (
	"context"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config has no options.
type Config struct{}

// Register adds the blackhole sink to r.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "blackhole", "discards every change (for benchmarks and dry runs)", New)
}

// New returns a blackhole sink.
func New(Config, connector.SinkEnv) (connector.Sink, error) { return &Sink{}, nil }

// Sink counts and discards.
type Sink struct {
	rows atomic.Int64
}

// Rows is the number of changes discarded.
func (s *Sink) Rows() int64 { return s.rows.Load() }

func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, Retract: true, AutoRetract: true}
}
func (s *Sink) Bind(connector.SinkInput) error { return nil }
func (s *Sink) Open(context.Context) error     { return nil }
func (s *Sink) Write(_ context.Context, b *row.Batch) error {
	s.rows.Add(int64(b.Len()))
	return nil
}
func (s *Sink) Flush(context.Context) error { return nil }

// CopiesRows implements connector.RowCopier: Write keeps nothing, so the
// rows' memory may be reused once it returned.
func (s *Sink) CopiesRows() bool { return true }

// CopiesText implements connector.TextCopier: nor their text.
func (s *Sink) CopiesText() bool { return true }

func (s *Sink) Close(context.Context) error { return nil }

var (
	_ connector.Sink       = (*Sink)(nil)
	_ connector.RowCopier  = (*Sink)(nil)
	_ connector.TextCopier = (*Sink)(nil)
)

// FlinkSink implements connector.FlinkSink: Flink's blackhole connector.
func (*Sink) FlinkSink(connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	t.Set("connector", "blackhole", "")
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)
