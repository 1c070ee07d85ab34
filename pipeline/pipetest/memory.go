package pipetest

// The in-memory connectors a test run puts in place of the pipeline's
// own: a source that reads the test's input, one record per Read, and a
// sink that keeps every change it is given.

import (
	"context"
	"io"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// record is one input record of a test: a row with its kind (rows:), or
// raw bytes the source's format decodes (lines:, file:).
type record struct {
	kind row.Kind
	row  row.Row // nil for a raw record
	raw  []byte
	// header: the record is the format's header (csv header: true).
	header bool
	pos    string
}

// memSource reads records. It hands out one record a Read, so that the
// watermark, which the runtime advances after each batch from the rows'
// event time, moves row by row: which rows a window counts as late does
// not depend on how records happened to be batched.
type memSource struct {
	records []record
	next    int
	width   int
	// decoder decodes raw records into the columns of decoded; columns
	// maps each of them to its place in the source's physical row (the
	// others, metadata columns, stay NULL).
	decoder connector.Decoder
	decoded int
	columns []int
	reject  func(connector.BadRecord) error
	// table is set when a lookup join reads the source by key.
	table *memTable
}

func (s *memSource) Bounded() bool                   { return true }
func (s *memSource) Open(ctx context.Context) error  { return nil }
func (s *memSource) Close(ctx context.Context) error { return nil }

func (s *memSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	for s.next < len(s.records) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec := s.records[s.next]
		s.next++
		b := row.NewBatch(2, s.width)
		if err := s.decode(rec, b); err != nil {
			return nil, err
		}
		if b.Len() == 0 {
			continue
		}
		b.Origin = origin(rec.pos)
		return b, nil
	}
	return nil, io.EOF
}

// decode appends the changes of one record to b: its row, or what the
// format decodes from its bytes. A record the format refuses goes to the
// source's on_error; the error is the one that policy returns.
func (s *memSource) decode(rec record, b *row.Batch) error {
	if rec.row != nil {
		r := b.NewRow()
		copy(r, rec.row)
		b.Append(rec.kind, r)
		return nil
	}
	if rec.header {
		if err := s.decoder.(connector.HeaderDecoder).DecodeHeader(rec.raw); err != nil {
			return s.reject(connector.BadRecord{Position: rec.pos, Raw: rec.raw, Err: err})
		}
		return nil
	}
	tmp := row.NewBatch(2, s.decoded)
	if err := s.decoder.Decode(rec.raw, tmp); err != nil {
		return s.reject(connector.BadRecord{Position: rec.pos, Raw: rec.raw, Err: err})
	}
	for _, c := range tmp.Changes {
		r := b.NewRow()
		for i, v := range c.Row {
			r[s.columns[i]] = v
		}
		b.Append(c.Kind, r)
	}
	return nil
}

// origin names the record all of a batch's changes came from.
type origin string

func (o origin) Position(int) string { return string(o) }

// memSink keeps the changes its mode lets through, as the runtime hands
// them to a real sink of that mode.
type memSink struct {
	in      connector.SinkInput
	changes []row.Change
}

func (s *memSink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, Retract: true}
}

func (s *memSink) Bind(in connector.SinkInput) error { s.in = in; return nil }
func (s *memSink) Open(ctx context.Context) error    { return nil }
func (s *memSink) Flush(ctx context.Context) error   { return nil }
func (s *memSink) Close(ctx context.Context) error   { return nil }

func (s *memSink) Write(ctx context.Context, b *row.Batch) error {
	for _, c := range b.Changes {
		s.changes = append(s.changes, row.Change{Kind: c.Kind, Row: c.Row.Clone()})
	}
	return nil
}

var (
	_ connector.Source = (*memSource)(nil)
	_ connector.Sink   = (*memSink)(nil)
	_ row.Origin       = origin("")
)
