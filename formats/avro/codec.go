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

// A block's datums, once decompressed, are bounded (max_block_bytes):
// a corrupt length or a compression bomb (a few KiB of zstandard can
// say 1 GiB of zeros) fails, naming the block, before it takes the
// memory. Each codec stops at the bound rather than checking after:
// deflate and bzip2 read through a limit, snappy and zstandard check
// the size their data declares first, and zstandard's decoder stops
// decoding past the bound.
const (
	// defaultMaxBlockBytes is the bound when the option is not given,
	// or twice block_size when that is more: blocks are cut after
	// block_size bytes of datums, the last datum overshooting it.
	defaultMaxBlockBytes = 64 << 20
	maxMaxBlockBytes     = 1 << 30
)

// tooLarge is the error of a block whose datums pass limit bytes.
func tooLarge(limit int) error {
	return fmt.Errorf("its datums take more than %d bytes decompressed (max_block_bytes)", limit)
}

var blockCodecs = map[string]*blockCodec{
	"null": {name: "null",
		compress: func(dst, src []byte) ([]byte, error) { return append(dst, src...), nil },
		decompress: func(src []byte, limit int) ([]byte, error) {
			if len(src) > limit {
				return nil, tooLarge(limit)
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
			if n > limit {
				return nil, fmt.Errorf("snappy: the block says it holds %d bytes: %w", n, tooLarge(limit))
			}
			if n > 22*len(body)+64 {
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
			// The first frame's header may declare its size: one past
			// the bound fails before anything is decoded.
			var h zstd.Header
			if err := h.Decode(src); err == nil && h.HasFCS && h.FrameContentSize > uint64(limit) {
				return nil, fmt.Errorf("zstandard: the block says it holds %d bytes: %w", h.FrameContentSize, tooLarge(limit))
			}
			// The decoder allocates the size a frame declares before
			// decoding it. No block yields more than 32 KiB a byte (an
			// RLE block: 4 bytes, 128 KiB), so a larger size is a lie,
			// and a few bytes would otherwise hold up to the bound.
			if h.HasFCS && h.FrameContentSize > zstdMaxRatio*uint64(len(src)) {
				return nil, fmt.Errorf("zstandard: a frame says it holds %d bytes in %d", h.FrameContentSize, len(src))
			}
			out, err := zstdDecoder(limit).DecodeAll(src, nil)
			if errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(out) > limit {
				return nil, fmt.Errorf("zstandard: %w", tooLarge(limit))
			}
			if errors.Is(err, zstd.ErrWindowSizeExceeded) {
				// The decoder refuses a window (how far back a match
				// reaches) past the bound, which the datums would pass.
				return nil, fmt.Errorf("zstandard: a frame's window of %d bytes is more than max_block_bytes, %d", h.WindowSize, limit)
			}
			if err != nil {
				return nil, fmt.Errorf("zstandard: %w", err)
			}
			return out, nil
		}},
	"bzip2": {name: "bzip2",
		decompress: func(src []byte, limit int) ([]byte, error) {
			return readLimited(bzip2.NewReader(bytes.NewReader(src)), limit)
		}},
}

// zstdMaxRatio is the most a zstandard frame's content can be per byte
// of it: a block's 128 KiB at most from 4 bytes at least.
const zstdMaxRatio = (128 << 10) / 4

// codecNames are the codec option's values; zstd is zstandard's short name.
var codecNames = map[string]string{"null": "null", "none": "null", "deflate": "deflate", "snappy": "snappy", "zstandard": "zstandard", "zstd": "zstandard"}

var deflateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// zstdEncoder is shared: EncodeAll may be called from several
// goroutines at once.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	return e
})

// zstdDecoders are the decoders of each bound (a few: the bound is an
// option of a pipeline's format), shared as DecodeAll may be called
// from several goroutines at once. A decoder stops a frame once its
// output passes the bound, by at most a zstandard block (128 KiB).
var zstdDecoders struct {
	mu sync.Mutex
	m  map[int]*zstd.Decoder
}

func zstdDecoder(limit int) *zstd.Decoder {
	zstdDecoders.mu.Lock()
	defer zstdDecoders.mu.Unlock()
	if d := zstdDecoders.m[limit]; d != nil {
		return d
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(uint64(limit)))
	if err != nil {
		panic(err)
	}
	if zstdDecoders.m == nil {
		zstdDecoders.m = map[int]*zstd.Decoder{}
	}
	zstdDecoders.m[limit] = d
	return d
}

// readLimited reads r to its end, failing past limit bytes.
func readLimited(r io.Reader, limit int) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, tooLarge(limit)
	}
	return out, nil
}
