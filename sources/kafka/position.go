package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/segmentio/kafka-go"
)

// position is the next offset of each partition, stored as JSON so that a
// person can read a checkpoint: {"v":1,"offsets":{"orders/0":42}}.
type position struct {
	V       int              `json:"v"`
	Offsets map[string]int64 `json:"offsets"`
	// From is the offset the source's state began at, per partition:
	// where a backfill reads again from (reread.go). Absent from
	// positions taken before it was added.
	From map[string]int64 `json:"from,omitempty"`
}

const positionVersion = 1

// Position returns, for every partition the source owns, the offset after
// the last message Read returned; for partitions not placed yet, the
// restored offset. A partition a rebalance took away is left out: its new
// owner goes on from the committed offset.
func (s *Source) Position() ([]byte, error) {
	p := position{V: positionVersion, Offsets: map[string]int64{}}
	s.mu.Lock()
	for tp, part := range s.parts {
		if next := part.next.Load(); next >= 0 && part.cur.Load() != nil {
			p.Offsets[tp.String()] = next
		}
	}
	for tp, off := range s.restore {
		if part := s.parts[tp]; part == nil || part.next.Load() < 0 {
			p.Offsets[tp.String()] = off
		}
	}
	for tp, off := range s.from {
		if off >= 0 {
			if p.From == nil {
				p.From = map[string]int64{}
			}
			p.From[tp.String()] = off
		}
	}
	s.mu.Unlock()
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode position: %w", err)
	}
	return out, nil
}

// Restore makes Open start each partition in pos (a value Position
// returned) at its offset, whatever start says.
func (s *Source) Restore(pos []byte) error {
	if s.opened {
		return errors.New("restore after open")
	}
	offs, from, err := decodePositionFrom(pos)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	s.restore = offs
	for tp := range offs {
		s.from[tp] = -1 // the position does not say: never a start to read again from
	}
	maps.Copy(s.from, from)
	return nil
}

func decodePosition(pos []byte) (map[topicPartition]int64, error) {
	offs, _, err := decodePositionFrom(pos)
	return offs, err
}

// decodePositionFrom reads a position's offsets and where the state
// began (from; empty when the position does not say).
func decodePositionFrom(pos []byte) (offs, from map[topicPartition]int64, err error) {
	var p position
	dec := json.NewDecoder(bytes.NewReader(pos))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, nil, fmt.Errorf("position %.64q is not a kafka source position: %w", pos, err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("position %.64q: data after the position", pos)
	}
	if p.V != positionVersion {
		return nil, nil, fmt.Errorf("position %.64q: version %d, want %d", pos, p.V, positionVersion)
	}
	if offs, err = partitionOffsets(pos, p.Offsets); err != nil {
		return nil, nil, err
	}
	if from, err = partitionOffsets(pos, p.From); err != nil {
		return nil, nil, err
	}
	return offs, from, nil
}

// partitionOffsets reads a position's "topic/partition": offset map.
func partitionOffsets(pos []byte, m map[string]int64) (map[topicPartition]int64, error) {
	out := make(map[topicPartition]int64, len(m))
	for k, off := range m {
		i := strings.LastIndexByte(k, '/')
		n, err := strconv.Atoi(k[i+1:])
		if i <= 0 || err != nil || n < 0 {
			return nil, fmt.Errorf("position %.64q: %q is not topic/partition", pos, k)
		}
		if off < 0 {
			return nil, fmt.Errorf("position %.64q: negative offset for %s", pos, k)
		}
		out[topicPartition{k[:i], n}] = off
	}
	return out, nil
}

// Commit commits the offsets in state (a Position result) to the consumer
// group, for the partitions the source still owns. The runtime calls it
// once every sink has made the rows before that position durable.
//
// As in Flink, a commit that fails is logged and not an error: the
// committed offsets only say where a run without a checkpoint starts, and
// the next checkpoint commits newer ones. A failed commit can make such a
// run read rows again, never skip any.
func (s *Source) Commit(ctx context.Context, state []byte) error {
	offs, err := decodePosition(state)
	if err != nil {
		return fmt.Errorf("kafka source: commit: %w", err)
	}
	if s.opts.groupID == "" || len(offs) == 0 {
		return nil // no group to commit to
	}
	if s.opts.bounded {
		// A bounded source is no member: every partition is its own, and
		// every offset of a position is delivered, whether its reader is
		// placed yet or not (the runtime commits a restored checkpoint
		// right after Open).
		commit := map[string]map[int]int64{}
		for tp, off := range offs {
			if commit[tp.topic] == nil {
				commit[tp.topic] = map[int]int64{}
			}
			commit[tp.topic][tp.partition] = off
		}
		return s.commitStandalone(ctx, commit)
	}
	s.mu.Lock()
	gen := s.gen
	commit := map[string]map[int]int64{}
	n := 0
	for tp, off := range offs {
		// A position below where the partition's reader began was taken
		// before a rebalance gave the partition back, maybe after
		// another member committed further: committing it would move
		// the group back.
		if p := s.parts[tp]; p != nil {
			if rd := p.cur.Load(); rd == nil || off < rd.start {
				continue
			}
			if commit[tp.topic] == nil {
				commit[tp.topic] = map[int]int64{}
			}
			commit[tp.topic][tp.partition] = off
			n++
		}
	}
	s.mu.Unlock()
	if gen == nil || n == 0 {
		s.log.Info("kafka source: offsets not committed: no partitions are assigned to this member now (joining the group, or it is rebalancing); the next checkpoint commits them", "group", s.opts.groupID)
		return nil
	}
	err = retry.Do(ctx, commitBackoff, s.log, "kafka source: commit offsets", func(ctx context.Context) error {
		return gen.commit(ctx, commit)
	})
	if err != nil {
		s.log.Warn("kafka source: offsets not committed; the next checkpoint commits newer ones", "group", s.opts.groupID, "error", err.Error())
		return nil
	}
	s.committedUpTo(commit)
	return nil
}

// commitStandalone commits for a bounded source, which reads its
// partitions without joining the group: a commit outside any generation,
// as Kafka's standalone consumers make. The broker refuses it while other
// members are in the group; that is logged, not an error: the checkpoint
// holds the positions, and a later commit catches up.
func (s *Source) commitStandalone(ctx context.Context, commit map[string]map[int]int64) error {
	req := &kafka.OffsetCommitRequest{GroupID: s.opts.groupID, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{}}
	for topic, parts := range commit {
		for partition, off := range parts {
			req.Topics[topic] = append(req.Topics[topic], kafka.OffsetCommit{Partition: partition, Offset: off})
		}
	}
	err := retry.Do(ctx, commitBackoff, s.log, "kafka source: commit offsets", func(ctx context.Context) error {
		res, err := s.client.OffsetCommit(ctx, req)
		if err != nil {
			return err
		}
		return commitError(res)
	})
	if err != nil {
		s.log.Warn("kafka source: offsets not committed; the next checkpoint commits newer ones", "group", s.opts.groupID, "error", err.Error())
	}
	return nil
}

// Lag is the number of messages between the source's position and the
// high watermark, summed over the partitions it owns; -1 before it owns
// any.
func (s *Source) Lag() int64 {
	if !s.assigned.Load() {
		return -1
	}
	var lag int64
	s.mu.Lock()
	for _, p := range s.parts {
		next, hw := p.next.Load(), p.hw.Load()
		if p.cur.Load() != nil && next >= 0 && hw > next {
			lag += hw - next
		}
	}
	s.mu.Unlock()
	return lag
}

// Bytes is the size of the keys and values Read has returned.
func (s *Source) Bytes() int64 { return s.bytes.Load() }

// commitError is the first partition's error in an OffsetCommit
// response: the request as a whole may succeed while a partition fails.
func commitError(res *kafka.OffsetCommitResponse) error {
	for _, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return p.Error
			}
		}
	}
	return nil
}

// Splits implements connector.SplitSource: the partitions this run reads
// now ("topic/partition"), but those a bounded source has read to their
// end, which hold no watermark back.
func (s *Source) Splits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.parts))
	for _, p := range s.parts {
		if p.cur.Load() == nil || p.end >= 0 && p.next.Load() >= p.end {
			continue
		}
		out = append(out, p.name)
	}
	return out
}

// Split implements connector.SplitSource: the partition change i of b,
// a batch Read returned, came from.
func (s *Source) Split(b *row.Batch, i int) string {
	if pos, ok := b.Origin.(*row.Positions); ok {
		return pos.Input(i)
	}
	return ""
}

var _ connector.SplitSource = (*Source)(nil)
