package file

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A directory of part files: the file sink's output when its format is a
// bulk format (parquet) or the rows are partitioned (partition_by), as
// Flink's filesystem sink writes it. path names the directory, or a
// prefix of object storage (s3://bucket/prefix, any format: s3store.go).
//
// Each part is written under a hidden in-progress name
// (.part-00007.parquet.inprogress) in its partition's directory, and
// published by a rename to its final name (part-00007.parquet) once it is
// complete and a checkpoint covers it: no reader ever sees a part half
// written under its final name, and a kill -9 leaves none. A part is
// complete when it reaches rolling.file_size bytes (checked as a row
// group ends, for parquet), when rolling.rollover_interval has passed
// since it was opened, when its partition is complete, and at the end of
// the input; Close completes every part of a run without a state
// directory.
//
// Parts are numbered in the order their first row came, one sequence for
// the whole output; a part ends after the same rows whatever the timing,
// except when the rollover interval or a process-time commit ends it.
// A run restored from a checkpoint so makes the same files, byte for
// byte, as a run without a crash. The checkpoint names every open part
// with its length and what its writer needs to go on (a Parquet writer's
// row groups); the rows such a writer holds in memory (the row group
// being filled) are written to a hidden spill file beside the part at the
// checkpoint, in the format itself, and given to the writer again by a
// restore. Open cuts an open part back to the checkpoint's length and
// deletes every other in-progress file.
//
// The existing output is treated as a single file is: a fresh start
// removes the part files and success files under path in a run without a
// state directory (it logs it), refuses them in a run with one unless
// overwrite: true, and keeps them with append: true, numbering new parts
// after them.

// Rolling is the rolling option: when a part file is complete.
type Rolling struct {
	// FileSize ends a part once it holds this many bytes: 128MiB by
	// default, as Flink's sink.rolling-policy.file-size.
	FileSize string `yaml:"file_size"`
	// RolloverInterval ends a part this long after its first row,
	// checked at checkpoints; none by default, so that the files depend
	// on the rows alone.
	RolloverInterval time.Duration `yaml:"rollover_interval"`
}

const defaultFileSize = 128 << 20

// DirSink writes a directory of part files. Its methods are called from
// one goroutine; Bytes from any.
type DirSink struct {
	name      string
	path      string
	format    connector.FormatSpec
	formats   *connector.Registry
	bulk      bool
	part      *partitioner // nil without partition_by
	rollBytes int64
	rollEvery time.Duration
	append    bool
	overwrite bool
	resumable bool
	logger    *slog.Logger
	now       func() time.Time

	enc connector.BulkEncoder
	// dec reads spills back (bulk formats); data are the input columns
	// the files hold (all but the partition columns), width the input's.
	dec   connector.BulkDecoder
	data  []int
	width int
	ext   string
	// keep: parts keep the rows their writer holds, for spills (a bulk
	// format in a run with a state directory).
	keep bool
	// slab backs the rows of the file schema made from input rows.
	slab []row.Value

	st      partStore
	seq     int64
	open    map[string]*openPart
	pending []partRef
	// drop are spills no part needs any more, deleted once a checkpoint
	// that no longer names them is committed.
	drop       []string
	partitions map[string]int64
	wm         int64
	finished   bool
	restored   *dirState
	// s3 is the object storage of an s3:// path; nil on disk.
	s3      *s3Target
	started bool
	closed  bool
	written atomic.Int64
}

// openPart is a part being written.
type openPart struct {
	ref    partRef
	f      partFile
	w      connector.BulkWriter
	opened time.Time
	// recent holds the rows written since the last spill that the writer
	// may still hold; spills the earlier ones, oldest first.
	recent   []row.Row
	spills   []spillRef
	spillSeq int
	dirty    bool
	// keeps are the hidden files the store's last checkpoint of the part
	// needs (an object storage tail), dropped once a later one does not.
	keeps []string
}

// newDir builds a directory sink; New calls it for a bulk format or
// partition_by.
func newDir(cfg Config, env connector.SinkEnv, format connector.FormatSpec, logger *slog.Logger) (*DirSink, error) {
	s := &DirSink{
		name: env.Name, path: strings.TrimSuffix(cfg.Path, "/"), format: format, formats: env.Formats,
		bulk: env.Formats.Bulk(format), append: cfg.Append, overwrite: cfg.Overwrite,
		logger: logger, now: time.Now, rollEvery: cfg.Rolling.RolloverInterval,
	}
	var errs []error
	if s.path == "" {
		s.path = "."
	}
	if s3conf.IsS3(cfg.Path) {
		t, err := newS3Target(s.path, cfg.S3)
		if err != nil {
			errs = append(errs, connector.Errorf("path", "%v", err))
		}
		s.s3 = t
	} else if cfg.S3 != (s3conf.Config{}) {
		errs = append(errs, connector.Errorf("s3", "applies to an s3://bucket/prefix path"))
	}
	if env.Formats.Changelog(format) && s.s3 == nil {
		errs = append(errs, connector.Errorf("format", "%s writes row kinds, and a directory of part files takes inserts only", format.Type))
	}
	if len(cfg.PartitionBy) > 0 {
		p, err := newPartitioner(cfg.PartitionBy, cfg.PartitionCommit)
		errs = append(errs, err)
		s.part = p
	} else if cfg.PartitionCommit != (PartitionCommit{}) {
		errs = append(errs, connector.Errorf("partition_commit", "applies to partitioned output: set partition_by"))
	}
	size, err := parseSize(cfg.Rolling.FileSize)
	if err != nil {
		errs = append(errs, connector.Errorf("rolling.file_size", "%v", err))
	}
	s.rollBytes = size
	if cfg.Rolling.RolloverInterval < 0 {
		errs = append(errs, connector.Errorf("rolling.rollover_interval", "must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// parseSize reads a size in bytes: 134217728, 128MiB, 64MB, 1GiB.
func parseSize(s string) (int64, error) {
	if s == "" {
		return defaultFileSize, nil
	}
	units := []struct {
		suffix string
		mul    int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}, {"", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(strings.TrimSpace(s), u.suffix)
		if !ok {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(strings.TrimSpace(num), "%d", &n); err != nil || n <= 0 || n > math.MaxInt64/u.mul || fmt.Sprint(n) != strings.TrimSpace(num) {
			break
		}
		return n * u.mul, nil
	}
	return 0, fmt.Errorf("want a size such as 128MiB or 1GiB, got %q", s)
}

// Capabilities: append only; a part file holds rows, not changes.
func (s *DirSink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true}
}

// Bind builds the format's encoder over the columns the files hold.
func (s *DirSink) Bind(in connector.SinkInput) error {
	if in.Mode != connector.Append {
		return s.bindErrorf("cannot run in %s mode: a directory of part files takes append", in.Mode)
	}
	s.width = in.Schema.Len()
	s.data = nil
	if s.part != nil {
		if err := s.part.bind(in.Schema); err != nil {
			return err
		}
	}
	var fields []row.Field
	for i, f := range in.Schema.Fields {
		if s.part != nil && slices.Contains(s.part.cols, i) {
			continue
		}
		s.data = append(s.data, i)
		fields = append(fields, f)
	}
	schema := row.NewSchema(fields...)
	if s.bulk {
		enc, err := s.formats.NewBulkEncoder(s.format, schema)
		if err != nil {
			return err
		}
		dec, err := s.formats.NewBulkDecoder(s.format, schema)
		if err != nil {
			return err
		}
		s.enc, s.dec, s.ext = enc, dec, enc.Ext()
		return nil
	}
	enc, err := s.formats.NewEncoder(s.format, schema)
	if err != nil {
		return err
	}
	s.ext = "." + strings.TrimSuffix(s.format.Type, "-json")
	if strings.HasSuffix(s.format.Type, "json") {
		s.ext = ".json"
	}
	s.enc = recordFiles{enc: enc, ext: s.ext}
	return nil
}

// SetRun learns whether the run keeps state (connector.RunAware).
func (s *DirSink) SetRun(info connector.RunInfo) { s.resumable = info.Resumable }

// CopiesRows implements connector.RowCopier: a record format encodes
// each row at once; a bulk format's writer may keep rows until their row
// group is full (one that copies them says so as a RowCopier too), and
// the parts of a run that checkpoints keep those their writer holds
// (keep).
func (s *DirSink) CopiesRows() bool {
	if !s.bulk {
		return true
	}
	c, ok := s.enc.(connector.RowCopier)
	return ok && c.CopiesRows() && !s.keep
}

// CopiesText implements connector.TextCopier: a record format encodes
// each row at once; a bulk format's writer may keep the values of rows
// it copied until their row group is full.
func (s *DirSink) CopiesText() bool { return !s.bulk }

// Open prepares the directory: after a Restore it resumes the open parts
// of the checkpoint and deletes the other in-progress files; on a fresh
// start it deals with the existing output (see the package doc).
func (s *DirSink) Open(ctx context.Context) error {
	if s.enc == nil {
		return s.errorf("open before bind")
	}
	if s.started || s.closed {
		return s.errorf("opened twice")
	}
	if s.s3 != nil {
		st, err := s.s3.open(ctx, s.logger)
		if err != nil {
			return err
		}
		s.st = st
	} else {
		if st, err := os.Stat(s.path); err == nil && !st.IsDir() {
			return s.errorf("is a file, and a %s sink writes a directory of part files there", s.kind())
		}
		s.st = newDiskStore(s.path)
	}
	s.started = true
	s.open = map[string]*openPart{}
	s.partitions = map[string]int64{}
	s.wm = math.MinInt64
	s.keep = s.bulk && s.resumable
	if s.restored != nil {
		return s.recover(ctx, *s.restored)
	}
	return s.fresh(ctx)
}

// kind names what makes the sink write a directory, for errors.
func (s *DirSink) kind() string {
	if s.bulk {
		return s.format.Type
	}
	return "partitioned"
}

// Write hands each row to its partition's open part, opening one when
// there is none, and ends a part that reached rolling.file_size.
func (s *DirSink) Write(ctx context.Context, b *row.Batch) error {
	if !s.started || s.closed {
		return s.errorf("write before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, c := range b.Changes {
		if c.Kind != row.Insert {
			return s.errorf("change %d of the batch is %s; a directory of part files takes inserts only", i, c.Kind)
		}
		var key []byte
		if s.part != nil {
			key = s.part.dir(c.Row)
		}
		// The lookup by the buffer's bytes copies nothing: a string of
		// the directory is made only for a new part.
		p := s.open[string(key)]
		if p == nil {
			var err error
			if p, err = s.openPart(ctx, string(key)); err != nil {
				return err
			}
		}
		r := s.fileRow(c.Row)
		if err := p.w.Write(r); err != nil {
			return s.errorf("%s, change %d of the batch, %s: %w", p.ref.inProgress(s.ext), i, shorten(c.String()), err)
		}
		p.dirty = true
		if s.keep {
			p.recent = append(p.recent, r)
			if len(p.recent)&1023 == 0 {
				p.trim()
			}
		}
		if s.rollBytes > 0 && p.w.Size() >= s.rollBytes {
			if err := s.closePart(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileRow is r with the columns the files hold: r itself without
// partitions, else a row carved from a slab (a bulk writer keeps it).
func (s *DirSink) fileRow(r row.Row) row.Row {
	if len(s.data) == s.width {
		return r
	}
	n := len(s.data)
	if len(s.slab)+n > cap(s.slab) {
		s.slab = make([]row.Value, 0, 1024*n)
	}
	out := s.slab[len(s.slab) : len(s.slab)+n : len(s.slab)+n]
	s.slab = s.slab[:len(s.slab)+n]
	for j, i := range s.data {
		out[j] = r[i]
	}
	return out
}

// trim drops the recent rows the writer no longer holds.
func (p *openPart) trim() {
	if held := p.w.Held(); len(p.recent) > held {
		p.recent = slices.Clone(p.recent[len(p.recent)-held:])
	}
}

// openPart starts the next part in partition directory dir.
func (s *DirSink) openPart(ctx context.Context, dir string) (*openPart, error) {
	if s.part != nil {
		if _, ok := s.partitions[dir]; !ok {
			at, err := s.partitionTime(dir)
			if err != nil {
				return nil, s.errorf("%w", err)
			}
			s.partitions[dir] = at
		}
	}
	ref := partRef{Dir: dir, Num: s.seq}
	s.seq++
	f, err := s.st.createPart(ctx, ref.inProgress(s.ext))
	if err != nil {
		return nil, err
	}
	w, err := s.enc.Create(f)
	if err != nil {
		f.Close()
		return nil, s.errorf("%s: %w", ref.inProgress(s.ext), err)
	}
	p := &openPart{ref: ref, f: f, w: w, opened: s.now()}
	s.open[dir] = p
	return p, nil
}

// partitionTime is what decides when a new partition is complete: the
// time its values name (partition-time) or now (process-time), in µs.
func (s *DirSink) partitionTime(dir string) (int64, error) {
	if s.part.trigger == triggerPartitionTime {
		return s.part.time(dir)
	}
	return s.now().UnixMicro(), nil
}

// closePart completes a part: its writer ends the file, which is synced
// and waits for a checkpoint's commit to be published.
func (s *DirSink) closePart(ctx context.Context, p *openPart) error {
	delete(s.open, p.ref.Dir)
	err := p.w.Close()
	upload := ""
	if err == nil {
		s.written.Add(p.w.Size())
		upload, err = s.st.finish(ctx, p.f)
	} else {
		err = errors.Join(err, p.f.Close())
	}
	for _, sp := range p.spills {
		s.drop = append(s.drop, sp.Name)
	}
	s.drop = append(s.drop, p.keeps...)
	if err != nil {
		return s.errorf("%s: %w", p.ref.inProgress(s.ext), err)
	}
	ref := p.ref
	ref.Upload = upload
	s.pending = append(s.pending, ref)
	return nil
}

// Flush writes out what the open parts' writers encoded and syncs it. A
// bulk writer's rows in memory are made durable by the next checkpoint
// (a spill) or when their part is complete.
func (s *DirSink) Flush(ctx context.Context) error {
	if !s.started || s.closed {
		return s.errorf("flush before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.flush()
}

func (s *DirSink) flush() error {
	for _, dir := range slices.Sorted(maps.Keys(s.open)) {
		p := s.open[dir]
		if !p.dirty {
			continue
		}
		if err := p.w.Flush(); err != nil {
			return s.errorf("%s: %w", p.ref.inProgress(s.ext), err)
		}
		if err := p.f.Sync(); err != nil {
			return s.errorf("%s: %w", p.ref.inProgress(s.ext), err)
		}
		p.dirty = false
	}
	return s.st.sync()
}

// Watermark learns how far event time has come
// (connector.WatermarkSink): partitions before it are complete.
func (s *DirSink) Watermark(ctx context.Context, wm int64) error {
	s.wm = max(s.wm, wm)
	return nil
}

// Finish is told that the input has ended for good
// (connector.Finisher): the next checkpoint completes every part and
// commits every partition.
func (s *DirSink) Finish(ctx context.Context) error {
	s.finished = true
	return nil
}

// Bytes is the number of bytes of the parts completed so far
// (connector.Meter).
func (s *DirSink) Bytes() int64 { return s.written.Load() }

// Close completes and publishes every part in a run without a state
// directory, and commits the partitions that are complete; a run with
// one leaves its open parts for the next run to resume from its
// checkpoint. It is safe after a failed Open and twice.
func (s *DirSink) Close(ctx context.Context) error {
	if s.closed || !s.started {
		s.closed = true
		return nil
	}
	s.closed = true
	if s.resumable {
		var err error
		for _, p := range s.open {
			p.w.Abort()
			err = errors.Join(err, p.f.Close())
		}
		return err
	}
	var err error
	for _, dir := range slices.Sorted(maps.Keys(s.open)) {
		err = errors.Join(err, s.closePart(ctx, s.open[dir]))
	}
	st := s.state()
	if err := errors.Join(err, s.st.sync()); err != nil {
		return err
	}
	return s.commit(ctx, st)
}

// WriteFiles implements connector.FileWriter: the directory's files and
// an in-progress part's name.
func (s *DirSink) WriteFiles() []string {
	return []string{s.path + "/*", s.path + "/" + partRef{Num: 0}.inProgress(".parquet")}
}

func (s *DirSink) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{s.path}, args...)...)
}

func (s *DirSink) bindErrorf(format string, args ...any) error {
	return fmt.Errorf("sink %q (%s): "+format, append([]any{s.name, s.path}, args...)...)
}

var (
	_ connector.Sink            = (*DirSink)(nil)
	_ connector.SinkSnapshotter = (*DirSink)(nil)
	_ connector.Committer       = (*DirSink)(nil)
	_ connector.Meter           = (*DirSink)(nil)
	_ connector.RunAware        = (*DirSink)(nil)
	_ connector.FileWriter      = (*DirSink)(nil)
	_ connector.RowCopier       = (*DirSink)(nil)
	_ connector.TextCopier      = (*DirSink)(nil)
	_ connector.WatermarkSink   = (*DirSink)(nil)
	_ connector.Finisher        = (*DirSink)(nil)
)
