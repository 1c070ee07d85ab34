package parquet

import (
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// pageWith is a column chunk of one page: its header, saying the page
// holds uncompressed bytes once decompressed, and 10 bytes of data.
func pageWith(t *testing.T, uncompressed int32, v2 bool, compressed thrift.Null[bool]) []byte {
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: uncompressed, CompressedPageSize: 10}
	if v2 {
		h.Type = format.DataPageV2
		h.DataPageHeaderV2 = thrift.New(format.DataPageHeaderV2{NumValues: 5, NumRows: 5, IsCompressed: compressed})
	} else {
		h.DataPageHeader = thrift.New(format.DataPageHeader{NumValues: 5})
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, 10)...)
}

// TestPageSizeByCodec refuses a page whose header says it decompresses
// to more than its codec can make of its bytes (parquet-go allocates the
// size the header says before it decompresses: a page of 10 bytes said
// to hold 512 MiB took them), naming the page's offset; ZSTD and BROTLI,
// whose ratio has no useful bound, keep the cap of 1 GiB.
func TestPageSizeByCodec(t *testing.T) {
	none := thrift.Null[bool]{}
	tests := []struct {
		codec        format.CompressionCodec
		uncompressed int32
		v2           bool
		compressed   thrift.Null[bool]
		want         string
	}{
		{format.Uncompressed, 10, false, none, ""},
		{format.Uncompressed, 11, false, none, "a page of 10 bytes at offset 4 says it holds 11 bytes uncompressed, more than UNCOMPRESSED makes of them"},
		{format.Snappy, 22*10 + 64, false, none, ""},
		{format.Snappy, 512 << 20, false, none, "a page of 10 bytes at offset 4 says it holds 536870912 bytes uncompressed, more than SNAPPY makes of them"},
		{format.Snappy, 512 << 20, true, none, "more than SNAPPY makes of them"},
		{format.Snappy, 11, true, thrift.New(false), "a page of 10 bytes at offset 4 says it holds 11 bytes uncompressed, more than UNCOMPRESSED makes of them"},
		{format.Gzip, 1032*10 + 64, false, none, ""},
		{format.Gzip, 512 << 20, false, none, "more than GZIP makes of them"},
		{format.Zstd, 512 << 20, false, none, ""},
		{format.Zstd, maxPageBytes + 1, false, none, "a page of 1073741825 bytes uncompressed at offset 4"},
	}
	for _, tc := range tests {
		err := checkPages(pageWith(t, tc.uncompressed, tc.v2, tc.compressed), 4, tc.codec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s, %d bytes: %v", tc.codec, tc.uncompressed, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s, %d bytes (v2 %v): %v, want %q", tc.codec, tc.uncompressed, tc.v2, err, tc.want)
		}
	}
}
