package file

import (
	"fmt"
	"io"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// recordFiles writes part files of a record format (csv, json) through
// the BulkEncoder contract, so that a directory sink treats every format
// alike: a part of records holds no rows back once flushed, and resumes
// by writing on after the bytes a checkpoint counted.
type recordFiles struct {
	enc connector.Encoder
	ext string
}

func (r recordFiles) Ext() string { return r.ext }

func (r recordFiles) Create(w io.Writer) (connector.BulkWriter, error) {
	rw := &recordWriter{enc: r.enc, out: w}
	if h, ok := r.enc.(connector.HeaderEncoder); ok {
		rw.buf = h.AppendHeader(rw.buf)
	}
	return rw, nil
}

func (r recordFiles) Resume(w io.Writer, state []byte) (connector.BulkWriter, error) {
	var size int64
	if _, err := fmt.Sscan(string(state), &size); err != nil {
		return nil, fmt.Errorf("record part state %q: %w", state, err)
	}
	return &recordWriter{enc: r.enc, out: w, written: size}, nil
}

// recordWriter encodes rows into a buffer written out when it is full and
// at Flush.
type recordWriter struct {
	enc     connector.Encoder
	out     io.Writer
	buf     []byte
	written int64
	err     error
}

func (w *recordWriter) Write(r row.Row) error {
	if w.err != nil {
		return w.err
	}
	n := len(w.buf)
	var err error
	if w.buf, err = w.enc.Encode(w.buf, row.Insert, r); err != nil {
		w.buf = w.buf[:n]
		return err
	}
	if len(w.buf) >= bufferSize {
		return w.Flush()
	}
	return nil
}

func (w *recordWriter) Flush() error {
	if w.err != nil || len(w.buf) == 0 {
		return w.err
	}
	n, err := w.out.Write(w.buf)
	w.written += int64(n)
	w.buf = w.buf[:0]
	w.err = err
	return err
}

func (w *recordWriter) Held() int { return 0 }

// Size counts the buffered bytes too: the rows decide it, not when the
// buffer was written out.
func (w *recordWriter) Size() int64 { return w.written + int64(len(w.buf)) }

func (w *recordWriter) Checkpoint() ([]byte, int64, error) {
	return []byte(fmt.Sprint(w.written)), w.written, w.err
}

func (w *recordWriter) Close() error { return w.Flush() }

func (w *recordWriter) Abort() { w.buf = nil }
