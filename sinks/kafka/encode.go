package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/segmentio/kafka-go"
)

// The sink encodes its record batches itself (Kafka's format v2) rather
// than through kafka-go's writer, which always writes producer id -1: a
// fenced sink (fence.go) stamps each batch with its producer id, epoch and
// sequence numbers.

// producer is what a record batch says of its producer: the id and epoch
// InitProducerID gave, or noProducer.
type producer struct {
	id    int64
	epoch int16
}

// noProducer marks batches of an unfenced sink, as kafka-go's writer does.
var noProducer = producer{id: -1, epoch: -1}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The fixed part of a record batch after its length: partition leader
// epoch, magic, CRC, attributes, last offset delta, first and max
// timestamps, producer id and epoch, base sequence, record count.
const batchHeader = 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4

// appendRecordSet appends messages lo to hi of b as one record batch, as
// the produce request's record set: its size, then the batch. seq is the
// base sequence (-1 for none). Each message carries its etld-pos header,
// and sinkID as etld-sink, when it has a position.
func appendRecordSet(dst []byte, b *batch, lo, hi int, prod producer, seq int32, compression kafka.Compression, sinkID []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, 4+8+4+batchHeader)...) // size, base offset, length, header: filled below
	records := len(dst)
	var err error
	if codec := compression.Codec(); compression != 0 && codec != nil {
		var raw []byte
		raw = appendRecords(raw, b, lo, hi, sinkID)
		var out bytes.Buffer
		w := codec.NewWriter(&out)
		if _, err = w.Write(raw); err == nil {
			err = w.Close()
		}
		if err != nil {
			return dst[:start], fmt.Errorf("compress %d messages with %s: %w", hi-lo, codec.Name(), err)
		}
		dst = append(dst, out.Bytes()...)
	} else {
		dst = appendRecords(dst, b, lo, hi, sinkID)
	}
	ts := b.start.UnixMilli()
	h := dst[start:records]
	be := binary.BigEndian
	be.PutUint32(h[0:], uint32(len(dst)-start-4)) // the record set's size
	be.PutUint64(h[4:], 0)                        // base offset: the broker's
	be.PutUint32(h[12:], uint32(len(dst)-start-16))
	be.PutUint32(h[16:], 0xffffffff) // partition leader epoch: unknown
	h[20] = 2                        // magic
	// h[21:25] is the CRC, of everything after it.
	be.PutUint16(h[25:], uint16(compression)&0x7)
	be.PutUint32(h[27:], uint32(hi-lo-1))
	be.PutUint64(h[31:], uint64(ts))
	be.PutUint64(h[39:], uint64(ts))
	be.PutUint64(h[47:], uint64(prod.id))
	be.PutUint16(h[55:], uint16(prod.epoch))
	be.PutUint32(h[57:], uint32(seq))
	be.PutUint32(h[61:], uint32(hi-lo))
	be.PutUint32(h[21:], crc32.Checksum(dst[start+25:], castagnoli))
	return dst, nil
}

// appendRecords appends messages lo to hi of b as records, all at the
// batch's timestamp.
func appendRecords(dst []byte, b *batch, lo, hi int, sinkID []byte) []byte {
	for i := lo; i < hi; i++ {
		key, value, pos := b.key(i), b.value(i), b.pos(i)
		headers := int64(0)
		size := 1 + 1 + varintLen(int64(i-lo)) + varBytesLen(key) + varBytesLen(value)
		if pos != nil {
			headers = 2
			size += varBytesLen([]byte(headerSink)) + varBytesLen(sinkID) + varBytesLen([]byte(headerPos)) + varBytesLen(pos)
		}
		size += varintLen(headers)
		dst = binary.AppendVarint(dst, int64(size))
		dst = append(dst, 0)              // attributes
		dst = binary.AppendVarint(dst, 0) // timestamp delta
		dst = binary.AppendVarint(dst, int64(i-lo))
		dst = appendVarBytes(dst, key)
		dst = appendVarBytes(dst, value)
		dst = binary.AppendVarint(dst, headers)
		if pos != nil {
			dst = appendVarBytes(dst, []byte(headerSink))
			dst = appendVarBytes(dst, sinkID)
			dst = appendVarBytes(dst, []byte(headerPos))
			dst = appendVarBytes(dst, pos)
		}
	}
	return dst
}

// appendVarBytes appends v with its length as a varint, -1 for nil.
func appendVarBytes(dst, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(v)))
	return append(dst, v...)
}

func varintLen(v int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], v)
}

func varBytesLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}
