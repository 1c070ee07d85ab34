package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Row groups appended to a file. A group's column chunks are encoded in
// memory and appended to the output, their metadata kept at the offsets
// where they landed: a flat column's by column.encode, the nested ones by
// parquet-go, which writes them as a file of their own whose chunks are
// copied out with every offset moved. The footer lists the groups kept,
// and the metadata of those written so far is what a checkpoint needs to
// go on writing the file (resumeState): parquet-go keeps a file's
// metadata to itself until it closes it, so a file it wrote whole could
// not be resumed after a crash.

// magic starts and ends every Parquet file.
const magic = "PAR1"

// fileMeta is what every footer of an encoder's files repeats.
type fileMeta struct {
	schema    thrift.Slice[format.SchemaElement]
	orders    thrift.Slice[format.ColumnOrder]
	createdBy string
}

// splicedGroup is a row group in the output: its metadata at its offsets
// there, and its page index, written before the footer.
type splicedGroup struct {
	RowGroup      format.RowGroup                  `thrift:"1,required"`
	ColumnIndexes thrift.Slice[format.ColumnIndex] `thrift:"2,required"`
	OffsetIndexes thrift.Slice[format.OffsetIndex] `thrift:"3,required"`
}

// resumeState is a writer's checkpoint: the output's length, the row
// groups in it and the length of the last (bulkWriter.last).
type resumeState struct {
	Version int32                      `thrift:"1,required"`
	Size    int64                      `thrift:"2,required"`
	Groups  thrift.Slice[splicedGroup] `thrift:"3,required"`
	Last    int64                      `thrift:"4,required"`
}

const resumeVersion = 1

func decodeResume(state []byte, leaves int) (resumeState, error) {
	var st resumeState
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), state, &st); err != nil {
		return st, fmt.Errorf("parquet writer state: %w", err)
	}
	if st.Version != resumeVersion {
		return st, fmt.Errorf("parquet writer state: version %d, want %d", st.Version, resumeVersion)
	}
	end := int64(len(magic))
	for i, g := range st.Groups {
		if len(g.RowGroup.Columns) != leaves || len(g.ColumnIndexes) != leaves || len(g.OffsetIndexes) != leaves {
			return st, fmt.Errorf("parquet writer state: row group %d has %d columns, the schema %d", i, len(g.RowGroup.Columns), leaves)
		}
		if g.RowGroup.FileOffset != end {
			return st, fmt.Errorf("parquet writer state: row group %d at offset %d, want %d", i, g.RowGroup.FileOffset, end)
		}
		end += g.RowGroup.TotalCompressedSize
	}
	if st.Size != end {
		return st, fmt.Errorf("parquet writer state: row groups end at %d, the file at %d", end, st.Size)
	}
	if st.Last < 0 || st.Last > st.Size-int64(len(magic)) {
		return st, fmt.Errorf("parquet writer state: a last row group of %d bytes in %d", st.Last, st.Size)
	}
	return st, nil
}

func encodeResume(size, last int64, groups []splicedGroup) ([]byte, error) {
	return thrift.Marshal(new(thrift.CompactProtocol), &resumeState{Version: resumeVersion, Size: size, Last: last, Groups: groups})
}

// readFooter decodes the footer of the Parquet file in buf.
func readFooter(buf []byte) (*format.FileMetaData, error) {
	n := len(buf)
	if n < 2*len(magic)+4 || string(buf[:4]) != magic || string(buf[n-4:]) != magic {
		return nil, errors.New("not a Parquet file")
	}
	size := int(binary.LittleEndian.Uint32(buf[n-8:]))
	if size > n-12 {
		return nil, fmt.Errorf("footer of %d bytes in a file of %d", size, n)
	}
	md := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[n-8-size:n-8], md); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	return md, nil
}

// nestedChunks takes the one row group of the Parquet file in buf
// apart: each column chunk's bytes, and its metadata and page index at
// the offsets of buf.
func nestedChunks(buf []byte) ([]srcChunk, error) {
	md, err := readFooter(buf)
	if err != nil {
		return nil, err
	}
	if len(md.RowGroups) != 1 {
		return nil, fmt.Errorf("%d row groups, want 1", len(md.RowGroups))
	}
	rg := &md.RowGroups[0]
	out := make([]srcChunk, len(rg.Columns))
	for i := range rg.Columns {
		c := &rg.Columns[i]
		m := &c.MetaData
		start := m.DataPageOffset
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
			start = m.DictionaryPageOffset
		}
		if start < int64(len(magic)) || m.TotalCompressedSize < 0 || start+m.TotalCompressedSize > int64(len(buf)) {
			return nil, fmt.Errorf("column chunk %d: %d bytes at %d in %d", i, m.TotalCompressedSize, start, len(buf))
		}
		s := &out[i]
		s.data = buf[start : start+m.TotalCompressedSize]
		s.start = start
		s.out.chunk = *c
		if err := decodeAt(buf, c.ColumnIndexOffset, int64(c.ColumnIndexLength), &s.out.ci); err != nil {
			return nil, fmt.Errorf("column index %d: %w", i, err)
		}
		if err := decodeAt(buf, c.OffsetIndexOffset, int64(c.OffsetIndexLength), &s.out.oi); err != nil {
			return nil, fmt.Errorf("offset index %d: %w", i, err)
		}
	}
	return out, nil
}

// srcChunk is a column chunk of a file parquet-go wrote: its bytes,
// which start at offset start of that file.
type srcChunk struct {
	data  []byte
	start int64
	out   chunkOut
}

// moved is the chunk's metadata and page index with its offsets moved
// to to, where its bytes land in the output.
func (s *srcChunk) moved(to int64) chunkOut {
	o := s.out
	delta := to - s.start
	c := &o.chunk
	m := &c.MetaData
	m.DataPageOffset += delta
	if m.DictionaryPageOffset > 0 {
		m.DictionaryPageOffset += delta
	}
	if m.IndexPageOffset > 0 {
		m.IndexPageOffset += delta
	}
	if c.FileOffset > 0 {
		c.FileOffset += delta
	}
	c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
	c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0
	o.oi.PageLocations = slices.Clone(o.oi.PageLocations)
	for j := range o.oi.PageLocations {
		o.oi.PageLocations[j].Offset += delta
	}
	return o
}

// decodeAt decodes the thrift struct of n bytes at off in buf into v.
func decodeAt(buf []byte, off, n int64, v any) error {
	if off <= 0 || n <= 0 || off > int64(len(buf)) || n > int64(len(buf))-off {
		return fmt.Errorf("%d bytes at %d of %d", n, off, len(buf))
	}
	return thrift.Unmarshal(new(thrift.CompactProtocol), buf[off:off+n], v)
}

// footer is the end of a file whose row groups end at offset: their page
// indexes, the file's metadata, its length and the magic.
func footer(offset int64, groups []splicedGroup, meta fileMeta) ([]byte, error) {
	var buf bytes.Buffer
	enc := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf))
	rgs := make([]format.RowGroup, len(groups))
	var rows int64
	for i, g := range groups {
		rgs[i] = g.RowGroup
		rgs[i].Columns = slices.Clone(g.RowGroup.Columns)
		rgs[i].Ordinal = int16(i)
		rows += g.RowGroup.NumRows
	}
	// Column indexes, then offset indexes, as parquet-go lays them out.
	for i, g := range groups {
		for j := range g.ColumnIndexes {
			c := &rgs[i].Columns[j]
			start := buf.Len()
			if err := enc.Encode(&g.ColumnIndexes[j]); err != nil {
				return nil, err
			}
			c.ColumnIndexOffset, c.ColumnIndexLength = offset+int64(start), int32(buf.Len()-start)
		}
	}
	for i, g := range groups {
		for j := range g.OffsetIndexes {
			c := &rgs[i].Columns[j]
			start := buf.Len()
			if err := enc.Encode(&g.OffsetIndexes[j]); err != nil {
				return nil, err
			}
			c.OffsetIndexOffset, c.OffsetIndexLength = offset+int64(start), int32(buf.Len()-start)
		}
	}
	md := format.FileMetaData{
		Version:      2,
		Schema:       meta.schema,
		NumRows:      rows,
		RowGroups:    rgs,
		CreatedBy:    meta.createdBy,
		ColumnOrders: meta.orders,
	}
	start := buf.Len()
	if err := enc.Encode(&md); err != nil {
		return nil, err
	}
	out := binary.LittleEndian.AppendUint32(buf.Bytes(), uint32(buf.Len()-start))
	return append(out, magic...), nil
}

// writeAll writes b to w.
func writeAll(w io.Writer, b []byte) error {
	_, err := w.Write(b)
	return err
}
