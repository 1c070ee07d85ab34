package parquet

import (
	"bufio"
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

// checkPages walks the page headers of column chunk c of a file of size
// bytes read through r.
func checkPages(r io.ReaderAt, size int64, c *format.ColumnChunk) error {
	m := &c.MetaData
	start := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	end := start + m.TotalCompressedSize
	if m.Codec == format.Lz4 || m.Codec == format.Lz4Raw {
		// parquet-go's LZ4 decoder doubles its buffer until a page
		// decodes, which a damaged one never does.
		return fmt.Errorf("LZ4 compression is not read: write the file with snappy, zstd or gzip")
	}
	if start < int64(len(magic)) || m.TotalCompressedSize <= 0 || end > size-int64(len(magic)) || end < start {
		return fmt.Errorf("a column chunk of %d bytes at offset %d in a file of %d", m.TotalCompressedSize, start, size)
	}
	cr := &countingReader{r: bufio.NewReaderSize(io.NewSectionReader(r, start, end-start), 512)}
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
		if _, err := cr.r.Discard(int(h.CompressedPageSize)); err != nil {
			return fmt.Errorf("a page at offset %d: %w", pos, err)
		}
		pos = next
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
