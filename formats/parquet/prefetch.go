package parquet

import (
	"io"
	"slices"
	"sync"
)

// A row group's column chunks are read whole, each with one ReadAt,
// before parquet-go decodes their pages from memory. Through an object
// store every ReadAt is a ranged GET with a round trip of its own, and
// parquet-go reads a chunk a buffer at a time: a 24 MB object took two
// minutes in reads of a few KiB. Arrow's readers pre-buffer column chunks
// for the same reason. The cost is a row group's chunks of the columns
// read held in memory while it is decoded (one row group per worker).

// fetchers bounds the column chunks of one row group fetched at once.
const fetchers = 4

// chunkCache is the io.ReaderAt parquet-go reads a file through: a read
// that falls inside a fetched chunk is served from it, any other from
// the file. Workers reading other row groups of the file add and remove
// their chunks concurrently.
type chunkCache struct {
	r      io.ReaderAt
	mu     sync.RWMutex
	chunks []*fetched
}

// fetched is the bytes of a file from off on.
type fetched struct {
	off  int64
	data []byte
}

func (c *chunkCache) ReadAt(p []byte, off int64) (int, error) {
	c.mu.RLock()
	for _, f := range c.chunks {
		if off >= f.off && off+int64(len(p)) <= f.off+int64(len(f.data)) {
			n := copy(p, f.data[off-f.off:])
			c.mu.RUnlock()
			return n, nil
		}
	}
	c.mu.RUnlock()
	return c.r.ReadAt(p, off)
}

// add makes chunks visible to reads.
func (c *chunkCache) add(chunks []*fetched) {
	c.mu.Lock()
	c.chunks = append(c.chunks, chunks...)
	c.mu.Unlock()
}

// remove forgets chunks, added before.
func (c *chunkCache) remove(chunks []*fetched) {
	c.mu.Lock()
	c.chunks = slices.DeleteFunc(c.chunks, func(f *fetched) bool { return slices.Contains(chunks, f) })
	c.mu.Unlock()
}

// fetch reads the byte ranges [starts[i], ends[i]) of the file, up to
// fetchers at once. The first error wins.
func (c *chunkCache) fetch(starts, ends []int64) ([]*fetched, error) {
	out := make([]*fetched, len(starts))
	errs := make([]error, len(starts))
	sem := make(chan struct{}, fetchers)
	var wg sync.WaitGroup
	for i := range starts {
		out[i] = &fetched{off: starts[i], data: make([]byte, ends[i]-starts[i])}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := c.r.ReadAt(out[i].data, out[i].off)
			if n < len(out[i].data) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
