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

// logFirst is how many skipped records a source logs before it only counts.
const logFirst = 5

// Policy applies a source's on_error setting to the records it cannot
// read: fail stops the pipeline with the record's position, skip counts
// and logs the first few, dead-letter appends the raw record and the
// reason to a file as a JSON line.
type Policy struct {
	source     string
	policy     string
	deadLetter string
	logger     *slog.Logger

	skipped atomic.Int64
	mu      sync.Mutex
	dlq     *os.File
}

// NewPolicy checks and builds a policy; it opens no file yet.
func NewPolicy(source, policy, deadLetter string, logger *slog.Logger) (*Policy, error) {
	switch policy {
	case "", "fail":
		policy = "fail"
	case "skip":
	case "dead-letter":
		if deadLetter == "" {
			return &Policy{source: source, policy: "fail", logger: logger}, fmt.Errorf("on_error: dead-letter needs a dead_letter file")
		}
	default:
		return &Policy{source: source, policy: "fail", logger: logger}, fmt.Errorf("unknown on_error policy %q: want fail, skip or dead-letter", policy)
	}
	return &Policy{source: source, policy: policy, deadLetter: deadLetter, logger: logger}, nil
}

// Skipped is the number of records set aside so far.
func (p *Policy) Skipped() int64 {
	if p == nil {
		return 0
	}
	return p.skipped.Load()
}

// Reject handles one bad record; it is connector.SourceEnv.Reject.
func (p *Policy) Reject(bad connector.BadRecord) error {
	if p == nil || p.policy == "fail" {
		return fmt.Errorf("%s: %w (on_error: fail; set on_error: skip or dead-letter to go on past bad records)", bad.Position, bad.Err)
	}
	n := p.skipped.Add(1)
	if n <= logFirst {
		msg := "skipped a bad record"
		if n == logFirst {
			msg = "skipped a bad record; further ones are only counted"
		}
		p.logger.Warn(msg, "source", p.source, "position", bad.Position, "error", bad.Err.Error(), "on_error", p.policy)
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
	line, err := json.Marshal(struct {
		Source   string `json:"source"`
		Position string `json:"position"`
		Error    string `json:"error"`
		Record   string `json:"record"`
	}{p.source, bad.Position, bad.Err.Error(), string(bad.Raw)})
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
