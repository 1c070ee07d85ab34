package parquet

import (
	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/format"
)

// snappyCodec is Parquet's SNAPPY codec at snappy's own speed: the codec
// parquet-go ships encodes with klauspost's "better" mode, which spends
// about twice the CPU for a few percent of size. Its blocks are plain
// snappy blocks, which every reader decodes.
type snappyCodec struct{}

func (snappyCodec) String() string { return "SNAPPY" }

func (snappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (snappyCodec) Encode(dst, src []byte) ([]byte, error) {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}

func (snappyCodec) Decode(dst, src []byte) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.Decode(dst[:n], src)
}
