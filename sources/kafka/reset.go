package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
)

// Reset deletes the consumer group's committed offsets of the source's
// topics (connector.Resetter), so that the next run without a
// checkpoint starts at `start`: a committed offset wins over start
// (kafka.go, "Where an assigned partition starts"), and a run whose
// state was removed would otherwise resume mid-topic with empty
// operators. Without a group_id nothing outside the state directory
// holds a position. The broker refuses to delete the offsets of a topic
// that members of the group are subscribed to (a running pipeline, or
// the static member of a killed one until its session_timeout ends):
// that is an error, and nothing is deleted.
//
// Reset is called on a source that was never opened; it opens its own
// client and closes it.
func (s *Source) Reset(ctx context.Context) (string, error) {
	if s.opts.groupID == "" {
		return "", nil
	}
	transport, err := s.opts.kafka.Transport()
	if err != nil {
		return "", fmt.Errorf("kafka source: %w", err)
	}
	defer transport.CloseIdleConnections()
	s.client = &kafka.Client{Addr: kafka.TCP(s.opts.brokers...), Timeout: 10 * time.Second, Transport: transport}
	defer func() { s.client = nil }()
	if err := s.groupIdle(ctx); err != nil {
		return "", err
	}
	var committed map[topicPartition]int64
	what := fmt.Sprintf("kafka source %s: reading the committed offsets of group %q", s.name, s.opts.groupID)
	err = retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		tps, err := s.partitions(ctx)
		if err == nil {
			committed, err = s.committedOffsets(ctx, tps)
		}
		if kafkaconf.Refused(err) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if len(committed) == 0 {
		return fmt.Sprintf("consumer group %q had no committed offsets of %s: the next run starts %s", s.opts.groupID, strings.Join(s.opts.topics, ", "), s.startsAt()), nil
	}
	req := &kafka.OffsetDeleteRequest{GroupID: s.opts.groupID, Topics: map[string][]int{}}
	var was []string
	for tp, off := range committed {
		req.Topics[tp.topic] = append(req.Topics[tp.topic], tp.partition)
		was = append(was, fmt.Sprintf("%s at %d", tp, off))
	}
	slices.Sort(was)
	what = fmt.Sprintf("kafka source %s: deleting the committed offsets of group %q", s.name, s.opts.groupID)
	err = retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		res, err := s.client.OffsetDelete(ctx, req)
		if err == nil {
			err = res.Error
		}
		if err == nil {
			for topic, parts := range res.Topics {
				for _, p := range parts {
					if p.Error != nil {
						err = errors.Join(err, fmt.Errorf("%s/%d: %w", topic, p.Partition, p.Error))
					}
				}
			}
		}
		switch {
		case err == nil, errors.Is(err, kafka.GroupIdNotFound):
			return nil
		case errors.Is(err, kafka.GroupSubscribedToTopic), errors.Is(err, kafka.NonEmptyGroup):
			return retry.Permanent(fmt.Errorf("consumer group %q: members of the group read %s (a running pipeline, or the static member of a killed one until its session_timeout ends): stop them, or wait, and reset again: %w",
				s.opts.groupID, strings.Join(s.opts.topics, ", "), err))
		case kafkaconf.Refused(err):
			return retry.Permanent(err)
		case groupLoading(err):
			return retry.Expected(err)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted the committed offsets of consumer group %q (%s): the next run starts %s", s.opts.groupID, strings.Join(was, ", "), s.startsAt()), nil
}

// groupIdle fails when the group has members: a running pipeline (one
// that has committed nothing yet too, which the broker's refusal to
// delete offsets would not catch), or a killed one's static member until
// its session_timeout ends. Its next commit would undo the reset.
func (s *Source) groupIdle(ctx context.Context) error {
	var res *kafka.DescribeGroupsResponse
	what := fmt.Sprintf("kafka source %s: describing group %q", s.name, s.opts.groupID)
	err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		var err error
		res, err = s.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{s.opts.groupID}})
		if err == nil && len(res.Groups) == 1 {
			err = res.Groups[0].Error
		}
		switch {
		case kafkaconf.Refused(err):
			return retry.Permanent(err)
		case err != nil && groupLoading(err):
			return retry.Expected(err)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, g := range res.Groups {
		if n := len(g.Members); n > 0 {
			return fmt.Errorf("consumer group %q has %d members (state %s): a running pipeline reads it, or a killed one's static member stays until its session_timeout ends; its next commit would undo the reset: stop it, or wait, and reset again",
				s.opts.groupID, n, g.GroupState)
		}
	}
	return nil
}

// startsAt says where a run without a checkpoint or committed offsets
// starts.
func (s *Source) startsAt() string {
	switch s.opts.start {
	case startLatest:
		return "at the topics' end (start: latest)"
	case startTimestamp:
		return "at start_timestamp " + s.opts.startTS.UTC().Format(time.RFC3339)
	}
	return "at the topics' first offsets"
}

var _ connector.Resetter = (*Source)(nil)
