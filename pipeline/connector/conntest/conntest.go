// Package conntest is the conformance kit of etld's connectors: a list of
// definitions, each a property of the contract in pipeline/connector,
// that every source and sink runs against the real service it talks to.
// A connector's test describes the connector with a Sink or a Source
// (how to make a fresh target or input, how to read back what landed);
// RunSink and RunSource run each definition that applies as a subtest
// named after it, and log the ones that do not apply and why.
//
// The definitions (Benthos's stream test definitions are the model):
//
//   - open-write-close: Close of a sink or source never opened is safe;
//     one opened, written (read) and closed delivers everything.
//   - close-after-failed-open: Close, twice, after an Open that failed.
//   - rows-not-kept: a connector.RowCopier keeps nothing of a batch once
//     Write returned: the batch is overwritten, and what lands is right.
//   - recovery-after-outage: a sink whose server goes away for longer
//     than its backoff's cap writes again within testenv.RecoveryBound
//     of the server's return, and loses nothing.
//   - exactly-once-after-crash: a sink with state in checkpoints
//     (SinkSnapshotter, Committer, RunAware), crashed after writing past
//     its checkpoint and restored from it, holds every row once.
//   - resume-from-position: a Positioner restored at any position reads
//     the rest of its input: with what was read before, the whole input
//     once, in each input's order for a Replayer.
package conntest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Schema is the rows the kit writes to sinks: a key and a value.
var Schema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "v", Type: row.Of(row.String)},
)

// Row is a row of Schema.
func Row(id int64, v string) row.Row {
	return row.Row{row.BigIntValue(id), row.StringValue(v)}
}

// Drain reads s in batches of at most max until it ends (io.EOF) and
// returns every change. An error other than io.EOF ends it with that
// error, and so do a batch of more than max changes and a Read that
// returns neither a change nor an error (Read blocks until it has one).
func Drain(ctx context.Context, s connector.Source, max int) ([]row.Change, error) {
	var out []row.Change
	for {
		b, err := s.Read(ctx, max)
		if b != nil {
			if b.Len() > max {
				return out, fmt.Errorf("Read(%d) returned %d changes", max, b.Len())
			}
			out = append(out, b.Changes...)
		}
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil:
			return out, err
		case b == nil || b.Len() == 0:
			return out, errors.New("the source's Read returned no change and no error")
		}
	}
}

// ReadAll is Drain within a minute that fails t on an error.
func ReadAll(t testing.TB, s connector.Source, max int) []row.Change {
	t.Helper()
	out, err := Drain(testenv.Context(t, time.Minute), s, max)
	if err != nil {
		t.Fatalf("read after %d changes: %v", len(out), err)
	}
	return out
}

// Printed renders changes in their print form, +I[1, a], in order.
func Printed(cs []row.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// printedRows renders rows as inserts, sorted.
func printedRows(rows []row.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = row.Change{Kind: row.Insert, Row: r}.String()
	}
	slices.Sort(out)
	return out
}

// ctx bounds one definition's calls to a real service.
func ctx(t testing.TB) context.Context { return testenv.Context(t, 2*time.Minute) }
