package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/etld/etld/pipeline/connector"
)

// logFirst is how many skipped records a policy logs before it only counts.
const logFirst = 5

// Policy applies an on_error setting to the records a source cannot read,
// the rows a transform's expression fails on, and the rows a sink's
// target refuses for good: fail stops the pipeline with the record's
// position, skip counts and logs the first few, dead-letter also hands
// an entry for the record to its dead letters (a file or a sink of the
// pipeline, deadletter.go).
//
// Every node that hands records to the policy does so through a Feed of
// its own, which knows the last checkpoint barrier the node passed: an
// entry belongs to the checkpoint after it, and the dead letters are cut
// at each checkpoint where every node feeding them passed its barrier,
// so that a run restored from it writes none of them again.
type Policy struct {
	kind   string // "source", "sink", or "transform" (late rows)
	name   string
	policy string
	target *DeadLetterNode
	logger *slog.Logger

	skipped atomic.Int64
}

// NewPolicy checks and builds the policy of a component (kind "source"
// or "sink"); target is where dead-letter puts the records (nil for the
// other policies). It opens no file.
func NewPolicy(kind, name, policy string, target *DeadLetterNode, logger *slog.Logger) (*Policy, error) {
	switch policy {
	case "", "fail":
		policy = "fail"
	case "skip":
	case "dead-letter":
		if target == nil {
			return &Policy{kind: kind, name: name, policy: "fail", logger: logger}, fmt.Errorf("on_error: dead-letter needs a dead_letter file or sink")
		}
	default:
		return &Policy{kind: kind, name: name, policy: "fail", logger: logger}, fmt.Errorf("unknown on_error policy %q: want fail, skip or dead-letter", policy)
	}
	if policy != "dead-letter" {
		target = nil
	}
	return &Policy{kind: kind, name: name, policy: policy, target: target, logger: logger}, nil
}

// Skipped is the number of records set aside so far.
func (p *Policy) Skipped() int64 {
	if p == nil {
		return 0
	}
	return p.skipped.Load()
}

// Feed returns a new way into the policy for one node of the graph (its
// Node.Feed): the source node for its connector and computed columns, an
// operator for its expressions, a sink node for its connector. The run
// cuts the dead letters at a checkpoint once every node with a Feed of
// the policy passed the checkpoint's barrier.
func (p *Policy) Feed() *Feed {
	return &Feed{policy: p}
}

// Feed is one node's way into a Policy. Its Reject is what the node's
// connector or operator is given (connector.SourceEnv.Reject,
// connector.SinkEnv.Reject, Calc.Reject).
type Feed struct {
	policy *Policy
	// node is set while a run's node owns the feed: its entries then
	// wait for their checkpoint's cut. passed is the last barrier the
	// node passed.
	node   bool
	passed atomic.Int64
}

// Reject handles one bad record.
func (f *Feed) Reject(bad connector.BadRecord) error {
	p := f.policy
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
	if p.target == nil {
		return nil
	}
	return p.target.put(f, newEntry(p.kind, p.name, bad, f.passed.Load()+1))
}

// pass tells the dead letters that the feed's node passed barrier id:
// what it rejects from now on belongs to a later checkpoint.
func (f *Feed) pass(ctx context.Context, id int64) error {
	if f == nil {
		return nil
	}
	f.passed.Store(id)
	if f.policy.target == nil {
		return nil
	}
	return f.policy.target.mark(ctx, f, id)
}

// end tells the dead letters that the feed's node rejects nothing more.
func (f *Feed) end(ctx context.Context) error {
	if f == nil || f.policy.target == nil {
		return nil
	}
	return f.policy.target.mark(ctx, f, feedEnded)
}
