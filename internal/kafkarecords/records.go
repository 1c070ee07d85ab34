// Package kafkarecords walks the records of a Kafka fetch response, the
// control batches too. It imports only kafka-go, so that the test
// environment can use it without importing the connector layer.
package kafkarecords

import (
	"errors"
	"io"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

// EachRecord calls fn with every record of rr (a fetch response's
// records), in offset order, the records of control batches too, marked:
// the transaction markers that the Kafka sink's fencing writes, one per
// partition per start. kafka-go's record stream skips control batches,
// which leaves a reader that must reach an end offset unable to step over
// a marker at the end of a partition; its Reader, on the contrary,
// returns them as messages. Kafka's consumers skip them.
func EachRecord(rr kafka.RecordReader, fn func(rec *kafka.Record, marker bool)) error {
	if stream, ok := rr.(*protocol.RecordStream); ok {
		for _, sub := range stream.Records {
			if err := EachRecord(sub, fn); err != nil {
				return err
			}
		}
		return nil
	}
	_, marker := rr.(*protocol.ControlBatch)
	for {
		rec, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(rec, marker)
	}
}
