package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A row whose event time cannot be computed is a record error under the
// source's on_error, with or without computed columns: the row goes to
// the policy (its row in the dead letters), the rows after it are
// delivered, and the watermark comes from the others.
func TestEventTimeFailureGoesToOnError(t *testing.T) {
	for _, computed := range []bool{false, true} {
		t.Run(fmt.Sprintf("computed=%v", computed), func(t *testing.T) {
			sink := &memSink{}
			g := graph(&seqSource{n: 10}, nil, sink)
			src := g.Sources[0]
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			d := NewDeadLetterFile(path)
			policy, err := NewPolicy("source", "src", "dead-letter", d, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			src.Feed, src.Columns = policy.Feed(), row.NewSchema(row.Field{Name: "n", Type: row.Of(row.BigInt)})
			g.DeadLetters = []*DeadLetterNode{d}
			src.EventTime = func(r row.Row) (int64, bool, error) {
				if r[0].Int64()%4 == 0 {
					return 0, false, errors.New(`event time column "ts" is NULL`)
				}
				return r[0].Int64(), true, nil
			}
			if computed {
				src.Calc = &Calc{Project: []func(row.Row) (row.Value, error){func(r row.Row) (row.Value, error) { return r[0], nil }}}
			}
			if err := Run(context.Background(), g, Options{}); err != nil {
				t.Fatalf("run: %v", err)
			}
			var got []int64
			for _, c := range sink.changes {
				got = append(got, c.Row[0].Int64())
			}
			if fmt.Sprint(got) != "[1 2 3 5 6 7 9 10]" {
				t.Errorf("delivered %v, want every row but 4 and 8", got)
			}
			rejected, _ := readDeadLetterFile(t, path)
			if len(rejected) != 2 || !strings.Contains(rejected[0].Error, `"ts" is NULL`) || string(rejected[0].Row) != `{"n":4}` || string(rejected[1].Row) != `{"n":8}` {
				t.Errorf("dead letters %+v, want rows 4 and 8 with the reason", rejected)
			}
			if wm := src.Stats.Watermark.Load(); wm != 10 && wm != operator.MaxWatermark {
				t.Errorf("watermark %d, want 10 or the end of input", wm)
			}
		})
	}
}

// Without a policy (on_error: fail) the failure stops the run with the
// record's position and the reason.
func TestEventTimeFailureFailsWithoutPolicy(t *testing.T) {
	g := graph(&seqSource{n: 10}, nil, &memSink{})
	g.Sources[0].EventTime = func(r row.Row) (int64, bool, error) {
		if r[0].Int64() == 3 {
			return 0, false, errors.New(`event time column "ts" is NULL`)
		}
		return r[0].Int64(), true, nil
	}
	err := Run(context.Background(), g, Options{})
	var bad connector.BadRecord
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), `"ts" is NULL`) {
		t.Fatalf("err = %v, want a bad record naming the column", err)
	}
}
