package avro

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// The codecs of an object container file's blocks, by the names Avro's
// specification gives them in the header's avro.codec. The writer takes
// null, deflate, snappy and zstandard; the reader bzip2 as well, which
// Go's library reads and does not write. Avro's xz is neither.

// blockCodec compresses and decompresses one block's datums.
type blockCodec struct {
	name string
	// compress appends the compressed src to dst; nil for a codec the
	// writer does not take.
	compress func(dst, src []byte) ([]byte, error)
	// decompress returns the datums, at most limit bytes of them.
	decompress func(src []byte, limit int) ([]byte, error)
}

// maxBlockBytes bounds a block's datums once decompressed: a corrupt
// length or a compression bomb fails rather than taking the memory.
const maxBlockBytes = 256 << 20

// errBlockTooLarge is the error of a block past maxBlockBytes.
var errBlockTooLarge = fmt.Errorf("a block of more than %d MiB of datums", maxBlockBytes>>20)

var blockCodecs = map[string]*blockCodec{
	"null": {name: "null",
		compress: func(dst, src []byte) ([]byte, error) { return append(dst, src...), nil },
		decompress: func(src []byte, limit int) ([]byte, error) {
			if len(src) > limit {
				return nil, errBlockTooLarge
			}
			return src, nil
		}},
	// deflate is raw DEFLATE (RFC 1951), with no zlib header.
	"deflate": {name: "deflate",
		compress: func(dst, src []byte) ([]byte, error) {
			b := bytes.NewBuffer(dst)
			w := deflateWriters.Get().(*flate.Writer)
			defer deflateWriters.Put(w)
			w.Reset(b)
			if _, err := w.Write(src); err != nil {
				return dst, err
			}
			if err := w.Close(); err != nil {
				return dst, err
			}
			return b.Bytes(), nil
		},
		decompress: func(src []byte, limit int) ([]byte, error) {
			return readLimited(flate.NewReader(bytes.NewReader(src)), limit)
		}},
	// snappy is a snappy block followed by the CRC-32 (IEEE) of the
	// datums, big-endian.
	"snappy": {name: "snappy",
		compress: func(dst, src []byte) ([]byte, error) {
			n := len(dst)
			dst = append(dst, make([]byte, s2.MaxEncodedLen(len(src))+4)...)
			enc := s2.EncodeSnappy(dst[n:], src)
			dst = dst[:n+len(enc)]
			return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(src)), nil
		},
		decompress: func(src []byte, limit int) ([]byte, error) {
			if len(src) < 4 {
				return nil, errors.New("a snappy block shorter than its checksum")
			}
			body, sum := src[:len(src)-4], binary.BigEndian.Uint32(src[len(src)-4:])
			n, err := s2.DecodedLen(body)
			if err != nil {
				return nil, fmt.Errorf("snappy: %w", err)
			}
			// A snappy copy of 64 bytes takes 3: more than that ratio is
			// a corrupt length, not a reason to allocate.
			if n > limit || n > 22*len(body)+64 {
				return nil, fmt.Errorf("snappy: a block says it holds %d bytes in %d", n, len(body))
			}
			out, err := s2.Decode(make([]byte, n), body)
			if err != nil {
				return nil, fmt.Errorf("snappy: %w", err)
			}
			if crc32.ChecksumIEEE(out) != sum {
				return nil, errors.New("snappy: the block's checksum does not match its datums")
			}
			return out, nil
		}},
	"zstandard": {name: "zstandard",
		compress: func(dst, src []byte) ([]byte, error) { return zstdEncoder().EncodeAll(src, dst), nil },
		decompress: func(src []byte, limit int) ([]byte, error) {
			out, err := zstdDecoder().DecodeAll(src, nil)
			if err != nil {
				return nil, fmt.Errorf("zstandard: %w", err)
			}
			if len(out) > limit {
				return nil, errBlockTooLarge
			}
			return out, nil
		}},
	"bzip2": {name: "bzip2",
		decompress: func(src []byte, limit int) ([]byte, error) {
			return readLimited(bzip2.NewReader(bytes.NewReader(src)), limit)
		}},
}

// codecNames are the codec option's values; zstd is zstandard's short name.
var codecNames = map[string]string{"null": "null", "none": "null", "deflate": "deflate", "snappy": "snappy", "zstandard": "zstandard", "zstd": "zstandard"}

var deflateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// zstdEncoder and zstdDecoder are shared: EncodeAll and DecodeAll may be
// called from several goroutines at once.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil)
		if err != nil {
			panic(err)
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlockBytes))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// readLimited reads r to its end, failing past limit bytes.
func readLimited(r io.Reader, limit int) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, errBlockTooLarge
	}
	return out, nil
}
