package file

// Reading objects of object storage: path s3://bucket/key, or a glob of
// keys (s3://bucket/logs/*.csv, * not crossing a /). Objects whose name
// starts with . or _ are hidden (a sink's in-progress tails, _SUCCESS)
// and never read. An object is read sequentially through ranged GETs of
// readChunk bytes, readAhead of them in flight at once; a bulk format
// (parquet) reads its row groups' byte ranges itself, in parallel from
// its workers (ReadAt).
//
// Objects do not change once written, so a followed source (follow:
// true) reads every object once: at the end of the last one it lists the
// keys again every monitor_interval and reads those it has not read, in
// name order; a bulk format's dispatcher does the same (bulk.go). Its
// position names the object and offset (or row group) being read, and
// the objects read before it (done).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/pipeline/connector"
)

const (
	readChunk = 4 << 20
	readAhead = 4
)

// objects is the object storage a source reads.
type objects struct {
	conf   s3conf.Config
	loc    s3conf.Location
	logger *slog.Logger
	c      *minio.Core
	sizes  map[string]int64
}

func newObjects(pattern string, conf s3conf.Config) (*objects, error) {
	loc, err := s3conf.Parse(pattern)
	if err != nil {
		return nil, err
	}
	if loc.Key == "" || strings.HasSuffix(loc.Key, "/") {
		return nil, fmt.Errorf("%q names no object: name its objects with a glob such as %s", pattern, strings.TrimSuffix(pattern, "/")+"/*.csv")
	}
	if _, err := path.Match(loc.Key, ""); err != nil {
		return nil, fmt.Errorf("bad glob %q: %v", loc.Key, err)
	}
	if _, err := conf.Resolve(nil); err != nil {
		return nil, err
	}
	return &objects{conf: conf, loc: loc, sizes: map[string]int64{}}, nil
}

func (o *objects) connect(ctx context.Context) error {
	if o.c != nil {
		return nil
	}
	r, err := o.conf.Resolve(nil)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	o.c = c
	return nil
}

func (o *objects) do(ctx context.Context, what string, op func(ctx context.Context) error) error {
	return s3conf.Retry(ctx, o.logger, "file source: "+what, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		return op(ctx)
	})
}

func hiddenKey(key string) bool {
	b := path.Base(key)
	return strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_")
}

// list returns the names (s3://bucket/key) the path matches, in order.
func (o *objects) list(ctx context.Context) ([]string, error) {
	if err := o.connect(ctx); err != nil {
		return nil, err
	}
	pattern := o.loc.Key
	prefix := pattern
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		prefix = pattern[:i]
	}
	var out []string
	err := o.do(ctx, "list "+o.loc.String(), func(ctx context.Context) error {
		out = out[:0]
		for obj := range o.c.Client.ListObjects(ctx, o.loc.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if obj.Err != nil {
				return s3conf.Explain(obj.Err, o.loc.Bucket, prefix)
			}
			if ok, _ := path.Match(pattern, obj.Key); !ok || hiddenKey(obj.Key) {
				continue
			}
			name := s3conf.Location{Bucket: o.loc.Bucket, Key: obj.Key}.String()
			o.sizes[name] = obj.Size
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// open opens object name, of the size its listing gave.
func (o *objects) open(name string) (*object, error) {
	size, ok := o.sizes[name]
	if !ok {
		return nil, fmt.Errorf("%s: not listed", name)
	}
	key := strings.TrimPrefix(name, s3conf.Scheme+o.loc.Bucket+"/")
	ctx, cancel := context.WithCancel(context.Background())
	return &object{o: o, name: name, key: key, size: size, ctx: ctx, cancel: cancel}, nil
}

// object reads one object: Read sequentially with chunks fetched ahead,
// ReadAt with a ranged GET of its own. Read and Seek are called from one
// goroutine; ReadAt from any.
type object struct {
	o      *objects
	name   string
	key    string
	size   int64
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pos     int64
	next    int64 // offset of the next chunk to fetch
	pending []*chunk
}

type chunk struct {
	off  int64
	data []byte
	err  error
	done chan struct{}
}

func (f *object) Size() int64 { return f.size }

// get reads [off, off+len(p)) with a ranged GET, retried.
func (f *object) get(ctx context.Context, p []byte, off int64) error {
	return f.o.do(ctx, fmt.Sprintf("read %s at %d", f.name, off), func(ctx context.Context) error {
		opts := minio.GetObjectOptions{}
		if err := opts.SetRange(off, off+int64(len(p))-1); err != nil {
			return err
		}
		body, _, _, err := f.o.c.GetObject(ctx, f.o.loc.Bucket, f.key, opts)
		if err != nil {
			return s3conf.Explain(err, f.o.loc.Bucket, f.key)
		}
		defer body.Close()
		if _, err := io.ReadFull(body, p); err != nil {
			return s3conf.Explain(err, f.o.loc.Bucket, f.key)
		}
		return nil
	})
}

func (f *object) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.size-off))
	if err := f.get(f.ctx, p[:n], off); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill starts fetching chunks until readAhead are in flight.
func (f *object) fill() {
	for len(f.pending) < readAhead && f.next < f.size {
		c := &chunk{off: f.next, data: make([]byte, min(readChunk, f.size-f.next)), done: make(chan struct{})}
		f.next += int64(len(c.data))
		f.pending = append(f.pending, c)
		go func() {
			defer close(c.done)
			c.err = f.get(f.ctx, c.data, c.off)
		}()
	}
}

func (f *object) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pos >= f.size {
		return 0, io.EOF
	}
	f.fill()
	c := f.pending[0]
	<-c.done
	if c.err != nil {
		return 0, c.err
	}
	n := copy(p, c.data[f.pos-c.off:])
	f.pos += int64(n)
	if f.pos >= c.off+int64(len(c.data)) {
		f.pending = f.pending[1:]
		f.fill()
	}
	return n, nil
}

func (f *object) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		offset += f.pos
	case io.SeekEnd:
		offset += f.size
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	if offset != f.pos {
		// Chunks in flight finish into buffers nobody reads.
		f.pending = nil
		f.pos, f.next = offset, offset
	}
	return offset, nil
}

func (f *object) Close() error {
	f.cancel()
	return nil
}

// newObjectsFor is the object storage of cfg's path; nil for a file.
func newObjectsFor(cfg Config) (*objects, error) {
	if !s3conf.IsS3(cfg.Path) {
		return nil, nil
	}
	o, err := newObjects(cfg.Path, cfg.S3)
	if err != nil {
		return nil, connector.Errorf("path", "%v", err)
	}
	return o, nil
}

// openObjects is Open for a followed s3:// path: the objects there now,
// less those the restored position read whole, the one it was reading
// first.
func (s *Source) openObjects() error {
	p := s.restore
	if p != nil && p.V != positionVersion {
		return fmt.Errorf("the checkpoint position was taken reading another format or without follow; set it again, or reset the pipeline's state (etld state reset) to start afresh")
	}
	files, err := s.match()
	if err != nil {
		return err
	}
	s.files = []string{}
	s.cur = -1
	var offset, line int64 = 0, 1
	if p != nil {
		s.done = slices.Clone(p.Done)
		if p.File != "" {
			if !slices.Contains(files, p.File) {
				return fmt.Errorf("checkpoint position is in %s, which is gone or no longer matches %q", p.File, s.pattern)
			}
			s.files = append(s.files, p.File)
			offset, line = p.Offset, p.Line
		}
	}
	for _, f := range files {
		if !slices.Contains(s.done, f) && !slices.Contains(s.files, f) {
			s.files = append(s.files, f)
		}
	}
	if err := s.measure(); err != nil {
		return err
	}
	if len(s.files) == 0 {
		return nil
	}
	return s.openFile(0, offset, line)
}

// followObjects lists the objects again and queues those not read yet.
func (s *Source) followObjects(ctx context.Context) error {
	files, err := s.obj.list(ctx)
	if err != nil {
		return err
	}
	n := len(s.files)
	for _, f := range files {
		if !slices.Contains(s.done, f) && !slices.Contains(s.files, f) {
			s.files = append(s.files, f)
		}
	}
	if len(s.files) == n {
		return nil
	}
	return s.measure()
}

// waitObjects waits monitor_interval, or less when ctx ends (the runtime
// ends a Read to take a checkpoint: no error sticks).
func (s *Source) waitObjects(ctx context.Context) error {
	t := time.NewTimer(s.interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// moreObjects lists the objects again and returns those not read yet
// and not in files, in name order (a followed bulk format's dispatcher).
func (s *Source) moreObjects(ctx context.Context, files []string) ([]string, error) {
	all, err := s.obj.list(ctx)
	if err != nil {
		return nil, err
	}
	var more []string
	for _, f := range all {
		if !slices.Contains(s.done, f) && !slices.Contains(files, f) {
			more = append(more, f)
		}
	}
	return more, nil
}

// openBulkObjects is openBulk for a followed s3:// path: the objects
// there now, less those the restored position read whole, the one it
// was reading first.
func (s *Source) openBulkObjects() error {
	files, err := s.match()
	if err != nil {
		return err
	}
	s.files = []string{}
	if p := s.restore; p != nil {
		s.done = slices.Clone(p.Done)
		if p.File != "" {
			if !slices.Contains(files, p.File) {
				return fmt.Errorf("checkpoint position is in %s, which is gone or no longer matches %q", p.File, s.pattern)
			}
			s.files = append(s.files, p.File)
		}
	}
	for _, f := range files {
		if !slices.Contains(s.done, f) && !slices.Contains(s.files, f) {
			s.files = append(s.files, f)
		}
	}
	return s.measure()
}
