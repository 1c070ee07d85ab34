package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/retry"
)

// topicPartitions returns the topic's partition count, creating the topic
// first with create_topic. Errors that waiting cannot fix are Permanent.
func (s *Sink) topicPartitions(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	md, err := s.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{s.topic}})
	if err != nil {
		return 0, err
	}
	for _, t := range md.Topics {
		if t.Name != s.topic {
			continue
		}
		switch {
		case errors.Is(t.Error, kafka.UnknownTopicOrPartition):
			if !s.create {
				return 0, retry.Permanent(fmt.Errorf("topic %q does not exist on brokers %s: create it, or set create_topic: true", s.topic, strings.Join(s.kafka.Addrs(), ",")))
			}
			return 0, s.createTopic(ctx)
		case errors.Is(t.Error, kafka.TopicAuthorizationFailed):
			return 0, retry.Permanent(fmt.Errorf("topic %q: %w", s.topic, t.Error))
		case t.Error != nil:
			return 0, fmt.Errorf("topic %q: %w", s.topic, t.Error)
		case len(t.Partitions) == 0:
			return 0, fmt.Errorf("topic %q has no partitions yet", s.topic)
		}
		if s.create && s.partitions > 0 && len(t.Partitions) != s.partitions {
			s.log.Warn("kafka sink: the topic exists with another partition count; using it as it is", "topic", s.topic, "partitions", len(t.Partitions), "configured", s.partitions)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("topic %q: not in the metadata response", s.topic)
}

// createTopic creates the topic and returns an error so that the caller's
// retry reads the metadata again (a new topic's leaders take a moment).
func (s *Sink) createTopic(ctx context.Context) error {
	parts, replicas := s.partitions, s.replicas
	if parts == 0 {
		parts = 1
	}
	if replicas == 0 {
		replicas = -1 // the broker's default.replication.factor
	}
	res, err := s.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: s.topic, NumPartitions: parts, ReplicationFactor: replicas,
	}}})
	if err != nil {
		return err
	}
	switch err := res.Errors[s.topic]; {
	case errors.Is(err, kafka.TopicAlreadyExists):
		// Another client created it since the metadata said it was
		// missing: it is not ours, and its partition count is whatever
		// that client chose, which the metadata read next reports.
		s.log.Info("kafka sink: the topic already exists (created by another client meanwhile); using it as it is", "topic", s.topic)
		return retry.Expected(errors.New("topic already exists, reading its metadata again"))
	case err != nil:
		var ke kafka.Error
		if errors.As(err, &ke) && !ke.Temporary() {
			return retry.Permanent(fmt.Errorf("create topic %q: %w", s.topic, err))
		}
		return fmt.Errorf("create topic %q: %w", s.topic, err)
	}
	s.log.Info("kafka sink created the topic", "topic", s.topic, "partitions", parts)
	return retry.Expected(errors.New("topic created, reading its metadata again"))
}
