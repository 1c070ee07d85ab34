package print

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// build makes a print sink from its YAML through a registry, as the
// pipeline does.
func build(t *testing.T, src string) (*Sink, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("test YAML: %v", err)
	}
	r := connector.NewRegistry()
	Register(r)
	s, err := r.NewSink("p.yaml", &spec.Sink{Type: "print", Options: doc.Content[0], Path: "sinks[0]"}, connector.SinkEnv{Name: "out"})
	if err != nil {
		return nil, err
	}
	return s.(*Sink), nil
}

// capture opens s on a buffer instead of stdout.
func capture(t *testing.T, s *Sink) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	s.out = &buf
	if err := s.Bind(connector.SinkInput{Mode: connector.Retract}); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func batch(changes ...row.Change) *row.Batch {
	b := row.NewBatch(len(changes), 0)
	for _, c := range changes {
		b.Append(c.Kind, c.Row)
	}
	return b
}

func ts(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func TestFormat(t *testing.T) {
	cases := []struct {
		name string
		kind row.Kind
		row  row.Row
		want string
	}{
		{"insert", row.Insert, row.Row{row.IntValue(1), row.BoolValue(true)}, "+I[1, true]"},
		{"update before", row.UpdateBefore, row.Row{row.StringValue("a"), row.BigIntValue(1)}, "-U[a, 1]"},
		{"update after", row.UpdateAfter, row.Row{row.StringValue("a"), row.BigIntValue(2)}, "+U[a, 2]"},
		{"delete", row.Delete, row.Row{row.StringValue("a"), row.BigIntValue(2)}, "-D[a, 2]"},
		{"nulls", row.Insert, row.Row{row.NullValue, row.IntValue(0), row.NullValue}, "+I[null, 0, null]"},
		{"empty row", row.Insert, row.Row{}, "+I[]"},
		{"false and negatives", row.Insert, row.Row{row.BoolValue(false), row.IntValue(math.MinInt32), row.BigIntValue(math.MinInt64)},
			"+I[false, -2147483648, -9223372036854775808]"},
		{"doubles", row.Insert, row.Row{row.DoubleValue(1), row.DoubleValue(-0.5), row.DoubleValue(1e7), row.DoubleValue(1.5e-4), row.DoubleValue(math.NaN())},
			"+I[1.0, -0.5, 1.0E7, 1.5E-4, NaN]"},
		{"floats", row.Insert, row.Row{row.FloatValue(1.1), row.FloatValue(0)}, "+I[1.1, 0.0]"},
		{"decimals", row.Insert, row.Row{row.DecimalValue(1230, 2), row.DecimalValue(-5, 2), row.DecimalValue(42, 0)}, "+I[12.30, -0.05, 42]"},
		// Flink prints Row.toString, so BigDecimal.toString: exponent
		// form below 1E-6.
		{"small decimals", row.Insert, row.Row{row.DecimalValue(0, 7), row.DecimalValue(250000, 12), row.DecimalValue(1, 6)}, "+I[0E-7, 2.50000E-7, 0.000001]"},
		{"strings are not quoted", row.Insert, row.Row{row.StringValue("x, y"), row.StringValue("")}, "+I[x, y, ]"},
		{"bytes", row.Insert, row.Row{row.BytesValue([]byte{1, 0xff, 'A'})}, "+I[[1, -1, 65]]"},
		{"date", row.Insert, row.Row{row.DateValue(19723)}, "+I[2024-01-01]"},
		{"timestamps", row.Insert, row.Row{
			row.TimestampValue(ts("2024-01-01T10:00:00Z")),
			row.TimestampValue(ts("2024-01-01T10:00:05Z")),
			row.TimestampValue(ts("2024-01-01T10:00:00.120Z")),
			row.TimestampValue(ts("2024-01-01T10:00:00.000001Z")),
		}, "+I[2024-01-01T10:00, 2024-01-01T10:00:05, 2024-01-01T10:00:00.120, 2024-01-01T10:00:00.000001]"},
		{"timestamp_ltz", row.Insert, row.Row{row.TimestampLTZValue(ts("2024-01-01T10:00:00Z")), row.TimestampLTZValue(ts("2024-01-01T10:00:00.5Z"))},
			"+I[2024-01-01T10:00:00Z, 2024-01-01T10:00:00.500Z]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{}, connector.SinkEnv{Name: "out"})
			if err != nil {
				t.Fatal(err)
			}
			out := capture(t, s)
			if err := s.Write(context.Background(), batch(row.Change{Kind: tc.kind, Row: tc.row})); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want+"\n" {
				t.Fatalf("printed %q, want %q", got, tc.want+"\n")
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string
	}{
		{"no identifier", "type: print", "+I[1, true]\n-D[2, false]\n"},
		{"identifier", "type: print\nprint_identifier: sink", "sink> +I[1, true]\nsink> -D[2, false]\n"},
		{"empty identifier", "type: print\nprint_identifier: ''", "+I[1, true]\n-D[2, false]\n"},
		{"identifier with spaces", "type: print\nprint_identifier: 'my sink'", "my sink> +I[1, true]\nmy sink> -D[2, false]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := build(t, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			out := capture(t, s)
			b := batch(
				row.Change{Kind: row.Insert, Row: row.Row{row.IntValue(1), row.BoolValue(true)}},
				row.Change{Kind: row.Delete, Row: row.Row{row.IntValue(2), row.BoolValue(false)}},
			)
			if err := s.Write(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Fatalf("printed %q, want %q", out.String(), tc.want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		out     *os.File
		wantErr string
	}{
		{"stdout by default", "type: print", os.Stdout, ""},
		{"stderr", "type: print\nstandard_error: true", os.Stderr, ""},
		{"common keys pass", "type: print\nname: out\nfrom: t\nmode: retract", os.Stdout, ""},
		{"unknown key", "type: print\nprefix: x",
			nil, `p.yaml:2:1: sinks[0].prefix: unknown key; known keys: name, type, from, mode, key, on_error, dead_letter, print_identifier, standard_error`},
		{"misspelt key", "type: print\nstandard-error: true", nil, `p.yaml:2:1: sinks[0].standard-error: unknown key; did you mean "standard_error"?`},
		{"not a boolean", "type: print\nstandard_error: maybe", nil, `p.yaml:2:17: sinks[0].standard_error: want true or false, got "maybe"`},
		{"identifier on two lines", "type: print\nprint_identifier: \"a\\nb\"",
			nil, `p.yaml:2:19: sinks[0].print_identifier: must fit on one line: it starts every printed line`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := build(t, tc.src)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.out != tc.out {
				t.Fatalf("writes to %v, want %v", s.out, tc.out.Name())
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	s, err := New(Config{}, connector.SinkEnv{})
	if err != nil {
		t.Fatal(err)
	}
	want := connector.Capabilities{Append: true, Upsert: true, Retract: true, AutoRetract: true}
	if got := s.Capabilities(); got != want {
		t.Fatalf("Capabilities() = %+v, want %+v", got, want)
	}
	for _, m := range []connector.Mode{connector.Append, connector.Upsert, connector.Retract} {
		if err := s.Bind(connector.SinkInput{Mode: m}); err != nil {
			t.Fatalf("Bind in %v mode: %v", m, err)
		}
	}
}

// callWriter records each write call to the output.
type callWriter struct {
	calls []string
	err   error
}

func (w *callWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func TestBufferingAndWholeLines(t *testing.T) {
	s, err := New(Config{PrintIdentifier: "p"}, connector.SinkEnv{Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	w := &callWriter{}
	s.out = w
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A line of 2*bufferSize is written whole too.
	huge := batch(row.Change{Kind: row.UpdateAfter, Row: row.Row{row.StringValue(strings.Repeat("y", 2*bufferSize))}})
	if err := s.Write(context.Background(), huge); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1000)
	b := row.NewBatch(300, 2)
	for i := range 300 {
		r := b.NewRow()
		r[0], r[1] = row.IntValue(int32(i)), row.StringValue(long)
		b.Append(row.Insert, r)
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	before := len(w.calls)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.calls) == before {
		t.Fatal("Flush wrote nothing: the last lines stayed buffered")
	}
	if len(w.calls) > 12 {
		t.Errorf("%d write calls for ~300KB: not buffered", len(w.calls))
	}
	all := strings.Join(w.calls, "")
	if n := strings.Count(all, "\n"); n != 301 {
		t.Fatalf("%d lines, want 301", n)
	}
	for i, c := range w.calls {
		if !strings.HasSuffix(c, "\n") || !strings.HasPrefix(c, "p> ") {
			t.Fatalf("write call %d splits a line: %q...%q", i, c[:min(len(c), 20)], c[max(0, len(c)-20):])
		}
	}
}

func TestWriteErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	s, err := New(Config{}, connector.SinkEnv{Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), batch()); err == nil {
		t.Fatal("Write before Open succeeded")
	}
	s.out = &callWriter{err: boom}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), batch(row.Change{Row: row.Row{row.IntValue(1)}})); err != nil {
		t.Fatalf("a buffered Write failed: %v", err)
	}
	if err := s.Flush(context.Background()); !errors.Is(err, boom) || !strings.Contains(err.Error(), "print out") {
		t.Fatalf("Flush error %v, want the writer's error with the sink's name", err)
	}
	if err := s.Close(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Close error %v, want the writer's error", err)
	}
}

func BenchmarkWrite(b *testing.B) {
	s, err := New(Config{PrintIdentifier: "bench"}, connector.SinkEnv{Name: "out"})
	if err != nil {
		b.Fatal(err)
	}
	s.out = io.Discard
	if err := s.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	batch := row.NewBatch(1024, 4)
	for i := range 1024 {
		r := batch.NewRow()
		r[0], r[1], r[2], r[3] = row.BigIntValue(int64(i)), row.StringValue("sensor-1"), row.DoubleValue(21.5), row.TimestampLTZValue(1704103200000000)
		batch.Append(row.Insert, r)
	}
	ctx := context.Background()
	rows := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
		rows += batch.Len()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
