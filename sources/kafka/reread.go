package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/segmentio/kafka-go"
)

// A backfill reads the partitions again from the offsets the source's
// state began at (the position's "from": where its first run started,
// whatever start or a group's committed offsets said then) up to the
// position's offsets, then ends (connector.Rereader). It reads every
// partition itself, as a bounded source does, commits nothing and joins
// no group. It fails when the topic no longer holds those messages
// (retention deleted them).

// RereadTo implements connector.Rereader.
func (s *Source) RereadTo(pos []byte) error {
	if s.opened {
		return errors.New("reread after open")
	}
	offs, from, err := decodePositionFrom(pos)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	for tp := range offs {
		if _, ok := from[tp]; !ok {
			return fmt.Errorf("the checkpoint's position does not say at which offset of %s the state began (it was taken by an etld before backfills, or restored from one): run once with this etld after a reset to keep it", tp)
		}
	}
	s.reread, s.rereadFrom = offs, from
	s.opts.bounded = true
	return nil
}

// runReread reads every partition from where the state began up to the
// position's offset; a partition the position does not name was not
// read and is read no further now.
func (s *Source) runReread(ctx context.Context, partitions []topicPartition) error {
	var first map[topicPartition]int64
	err := retry.Do(ctx, setupBackoff, s.log, "kafka source: reading start offsets", func(ctx context.Context) error {
		var err error
		first, err = s.listOffsets(ctx, partitions, kafka.FirstOffset)
		return err
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tp := range partitions {
		p := newPart(tp)
		p.end = s.reread[tp]
		start := s.rereadFrom[tp]
		if _, ok := s.reread[tp]; !ok {
			p.end, start = 0, 0
		}
		if p.end > start && first[tp] > start {
			return retry.Permanent(fmt.Errorf("%s: the messages from offset %d on, where the state began, are no longer in the topic (its first offset is %d: retention deleted them): they cannot be read again", tp, start, first[tp]))
		}
		p.hw.Store(p.end)
		s.parts[tp] = p
		if _, err := s.startReader(ctx, &s.wg, p, start); err != nil {
			return err
		}
	}
	for tp := range s.reread {
		if s.parts[tp] == nil {
			return retry.Permanent(fmt.Errorf("%s: the partition of the checkpoint's position is gone from the topic: its messages cannot be read again", tp))
		}
	}
	s.assigned.Store(true)
	s.signal()
	return nil
}

// RereadRange implements connector.RangeRereader: each partition from
// its offset in from (the next one to read) up to its offset in to; a
// partition that from does not name (assigned since) from where the
// state began on it.
func (s *Source) RereadRange(from, to []byte) error {
	if err := s.RereadTo(to); err != nil {
		return err
	}
	offs, _, err := decodePositionFrom(from)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	start := maps.Clone(s.rereadFrom)
	for tp, off := range offs {
		if end, ok := s.reread[tp]; ok && off > end {
			return fmt.Errorf("%s: the range's start (offset %d) is after its end (offset %d)", tp, off, end)
		}
		start[tp] = off
	}
	s.rereadFrom = start
	return nil
}

var _ connector.RangeRereader = (*Source)(nil)
