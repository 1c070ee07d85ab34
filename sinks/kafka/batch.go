package kafka

import "time"

const (
	// recordOverhead is what a record adds to its key and value in a
	// record batch at most (length, attributes, timestamp and offset
	// deltas, header count, as varints), counted so that a batch stays
	// under the broker's message.max.bytes.
	recordOverhead = 24
	// headerOverhead is what the two exactly-once headers add besides
	// their values: a count, two keys and four lengths.
	headerOverhead = 1 + len(headerSink) + len(headerPos) + 4*2
	// queuedBatches is how many sealed batches a partition holds beyond
	// the one in flight before Write waits: memory stays bounded while
	// encoding overlaps sending.
	queuedBatches = 2
)

// part is one partition's batches.
type part struct {
	id int
	// cur is the batch Write appends to; queue holds sealed batches, oldest
	// first. Both under Sink.mu.
	cur   *batch
	queue []*batch
	// sent and acked count messages handed to the partition and
	// acknowledged (or rejected) by the broker, under Sink.mu.
	sent, acked int64
	// next is the offset after the last message the brokers acknowledged,
	// under Sink.mu; exactly-once mode only.
	next int64
	free []*batch
	kick chan struct{}
	// seq is the sequence number of the partition's next record, and
	// wire the encoded request being sent; the sender's alone.
	seq  int32
	wire []byte
}

// batch is a run of messages for one partition: their encoded keys and
// values in one buffer, and where each one lies in it.
type batch struct {
	buf   []byte
	recs  []span
	bytes int // counted against batch_bytes
	start time.Time
}

// span locates one message in batch.buf; key or value -1 when null, pos
// (its etld-pos header) -1 when it has none.
type span struct {
	keyOff, keyEnd int32
	valOff, valEnd int32
	posOff, posEnd int32
}

func (b *batch) reset() {
	b.buf, b.recs, b.bytes = b.buf[:0], b.recs[:0], 0
}

func (b *batch) key(i int) []byte {
	r := b.recs[i]
	if r.keyOff < 0 {
		return nil
	}
	return b.buf[r.keyOff:r.keyEnd]
}

func (b *batch) pos(i int) []byte {
	r := b.recs[i]
	if r.posOff < 0 {
		return nil
	}
	return b.buf[r.posOff:r.posEnd]
}

func (b *batch) value(i int) []byte {
	r := b.recs[i]
	if r.valOff < 0 {
		return nil
	}
	return b.buf[r.valOff:r.valEnd]
}
