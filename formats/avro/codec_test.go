package avro

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// bombFile is a container file of codec whose one block holds n zero
// bytes of datums, compressed by compress, and the byte its block starts
// at.
func bombFile(t testing.TB, schema row.Schema, codec string, n int, compress func([]byte) []byte) ([]byte, int) {
	enc, err := NewFileEncoder(FileOptions{Codec: codec}, schema)
	if err != nil {
		t.Fatal(err)
	}
	body := compress(make([]byte, n))
	file := bytes.Clone(enc.header)
	at := len(file)
	file = appendLong(file, 1)
	file = appendLong(file, int64(len(body)))
	file = append(file, body...)
	return append(file, enc.sync[:]...), at
}

// TestBlockBombs reads files whose one block decompresses to 32 MiB
// with each codec, under a bound of 1 MiB: each fails naming the file,
// the block's byte and the bound, having allocated a few MiB at most, not
// the 32. The same block reads under a bound that holds it.
func TestBlockBombs(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "s STRING")
	const n = 32 << 20
	zstdStream := func(src []byte) []byte {
		// A streamed frame does not declare its size; its window is
		// within the bound.
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, zstd.WithWindowSize(256<<10))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, c := range []struct {
		name, codec string
		compress    func([]byte) []byte
	}{
		{"null", "null", func(b []byte) []byte { return b }},
		{"deflate", "deflate", func(b []byte) []byte {
			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, flate.BestSpeed)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		}},
		{"snappy", "snappy", func(b []byte) []byte {
			out, err := blockCodecs["snappy"].compress(nil, b)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}},
		{"zstandard", "zstandard", func(b []byte) []byte { return zstdEncoder().EncodeAll(b, nil) }},
		{"zstandard streamed", "zstandard", zstdStream},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, at := bombFile(t, schema, c.codec, n, c.compress)
			dec, err := NewFileDecoder(FileOptions{MaxBlockBytes: 1 << 20}, schema)
			if err != nil {
				t.Fatal(err)
			}
			allocated, err := readAllocating(dec, file)
			want := "f.avro: the block at byte " + strconv.Itoa(at) + ": "
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "its datums take more than 1048576 bytes decompressed (max_block_bytes)") {
				t.Fatalf("%v, want %q ... the bound", err, want)
			}
			// The null codec's block is the file's own bytes, read whole.
			budget := uint64(8 << 20)
			if c.codec == "null" {
				budget += n
			}
			if got := allocated; got > budget {
				t.Errorf("allocated %d MiB reading it", got>>20)
			}
			if testing.Short() {
				return
			}
			// Under a bound that holds the block, it is a block of
			// datums; its 2-byte datums are more than its count says.
			dec, err = NewFileDecoder(FileOptions{MaxBlockBytes: n}, schema)
			if err != nil {
				t.Fatal(err)
			}
			if err := readFile(dec, file); err == nil || !strings.Contains(err.Error(), "bytes after its last datum") {
				t.Fatalf("under a bound of 32 MiB: %v, want the block read and its extra bytes refused", err)
			}
		})
	}
}

func readFile(dec *FileDecoder, file []byte) error {
	fr, err := dec.OpenFile(bytes.NewReader(file), int64(len(file)), "f.avro")
	if err != nil {
		return err
	}
	for g := range fr.Groups() {
		if err := fr.ReadGroup(context.Background(), g, 0, 10, func(*row.Batch) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// TestBlockZstdWindow: a zstandard frame whose window is past the bound
// fails naming it.
func TestBlockZstdWindow(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "s STRING")
	file, at := bombFile(t, schema, "zstandard", 4<<20, func(src []byte) []byte {
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, zstd.WithWindowSize(8<<20))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(src)
		w.Close()
		return b.Bytes()
	})
	dec, err := NewFileDecoder(FileOptions{MaxBlockBytes: 1 << 20}, schema)
	if err != nil {
		t.Fatal(err)
	}
	want := "f.avro: the block at byte " + strconv.Itoa(at) + ": zstandard: a frame's window of 8388608 bytes is more than max_block_bytes, 1048576"
	if err := readFile(dec, file); err == nil || err.Error() != want {
		t.Fatalf("%v, want %q", err, want)
	}
}

// TestMaxBlockBytesOption: the bound is 64 MiB by default, twice
// block_size when that is more, and refused outside 1 byte to 1 GiB.
func TestMaxBlockBytesOption(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT")
	for _, c := range []struct {
		o    FileOptions
		want int
	}{
		{FileOptions{}, 64 << 20},
		{FileOptions{BlockSize: 48 << 20}, 96 << 20},
		{FileOptions{MaxBlockBytes: 4096}, 4096},
		{FileOptions{MaxBlockBytes: 1 << 30}, 1 << 30},
	} {
		dec, err := NewFileDecoder(c.o, schema)
		if err != nil {
			t.Fatal(err)
		}
		if dec.maxBlock != c.want {
			t.Errorf("%+v: bound %d, want %d", c.o, dec.maxBlock, c.want)
		}
	}
	for _, bad := range []int{-1, 1<<30 + 1} {
		if _, err := NewFileDecoder(FileOptions{MaxBlockBytes: bad}, schema); err == nil || !strings.Contains(err.Error(), "max_block_bytes") {
			t.Errorf("max_block_bytes %d: %v, want it refused", bad, err)
		}
	}
}

// TestBlockZstdDeclaredSize: a zstandard frame of a few bytes that
// declares 60 MiB of content, within the default bound of 64 MiB, fails
// as corrupt naming the size it declares, before the decoder allocates
// for it: no zstandard block yields more than 32 KiB a byte (an RLE
// block: 4 bytes, 128 KiB), so the declared size cannot be true.
func TestBlockZstdDeclaredSize(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "s STRING")
	file, at := bombFile(t, schema, "zstandard", 0, func([]byte) []byte {
		frame := []byte{0x28, 0xb5, 0x2f, 0xfd, // magic
			0x80,                   // a 4-byte content size, a window descriptor
			0x00,                   // a window of 1 KiB
			0x00, 0x00, 0xc0, 0x03, // 60 MiB
			0x03, 0x20, 0x00, 0x00, // the last block: RLE, 1 KiB of zeros
		}
		return frame
	})
	dec, err := NewFileDecoder(FileOptions{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	allocated, err := readAllocating(dec, file)
	want := "f.avro: the block at byte " + strconv.Itoa(at) + ": zstandard: a frame says it holds 62914560 bytes in 14"
	if err == nil || err.Error() != want {
		t.Fatalf("%v, want %q", err, want)
	}
	if got := allocated; got > 1<<20 {
		t.Errorf("allocated %d KiB reading it", got>>10)
	}
}

// readAllocating reads file through dec and says how many bytes the
// process allocated meanwhile.
func readAllocating(dec *FileDecoder, file []byte) (uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := readFile(dec, file)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}
