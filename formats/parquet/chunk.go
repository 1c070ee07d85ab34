package parquet

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A flat column's chunk written without parquet-go's writer, whose only
// way in is a parquet.Value per value: the values are held typed
// (column), then cut into data pages (version 2), each with its
// definition levels (RLE/bit-packed), its values (PLAIN, or indexes into
// a dictionary page for STRING) compressed, and its statistics; the
// chunk's metadata, column index and offset index come out beside the
// bytes. The layout is parquet-go's: a page ends at about 1 MiB of
// values, a dictionary falls back to PLAIN pages once it passes 1 MiB
// (parquet-mr's default), the column index's string bounds are cut at 64
// bytes (parquet-mr's), and the chunk's own statistics are exact.

const (
	// pageBytes is about how many bytes of values a data page holds.
	pageBytes = 1 << 20
	// dictBytes bounds a chunk's dictionary, its values PLAIN encoded:
	// the values after the one that would pass it are written PLAIN.
	dictBytes = 1 << 20
	// indexBytes is the longest string bound in a column index.
	indexBytes = 64
)

// physical is a flat column's Parquet physical type.
type physical uint8

const (
	physBoolean physical = iota
	physInt32
	physInt64
	physFloat
	physDouble
	physBytes
	physFixed
)

var physTypes = [...]format.Type{
	physBoolean: format.Boolean, physInt32: format.Int32, physInt64: format.Int64,
	physFloat: format.Float, physDouble: format.Double, physBytes: format.ByteArray, physFixed: format.FixedLenByteArray,
}

// column holds one flat column's values of a row group, typed, until
// they are encoded: defs has a definition level per row (optional
// columns only), the slice of the physical type a value per non-NULL row.
type column struct {
	name     string
	phys     physical
	optional bool
	// dict: STRING columns are dictionary encoded.
	dict bool
	// width is a FIXED_LEN_BYTE_ARRAY's.
	width int

	rows  int
	defs  []uint8
	bools []bool
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	strs  []string
	fixed []byte

	// The dictionary of the chunk being encoded, and the value indexes.
	ids      map[string]int32
	dictVals []string
	idx      []int32
	// uncompressed sums the chunk's pages, headers included, before
	// compression.
	uncompressed int64
	// Buffers reused from chunk to chunk.
	levels, vals, comp []byte
}

// reset empties c for the next row group.
func (c *column) reset() {
	c.rows = 0
	c.defs = c.defs[:0]
	c.bools, c.i32, c.i64 = c.bools[:0], c.i32[:0], c.i64[:0]
	c.f32, c.f64 = c.f32[:0], c.f64[:0]
	c.strs, c.fixed = c.strs[:0], c.fixed[:0]
}

// presize makes the buffers of the column's type for n values, so that
// the first row group does not grow them step by step.
func (c *column) presize(n int) {
	if c.optional {
		c.defs = make([]uint8, 0, n)
	}
	switch c.phys {
	case physBoolean:
		c.bools = make([]bool, 0, n)
	case physInt32:
		c.i32 = make([]int32, 0, n)
	case physInt64:
		c.i64 = make([]int64, 0, n)
	case physFloat:
		c.f32 = make([]float32, 0, n)
	case physDouble:
		c.f64 = make([]float64, 0, n)
	case physBytes:
		c.strs = make([]string, 0, n)
	default:
		c.fixed = make([]byte, 0, n*c.width)
	}
}

// forget drops the strings of the rows encoded, which the column's
// buffers would otherwise keep alive until the next row group.
func (c *column) forget() {
	clear(c.strs)
	c.strs = c.strs[:0]
	clear(c.dictVals)
	c.dictVals = c.dictVals[:0]
	clear(c.ids)
}

// values is the number of non-NULL values held.
func (c *column) values() int {
	switch c.phys {
	case physBoolean:
		return len(c.bools)
	case physInt32:
		return len(c.i32)
	case physInt64:
		return len(c.i64)
	case physFloat:
		return len(c.f32)
	case physDouble:
		return len(c.f64)
	case physBytes:
		return len(c.strs)
	}
	return len(c.fixed) / c.width
}

// chunkOut is an encoded chunk's metadata and page index.
type chunkOut struct {
	chunk format.ColumnChunk
	ci    format.ColumnIndex
	oi    format.OffsetIndex
}

// encode appends the column's chunk to out, whose first byte is at
// offset base of the file.
func (c *column) encode(out []byte, base int64, codec compress.Codec) ([]byte, chunkOut, error) {
	start := len(out)
	n := c.values()
	var res chunkOut
	m := &res.chunk.MetaData
	m.Type = physTypes[c.phys]
	m.PathInSchema = []string{c.name}
	m.Codec = codec.CompressionCodec()
	m.NumValues = int64(c.rows)
	compressed := m.Codec != format.Uncompressed
	c.uncompressed = 0

	// fallback is the first value written PLAIN.
	fallback := 0
	if c.dict {
		fallback = c.buildDict()
	}
	var dictPages, dictData, plainData int32
	if fallback > 0 {
		vals := appendPlainStrings(c.vals[:0], c.dictVals)
		c.vals = vals
		h := format.PageHeader{Type: format.DictionaryPage,
			DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(c.dictVals)), Encoding: format.Plain})}
		m.DictionaryPageOffset = base + int64(len(out))
		var err error
		if out, err = c.page(out, &h, nil, vals, codec, compressed); err != nil {
			return nil, res, err
		}
		dictPages++
	}
	m.DataPageOffset = base + int64(len(out))

	var chunkMin, chunkMax []byte
	var nulls int64
	for r, v := 0, 0; r < c.rows; {
		useDict := v < fallback
		limit := n
		if useDict {
			limit = fallback
		}
		r1, v1 := c.cut(r, v, limit)
		var levels []byte
		if c.optional {
			var err error
			if levels, err = (&rle.Encoding{BitWidth: 1}).EncodeLevels(c.levels[:0], c.defs[r:r1]); err != nil {
				return nil, res, err
			}
			c.levels = levels
		}
		enc := format.Plain
		var vals []byte
		if useDict {
			enc = format.RLEDictionary
			var err error
			if vals, err = new(rle.DictionaryEncoding).EncodeInt32(c.vals[:0], c.idx[v:v1]); err != nil {
				return nil, res, err
			}
			dictData++
		} else {
			vals = c.appendPlain(c.vals[:0], v, v1)
			plainData++
		}
		c.vals = vals
		pageNulls := int64((r1 - r) - (v1 - v))
		lo, hi, ok := c.bounds(v, v1)
		h := format.PageHeader{Type: format.DataPageV2, DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{
			NumValues: int32(r1 - r), NumNulls: int32(pageNulls), NumRows: int32(r1 - r), Encoding: enc,
			DefinitionLevelsByteLength: int32(len(levels)), IsCompressed: thrift.New(compressed),
			Statistics: stats(lo, hi, ok, pageNulls),
		})}
		at := len(out)
		var err error
		if out, err = c.page(out, &h, levels, vals, codec, compressed); err != nil {
			return nil, res, err
		}
		res.oi.PageLocations = append(res.oi.PageLocations, format.PageLocation{
			Offset: base + int64(at), CompressedPageSize: int32(len(out) - at), FirstRowIndex: int64(r)})
		res.ci.NullPages = append(res.ci.NullPages, v1 == v)
		res.ci.NullCounts = append(res.ci.NullCounts, pageNulls)
		ilo, ihi := lo, hi
		switch {
		case c.phys == physBytes:
			ilo, ihi = truncateMin(lo), truncateMax(hi)
		case !ok && v1 > v:
			// NaNs alone: a page that is not all NULL has bounds in
			// the column index, and NaN is theirs (the chunk's
			// statistics leave them out).
			ilo = c.nanBound()
			ihi = ilo
		}
		res.ci.MinValues = append(res.ci.MinValues, nonNil(ilo))
		res.ci.MaxValues = append(res.ci.MaxValues, nonNil(ihi))
		if ok {
			if chunkMin == nil || c.cmp(lo, chunkMin) < 0 {
				chunkMin = lo
			}
			if chunkMax == nil || c.cmp(hi, chunkMax) > 0 {
				chunkMax = hi
			}
		}
		nulls += pageNulls
		r, v = r1, v1
	}
	res.ci.BoundaryOrder = format.Unordered
	m.Statistics = stats(chunkMin, chunkMax, chunkMin != nil, nulls)
	m.TotalCompressedSize = int64(len(out) - start)
	m.TotalUncompressedSize = c.uncompressed
	m.Encoding = encodings(c.optional, dictPages > 0, plainData > 0 || dictPages > 0)
	if dictPages > 0 {
		m.EncodingStats = append(m.EncodingStats, format.PageEncodingStats{PageType: format.DictionaryPage, Encoding: format.Plain, Count: dictPages})
	}
	if plainData > 0 {
		m.EncodingStats = append(m.EncodingStats, format.PageEncodingStats{PageType: format.DataPageV2, Encoding: format.Plain, Count: plainData})
	}
	if dictData > 0 {
		m.EncodingStats = append(m.EncodingStats, format.PageEncodingStats{PageType: format.DataPageV2, Encoding: format.RLEDictionary, Count: dictData})
	}
	return out, res, nil
}

// nanBound is NaN as a bound of the column's float type.
func (c *column) nanBound() []byte {
	if c.phys == physFloat {
		return leBytes(nil, float32(math.NaN()))
	}
	return leBytes(nil, math.NaN())
}

// encodings lists a chunk's encodings, in their numeric order as
// parquet-go lists them.
func encodings(levels, dict, plain bool) []format.Encoding {
	var e []format.Encoding
	if plain {
		e = append(e, format.Plain)
	}
	if levels {
		e = append(e, format.RLE)
	}
	if dict {
		e = append(e, format.RLEDictionary)
	}
	return e
}

// page appends a page: its header, the levels and the values,
// compressed.
func (c *column) page(out []byte, h *format.PageHeader, levels, vals []byte, codec compress.Codec, compressed bool) ([]byte, error) {
	body := vals
	if compressed {
		var err error
		if c.comp, err = codec.Encode(c.comp[:0], vals); err != nil {
			return nil, fmt.Errorf("compressing a page: %w", err)
		}
		body = c.comp
	}
	h.UncompressedPageSize = int32(len(levels) + len(vals))
	h.CompressedPageSize = int32(len(levels) + len(body))
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return nil, err
	}
	c.uncompressed += int64(len(hdr)) + int64(h.UncompressedPageSize)
	out = append(out, hdr...)
	out = append(out, levels...)
	return append(out, body...), nil
}

// stats is a page's or chunk's statistics.
func stats(lo, hi []byte, ok bool, nulls int64) format.Statistics {
	s := format.Statistics{NullCount: nulls}
	if ok {
		s.MinValue, s.MaxValue = nonNil(lo), nonNil(hi)
	}
	return s
}

// nonNil makes an empty bound (the empty string) a bound that is
// written: the thrift encoder leaves out nil slices only.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// buildDict fills the dictionary and the indexes of the values, and
// returns how many values it holds before the one that would make it
// pass dictBytes.
func (c *column) buildDict() int {
	if c.ids == nil {
		c.ids = make(map[string]int32)
	}
	clear(c.ids)
	clear(c.dictVals)
	c.dictVals, c.idx = c.dictVals[:0], c.idx[:0]
	size := 0
	for k, s := range c.strs {
		id, ok := c.ids[s]
		if !ok {
			if size += 4 + len(s); size > dictBytes {
				return k
			}
			id = int32(len(c.dictVals))
			c.ids[s] = id
			c.dictVals = append(c.dictVals, s)
		}
		c.idx = append(c.idx, id)
	}
	return len(c.strs)
}

// cut is the end of the page that starts at row r and value v: about
// pageBytes of values, and none from value limit on. A NULL after the
// last value stays in the page.
func (c *column) cut(r, v, limit int) (int, int) {
	if c.phys == physBytes && v >= len(c.idx) {
		// PLAIN strings: as many as make pageBytes.
		size := 0
		for ; r < c.rows; r++ {
			if c.optional && c.defs[r] == 0 {
				continue
			}
			if v == limit || size >= pageBytes {
				break
			}
			size += 4 + len(c.strs[v])
			v++
		}
		return r, v
	}
	// Values of one size (a dictionary index counted as 4 bytes).
	w := 4
	if c.phys != physBytes {
		w = c.size()
	}
	n := min(limit-v, (pageBytes+w-1)/w)
	if !c.optional {
		return r + n, v + n
	}
	for ; r < c.rows; r++ {
		if c.defs[r] == 0 {
			continue
		}
		if n == 0 {
			break
		}
		n--
		v++
	}
	return r, v
}

// size is the bytes of a fixed-width value, PLAIN encoded (a BOOLEAN's
// eighth rounded up).
func (c *column) size() int {
	switch c.phys {
	case physBoolean:
		return 1
	case physInt32, physFloat:
		return 4
	case physInt64, physDouble:
		return 8
	}
	return c.width
}

// appendPlain appends values [v0, v1) PLAIN encoded.
func (c *column) appendPlain(dst []byte, v0, v1 int) []byte {
	switch c.phys {
	case physBoolean:
		var b byte
		for i, x := range c.bools[v0:v1] {
			if x {
				b |= 1 << (i % 8)
			}
			if i%8 == 7 {
				dst, b = append(dst, b), 0
			}
		}
		if (v1-v0)%8 != 0 {
			dst = append(dst, b)
		}
		return dst
	case physInt32:
		return appendLE(dst, c.i32[v0:v1])
	case physInt64:
		return appendLE(dst, c.i64[v0:v1])
	case physFloat:
		return appendLE(dst, c.f32[v0:v1])
	case physDouble:
		return appendLE(dst, c.f64[v0:v1])
	case physBytes:
		return appendPlainStrings(dst, c.strs[v0:v1])
	}
	return append(dst, c.fixed[v0*c.width:v1*c.width]...)
}

func appendPlainStrings(dst []byte, strs []string) []byte {
	for _, s := range strs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// littleEndian: the fixed-width values are copied as they lie in memory
// where that is Parquet's byte order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

type fixedWidth interface {
	int32 | int64 | float32 | float64
}

func appendLE[T fixedWidth](dst []byte, v []T) []byte {
	if len(v) == 0 {
		return dst
	}
	var zero T
	w := int(unsafe.Sizeof(zero))
	if littleEndian {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*w)...)
	}
	for _, x := range v {
		dst = leBytes(dst, x)
	}
	return dst
}

// leBytes appends x in Parquet's PLAIN byte order.
func leBytes[T fixedWidth](dst []byte, x T) []byte {
	switch x := any(x).(type) {
	case int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(x))
	case int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x))
	case float32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	case float64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
	}
	return dst
}
