// Package print is the `type: print` sink: every change on its own line,
// as Flink's print connector writes it (+I[1, true], -U[...], +U[...],
// -D[...]), to stdout or stderr.
//
// Options (Flink's name in brackets):
//
//   - print_identifier [print-identifier]: a prefix, written as `id> ` in
//     front of every line. etld runs a sink as one task, so the prefix
//     never carries Flink's subtask number.
//   - standard_error [standard-error]: write to stderr instead of stdout.
//
// Print takes any changelog: it runs in append, upsert or retract mode and
// prints whatever kinds the mode lets through.
package print

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the print sink's options.
type Config struct {
	PrintIdentifier string `yaml:"print_identifier"`
	StandardError   bool   `yaml:"standard_error"`
}

// New builds a print sink. It does no I/O.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	if strings.ContainsAny(cfg.PrintIdentifier, "\r\n") {
		return nil, connector.Errorf("print_identifier", "must fit on one line: it starts every printed line")
	}
	s := &Sink{name: env.Name, out: os.Stdout, given: cfg}
	if cfg.StandardError {
		s.out = os.Stderr
	}
	if cfg.PrintIdentifier != "" {
		s.prefix = cfg.PrintIdentifier + "> "
	}
	return s, nil
}

// Register adds the print sink to r.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "print", "prints every change to stdout as Flink's print connector does: +I[1, true]",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) { return New(cfg, env) })
}

// bufferSize is the bufio buffer: large enough that a busy pipeline makes
// few write calls, small enough that Flush latency stays invisible.
const bufferSize = 64 << 10

// Sink prints changes. It is used from one goroutine at a time.
type Sink struct {
	name   string
	given  Config // as written, for FlinkSink
	prefix string
	// out is os.Stdout or os.Stderr; tests put their own writer here.
	out  io.Writer
	in   connector.SinkInput
	w    *bufio.Writer
	line []byte
}

// Capabilities: print takes any changelog and prints every kind.
func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, Retract: true, AutoRetract: true}
}

// Bind accepts any input: every type has a printed form.
func (s *Sink) Bind(in connector.SinkInput) error {
	s.in = in
	return nil
}

// Open sets up the buffer; it does not touch the output.
func (s *Sink) Open(ctx context.Context) error {
	s.w = bufio.NewWriterSize(s.out, bufferSize)
	return nil
}

// Write buffers one line per change. A line never straddles two writes
// to the output, so that lines of sinks and processes sharing a terminal
// or a pipe do not interleave mid-line.
func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if s.w == nil {
		return fmt.Errorf("print %s: Write before Open", s.name)
	}
	for _, c := range b.Changes {
		s.line = append(s.line[:0], s.prefix...)
		s.line = row.AppendPrint(s.line, c.Kind, c.Row)
		s.line = append(s.line, '\n')
		if len(s.line) > s.w.Available() && s.w.Buffered() > 0 {
			if err := s.w.Flush(); err != nil {
				return fmt.Errorf("print %s: %w", s.name, err)
			}
		}
		if _, err := s.w.Write(s.line); err != nil {
			return fmt.Errorf("print %s: %w", s.name, err)
		}
	}
	return nil
}

// Flush writes out every buffered line.
func (s *Sink) Flush(ctx context.Context) error {
	if s.w == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("print %s: flush: %w", s.name, err)
	}
	return nil
}

// Close flushes what is left: for a printing sink, losing the last lines
// of a failed run would hide what it did.
func (s *Sink) Close(ctx context.Context) error {
	err := s.Flush(ctx)
	s.w = nil
	return err
}

var _ connector.Sink = (*Sink)(nil)
