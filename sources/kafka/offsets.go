package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/retry"
)

// committedOffsets fetches the group's committed offsets of tps; a
// partition without one is left out.
func (s *Source) committedOffsets(ctx context.Context, tps []topicPartition) (map[topicPartition]int64, error) {
	req := &kafka.OffsetFetchRequest{GroupID: s.opts.groupID, Topics: map[string][]int{}}
	for _, tp := range tps {
		req.Topics[tp.topic] = append(req.Topics[tp.topic], tp.partition)
	}
	res, err := s.client.OffsetFetch(ctx, req)
	if err == nil {
		err = res.Error
	}
	if err != nil {
		err = fmt.Errorf("group %q: offset fetch: %w", s.opts.groupID, err)
		if groupLoading(err) {
			// A new group's coordinator is being placed: expected once.
			return nil, retry.Expected(err)
		}
		return nil, err
	}
	out := map[topicPartition]int64{}
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return nil, fmt.Errorf("group %q: offset fetch %s/%d: %w", s.opts.groupID, topic, p.Partition, p.Error)
			}
			if p.CommittedOffset >= 0 {
				out[topicPartition{topic, p.Partition}] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// groupLoading reports whether err is the broker still placing or loading
// the group's coordinator, which it does on a group's first use.
func groupLoading(err error) bool {
	return errors.Is(err, kafka.NotCoordinatorForGroup) || errors.Is(err, kafka.GroupLoadInProgress) ||
		errors.Is(err, kafka.GroupCoordinatorNotAvailable)
}

// partitions lists the partitions of the topics. A topic that does not
// exist yet is a transient error: it may be being created.
func (s *Source) partitions(ctx context.Context) ([]topicPartition, error) {
	md, err := s.client.Metadata(ctx, &kafka.MetadataRequest{Topics: s.opts.topics})
	if err != nil {
		return nil, err
	}
	byName := map[string]kafka.Topic{}
	for _, t := range md.Topics {
		byName[t.Name] = t
	}
	var out []topicPartition
	for _, name := range s.opts.topics {
		t, ok := byName[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("topic %q: not in the brokers' metadata", name)
		case t.Error != nil:
			return nil, fmt.Errorf("topic %q: %w", name, t.Error)
		case len(t.Partitions) == 0:
			return nil, fmt.Errorf("topic %q has no partitions", name)
		}
		for _, p := range t.Partitions {
			out = append(out, topicPartition{name, p.ID})
		}
	}
	return out, nil
}

// listOffsets asks for the first or last offset (kafka.FirstOffset,
// kafka.LastOffset) or the first offset at or after a time in ms, of each
// partition. For a time after the last message it gives the end offset.
func (s *Source) listOffsets(ctx context.Context, tps []topicPartition, at int64) (map[topicPartition]int64, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, tp := range tps {
		req.Topics[tp.topic] = append(req.Topics[tp.topic], kafka.OffsetRequest{Partition: tp.partition, Timestamp: at})
	}
	res, err := s.client.ListOffsets(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make(map[topicPartition]int64, len(tps))
	var late []topicPartition
	for topic, ps := range res.Topics {
		for _, po := range ps {
			tp := topicPartition{topic, po.Partition}
			if po.Error != nil {
				return nil, fmt.Errorf("offsets of %s: %w", tp, po.Error)
			}
			switch at {
			case kafka.FirstOffset:
				out[tp] = po.FirstOffset
			case kafka.LastOffset:
				out[tp] = po.LastOffset
			default:
				out[tp] = -1
				for off := range po.Offsets {
					out[tp] = off
				}
				if out[tp] < 0 {
					late = append(late, tp)
				}
			}
		}
	}
	for _, tp := range tps {
		if _, ok := out[tp]; !ok {
			return nil, fmt.Errorf("offsets of %s: missing from the broker's answer", tp)
		}
	}
	if len(late) > 0 {
		// No message at or after the time: start at the end.
		ends, err := s.listOffsets(ctx, late, kafka.LastOffset)
		if err != nil {
			return nil, err
		}
		for tp, off := range ends {
			out[tp] = off
		}
	}
	return out, nil
}

// startOffsets resolves where each partition of tps begins that this run
// has not read yet: committed (from the group; negative when none), a
// restored checkpoint, or the start option. Every offset is then clamped
// into what the partition holds, since kafka-go's Reader would wait
// forever at an offset retention has deleted.
func (s *Source) startOffsets(ctx context.Context, tps []topicPartition, committed map[topicPartition]int64) (map[topicPartition]int64, error) {
	out := make(map[topicPartition]int64, len(tps))
	var byStart []topicPartition
	for _, tp := range tps {
		p := s.parts[tp]
		next := p.next.Load()
		c, hasCommit := committed[tp]
		hasCommit = hasCommit && c >= 0
		switch r, restored := s.restore[tp]; {
		case next >= 0:
			out[tp] = next
			if hasCommit && c > next {
				// Another member got further while the partition was
				// away; its rows are delivered.
				out[tp] = c
			}
		case restored:
			out[tp] = r
			if hasCommit && c > r && s.opts.shared && s.keepsState == "" {
				// Another process of the shared group delivered further
				// while this one was down. Elsewhere the checkpoint wins,
				// as in Flink: a committed offset may come from anyone
				// (a tool, an older run), and with state the restored
				// state belongs with the restored offset.
				out[tp] = c
			}
		case hasCommit:
			out[tp] = c
		default:
			byStart = append(byStart, tp)
		}
	}
	if len(byStart) > 0 {
		at := kafka.FirstOffset
		switch s.opts.start {
		case startLatest:
			at = kafka.LastOffset
		case startTimestamp:
			at = s.opts.startTS.UnixMilli()
		}
		offs, err := s.listOffsets(ctx, byStart, at)
		if err != nil {
			return nil, err
		}
		for tp, off := range offs {
			out[tp] = off
		}
	}
	firsts, err := s.listOffsets(ctx, tps, kafka.FirstOffset)
	if err != nil {
		return nil, err
	}
	lasts, err := s.listOffsets(ctx, tps, kafka.LastOffset)
	if err != nil {
		return nil, err
	}
	for _, tp := range tps {
		switch off := out[tp]; {
		case off < firsts[tp]:
			s.log.Warn("kafka source: offset is no longer in the partition (deleted by retention); starting at its first offset, rows in between are lost",
				"partition", tp.String(), "offset", off, "first", firsts[tp])
			out[tp] = firsts[tp]
		case off > lasts[tp]:
			s.log.Warn("kafka source: offset is past the end of the partition (was the topic re-created?); starting at its end",
				"partition", tp.String(), "offset", off, "end", lasts[tp])
			out[tp] = lasts[tp]
		}
		if s.parts[tp].hw.Load() < 0 {
			s.parts[tp].hw.Store(lasts[tp])
		}
	}
	return out, nil
}
