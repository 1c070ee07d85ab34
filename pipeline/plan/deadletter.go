package plan

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/spec"
)

// Dead letters: where each on_error: dead-letter puts its records. A
// file, or a sink of the pipeline (on_error: {policy: dead-letter, sink:
// NAME}) that reads no table but a DeadLettersNode, whose rows are
// runtime.DeadLetterSchema's. Policies that name the same file or sink
// share one runtime.DeadLetterNode.

// deadLetters is one target of dead letters.
type deadLetters struct {
	node *runtime.DeadLetterNode
	// table is what a sink taking the dead letters reads; nil for a file.
	table *Table
}

// deadLettersOf returns the target of an on_error, nil for one that is
// not dead-letter.
func (b *builder) deadLettersOf(oe spec.OnError) *runtime.DeadLetterNode {
	if oe.Policy != "dead-letter" {
		return nil
	}
	var key string
	switch {
	case oe.Sink != "":
		key = "sink\x00" + strings.ToLower(oe.Sink)
	case oe.DeadLetter != "":
		key = "file\x00" + filepath.Clean(oe.DeadLetter)
	default:
		return nil // the spec reported it
	}
	if d := b.plan.deadLetters[key]; d != nil {
		return d.node
	}
	d := &deadLetters{}
	if oe.Sink != "" {
		d.node = runtime.NewDeadLetterSink(oe.Sink)
		d.table = &Table{Name: "dead letters", Root: &Node{Kind: DeadLettersNode, Label: "DeadLetters", Schema: runtime.DeadLetterSchema, TimeAttr: -1,
			op: deadLettersOp{}}}
	} else {
		d.node = runtime.NewDeadLetterFile(oe.DeadLetter)
	}
	b.plan.deadLetters[key] = d
	b.plan.deadLetterOrder = append(b.plan.deadLetterOrder, d)
	return d.node
}

// deadLettersOp is a DeadLettersNode's payload: it has no operator, Graph
// maps the node to its runtime.DeadLetterNode.
type deadLettersOp struct{}

func (deadLettersOp) operator(opBuild) (operator.Lifecycle, error) {
	return nil, errors.New("plan: dead letters are a node of their own, not an operator")
}

// deadLetterSink plans a sink that takes dead letters: it appends them,
// or, where it can upsert (auto, or mode: upsert), writes them by their
// id, so that an entry a restored run makes again is held once.
func (b *builder) deadLetterSink(s *spec.Sink, conn connector.Sink, policy *runtime.Policy, feed *runtime.Feed) {
	d := b.plan.deadLetters["sink\x00"+strings.ToLower(s.Name)]
	if d == nil {
		return // the spec reported the on_error that names it
	}
	caps := conn.Capabilities()
	key := []int{runtime.DeadLetterSchema.Index(runtime.DeadLetterKey)}
	for _, k := range s.Key {
		if !strings.EqualFold(k, runtime.DeadLetterKey) {
			b.errs.Addf(s.KeyPos, s.Path+".key", "sink %q takes dead letters, whose key is %s; the key cannot be %s", s.Name, runtime.DeadLetterKey, strings.Join(s.Key, ", "))
			return
		}
	}
	sk := &Sink{Spec: s, Conn: conn, Input: d.table, policy: policy, feed: feed,
		Replay: connector.Replay{Why: "dead letters are made again by a restored run; a sink that upserts them by id holds each once"}}
	switch asked := connector.ModeFromString(s.Mode); {
	case asked == connector.Append && caps.Append:
		sk.Mode = connector.Append
	case (asked == connector.Upsert || asked == 0) && caps.Upsert:
		sk.Mode, sk.Key = connector.Upsert, key
	case asked == 0 && caps.Append:
		sk.Mode = connector.Append
	default:
		b.errs.Addf(s.ModePos, s.Path+".mode", "sink %q (%s) takes dead letters, which it appends or upserts by id; it cannot run in %s mode", s.Name, s.Type, s.Mode)
		return
	}
	if err := conn.Bind(connector.SinkInput{Schema: runtime.DeadLetterSchema, Mode: sk.Mode, Key: sk.Key, Replay: sk.Replay}); err != nil {
		b.errs.Add(placeAt(connector.Place(s.Pos.File, s.Options, s.Path, err), s.Pos, s.Path))
		return
	}
	b.plan.Sinks = append(b.plan.Sinks, sk)
}
