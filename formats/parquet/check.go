package parquet

import (
	"bytes"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A damaged file must fail with an error, not take the process down:
// parquet-go allocates what a page header says a page holds before it
// reads it, and a header's sizes and counts are 32-bit numbers, so a
// flipped byte can ask for gigabytes. Before a row group is read, the
// headers of its pages in the columns read are checked against the
// column chunks that hold them and against bounds no writer comes near.

const (
	// maxPageBytes bounds a page, compressed or not (writers cut pages
	// at about 1 MiB).
	maxPageBytes = 1 << 30
	// maxPageValues bounds the values of a page, NULLs included.
	maxPageValues = 1 << 27
)

// chunkRange is the byte range [start, end) of column chunk c in a file
// of size bytes, checked to lie inside the file.
func chunkRange(size int64, c *format.ColumnChunk) (start, end int64, err error) {
	m := &c.MetaData
	start = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	end = start + m.TotalCompressedSize
	if m.Codec == format.Lz4 || m.Codec == format.Lz4Raw {
		// parquet-go's LZ4 decoder doubles its buffer until a page
		// decodes, which a damaged one never does.
		return 0, 0, fmt.Errorf("LZ4 compression is not read: write the file with snappy, zstd or gzip")
	}
	if start < int64(len(magic)) || m.TotalCompressedSize <= 0 || end > size-int64(len(magic)) || end < start {
		return 0, 0, fmt.Errorf("a column chunk of %d bytes at offset %d in a file of %d", m.TotalCompressedSize, start, size)
	}
	return start, end, nil
}

// ratio bounds the bytes a codec makes of n bytes: snappy's copies of
// 64 bytes in 3 and deflate's 258 in 2 bits (its 1032 to 1), with room
// for a stream's headers; ok is false for ZSTD and BROTLI, whose ratio
// has no bound worth the name (a zstd block of 4 bytes makes 128 KiB),
// and which maxPageBytes alone bounds.
func ratio(codec format.CompressionCodec, n int64) (_ int64, ok bool) {
	switch codec {
	case format.Uncompressed:
		return n, true
	case format.Snappy:
		return 22*n + 64, true
	case format.Gzip:
		return 1032*n + 64, true
	}
	return 0, false
}

// checkPages walks the page headers of a column chunk, data, which
// starts at offset start of its file and is compressed with codec. A
// page's size uncompressed is what parquet-go allocates before it
// decompresses it: past what the codec can make of the page's bytes, the
// header is damaged.
func checkPages(data []byte, start int64, codec format.CompressionCodec) error {
	end := start + int64(len(data))
	cr := &countingReader{r: bytes.NewReader(data)}
	dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(cr))
	for pos := start; pos < end; {
		var h format.PageHeader
		cr.n = 0
		if err := dec.Decode(&h); err != nil {
			return fmt.Errorf("a page header at offset %d: %w", pos, err)
		}
		values := max(h.DataPageHeader.V.NumValues, h.DataPageHeaderV2.V.NumValues, h.DictionaryPageHeader.V.NumValues)
		next := pos + cr.n + int64(h.CompressedPageSize)
		switch {
		case h.CompressedPageSize < 0 || next > end:
			return fmt.Errorf("a page of %d bytes at offset %d overruns its column chunk", h.CompressedPageSize, pos)
		case h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPageBytes:
			return fmt.Errorf("a page of %d bytes uncompressed at offset %d", h.UncompressedPageSize, pos)
		case values < 0 || values > maxPageValues:
			return fmt.Errorf("a page of %d values at offset %d", values, pos)
		}
		c := codec
		if h.DataPageHeaderV2.Valid && h.DataPageHeaderV2.V.IsCompressed.Valid && !h.DataPageHeaderV2.V.IsCompressed.V {
			c = format.Uncompressed
		}
		if most, ok := ratio(c, int64(h.CompressedPageSize)); ok && int64(h.UncompressedPageSize) > most {
			return fmt.Errorf("a page of %d bytes at offset %d says it holds %d bytes uncompressed, more than %s makes of them", h.CompressedPageSize, pos, h.UncompressedPageSize, c)
		}
		if _, err := cr.r.Seek(next-start, io.SeekStart); err != nil {
			return fmt.Errorf("a page at offset %d: %w", pos, err)
		}
		pos = next
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
