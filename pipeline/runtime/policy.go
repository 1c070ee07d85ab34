package runtime

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
)

// logFirst is how many skipped records a policy logs before it only counts.
const logFirst = 5

// Policy applies an on_error setting to the records a source cannot read
// or a sink's target refuses for good: fail stops the pipeline with the
// record's position, skip counts and logs the first few, dead-letter
// appends the raw record and the reason to a file as a JSON line.
type Policy struct {
	kind       string // "source" or "sink"
	name       string
	policy     string
	deadLetter string
	logger     *slog.Logger

	skipped atomic.Int64
	mu      sync.Mutex
	dlq     *os.File
}

// NewPolicy checks and builds the policy of a component (kind "source"
// or "sink"); it opens no file yet.
func NewPolicy(kind, name, policy, deadLetter string, logger *slog.Logger) (*Policy, error) {
	switch policy {
	case "", "fail":
		policy = "fail"
	case "skip":
	case "dead-letter":
		if deadLetter == "" {
			return &Policy{kind: kind, name: name, policy: "fail", logger: logger}, fmt.Errorf("on_error: dead-letter needs a dead_letter file")
		}
	default:
		return &Policy{kind: kind, name: name, policy: "fail", logger: logger}, fmt.Errorf("unknown on_error policy %q: want fail, skip or dead-letter", policy)
	}
	return &Policy{kind: kind, name: name, policy: policy, deadLetter: deadLetter, logger: logger}, nil
}

// Skipped is the number of records set aside so far.
func (p *Policy) Skipped() int64 {
	if p == nil {
		return 0
	}
	return p.skipped.Load()
}

// Reject handles one bad record; it is connector.SourceEnv.Reject and
// connector.SinkEnv.Reject.
func (p *Policy) Reject(bad connector.BadRecord) error {
	if p == nil || p.policy == "fail" {
		// The record stays in the error's chain: it marks a data error,
		// which running the pipeline again would meet again.
		return fmt.Errorf("%w (on_error: fail; set on_error: skip or dead-letter to go on past bad records)", bad)
	}
	n := p.skipped.Add(1)
	if n <= logFirst {
		msg := "skipped a bad record"
		if p.policy == "dead-letter" {
			msg = "dead-lettered a bad record"
		}
		if n == logFirst {
			msg += "; further ones are only counted"
		}
		args := []any{p.kind, p.name, "position", bad.Position, "error", bad.Err.Error(), "on_error", p.policy}
		if bad.Transform != "" {
			args = append(args, "transform", bad.Transform)
		}
		p.logger.Warn(msg, args...)
	}
	if p.policy == "dead-letter" {
		return p.writeDeadLetter(bad)
	}
	return nil
}

func (p *Policy) writeDeadLetter(bad connector.BadRecord) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dlq == nil {
		if err := os.MkdirAll(filepath.Dir(p.deadLetter), 0o755); err != nil {
			return fmt.Errorf("dead letter: %w", err)
		}
		f, err := os.OpenFile(p.deadLetter, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("dead letter: %w", err)
		}
		p.dlq = f
	}
	rec := struct {
		Source    string `json:"source,omitempty"`
		Sink      string `json:"sink,omitempty"`
		Transform string `json:"transform,omitempty"`
		Position  string `json:"position"`
		Error     string `json:"error"`
		Record    string `json:"record"`
	}{Transform: bad.Transform, Position: bad.Position, Error: bad.Err.Error(), Record: string(bad.Raw)}
	if p.kind == "sink" {
		rec.Sink = p.name
	} else {
		rec.Source = p.name
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	if _, err := p.dlq.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("dead letter %s: %w", p.deadLetter, err)
	}
	return nil
}

// Close syncs and closes the dead-letter file, if one was opened.
func (p *Policy) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dlq == nil {
		return nil
	}
	err := p.dlq.Sync()
	if cerr := p.dlq.Close(); err == nil {
		err = cerr
	}
	p.dlq = nil
	return err
}
