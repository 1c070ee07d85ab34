// Package file is the file source: it reads a file, or every file a glob
// matches in name order, record by record through a format's decoder. It is
// bounded: it ends at the end of the last file, unless it follows them.
//
// Options (Flink's filesystem connector's name in brackets):
//
//   - path [path]: a file, or a glob of files; or s3://bucket/key, a key
//     or a glob of keys of object storage (s3input.go).
//   - s3: with an s3:// path, the endpoint, region and credentials
//     (internal/s3conf); the AWS environment variables by default.
//   - format [format]: csv by default; raw makes one STRING column of each
//     line, for logs. A changelog format (debezium-json, canal-json,
//     maxwell-json, ogg-json) makes the source updating. A bulk format
//     (parquet) is read a row group at a time, row groups in parallel,
//     only the columns the plan needs (bulk.go).
//   - follow: tail -F: the source never ends; it waits for new lines,
//     picks up new files the glob matches, survives rotation (a new file
//     under the name: the old one is read on, first, until it has been
//     quiet for rotate_wait) and
//     truncation (read again from the start). A last line is read once its
//     newline arrives. See follow.go.
//   - monitor_interval [source.monitor-interval]: how often a followed
//     source looks for new data and files when it has none; 200ms by
//     default.
//   - rotate_wait: how long a followed file that was rotated away
//     (renamed, or deleted while open) is read on after data last arrived
//     in it, for the writer that still holds it; 5s by default, as Fluent
//     Bit's tail input. Then its last line is read even without a newline
//     and the file is closed.
//   - rotated_path: a glob of the names rotated files get (app.log.*, or
//     old/app.log.* for another directory). A restart finds a file of
//     the checkpoint that path no longer matches among them by its
//     identity, and reads on from its offset; other files there are not
//     read. Needed only when path does not match the rotated names.
//   - max_record_bytes: for a format whose records may span lines (csv:
//     quoted line breaks), how far from its start a record may reach
//     while a quote is open; 1 MiB by default. A quote still open then,
//     or at the end of the file, is a stray one: the record ends with the
//     line where it opened and goes to on_error as a bad record at its
//     line, and reading goes on with the next line. A followed file's
//     open quote waits for more data up to the bound.
//
// A line longer than 64 MiB (the read buffer's bound), in any format, is
// one bad record at its line holding its first 4 KiB, and reading goes on
// with the next line (records.go, skipLong).
//
// The position (for checkpoints) is the byte offset and line of the next
// record; with follow, of every file, with the file's identity (device,
// inode) and a fingerprint of its first bytes, so that a restore after a
// rotation does not resume at a stale offset in a new file, and finds
// the rotated file under its new name (in path or rotated_path) to read
// the rest of it. A file of the checkpoint that is found nowhere is
// logged as a loss, with the bytes it had unread at the checkpoint.
package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the source's options.
type Config struct {
	// Path is a file, or a glob (data/*.csv) whose matches are read one
	// after the other in name order. A relative path is relative to the
	// working directory of etld.
	Path string `yaml:"path,required"`
	// Format is csv when not given.
	Format connector.FormatSpec `yaml:"format"`
	// Follow keeps reading as the files grow, as tail -F: the source is
	// unbounded.
	Follow bool `yaml:"follow"`
	// MonitorInterval is how often a followed source looks for changes
	// when it has nothing to read.
	MonitorInterval time.Duration `yaml:"monitor_interval"`
	// RotateWait is how long a followed file that was rotated away
	// (renamed, or deleted while open) is read on after data last arrived
	// in it; 5s when not given. A pointer, so that 0 is refused.
	RotateWait *time.Duration `yaml:"rotate_wait"`
	// RotatedPath is a glob of the names rotated files get (app.log.*),
	// where a restart looks for the checkpoint's files that path no
	// longer matches.
	RotatedPath string `yaml:"rotated_path"`
	// MaxRecordBytes bounds a record spanning lines (a CSV quoted field
	// holding line breaks); connector.DefaultMaxRecordBytes when nil.
	MaxRecordBytes *int `yaml:"max_record_bytes"`
	// S3 is the object storage of an s3://bucket/key path (endpoint,
	// region, credentials); s3input.go.
	S3 s3conf.Config `yaml:"s3"`
}

// defaultBatch is the batch size Read uses when asked for max <= 0.
const defaultBatch = 1024

// maxMaxRecordBytes caps max_record_bytes: the reader holds a record in
// memory whole.
const maxMaxRecordBytes = 1 << 30

// New builds a file source. It checks the options and builds the decoder,
// and touches no file: that is Open's job.
func New(cfg Config, env connector.SourceEnv) (*Source, error) {
	var errs []error
	switch _, globErr := filepath.Match(cfg.Path, ""); {
	case s3conf.IsS3(cfg.Path):
	case cfg.S3 != (s3conf.Config{}):
		errs = append(errs, connector.Errorf("s3", "applies to an s3://bucket/key path"))
	case cfg.Path == "":
		errs = append(errs, connector.Errorf("path", "must name a file or a glob such as data/*.csv"))
	case globErr != nil:
		errs = append(errs, connector.Errorf("path", "bad glob %q: %v", cfg.Path, globErr))
	case strings.HasSuffix(cfg.Path, "/"):
		errs = append(errs, connector.Errorf("path", "%q names a directory; name its files with a glob such as %s*.csv", cfg.Path, cfg.Path))
	}
	if env.Formats == nil {
		return nil, fmt.Errorf("source %q: no format registry", env.Name)
	}
	format := cfg.Format
	if format.IsZero() {
		format = connector.FormatSpec{Type: "csv"}
	}
	var fl *follower
	objFollow := cfg.Follow && s3conf.IsS3(cfg.Path)
	interval := cfg.MonitorInterval
	if objFollow {
		switch {
		case cfg.RotateWait != nil:
			errs = append(errs, connector.Errorf("rotate_wait", "applies to files, which are rotated; objects are not"))
		case cfg.RotatedPath != "":
			errs = append(errs, connector.Errorf("rotated_path", "applies to files, which are rotated; objects are not"))
		case interval < 0:
			errs = append(errs, connector.Errorf("monitor_interval", "must be > 0, such as 200ms (0: the default)"))
		case interval == 0:
			interval = defaultMonitorInterval
		}
	} else {
		var err error
		fl, err = newFollower(cfg)
		errs = append(errs, err)
	}
	switch n := cfg.MaxRecordBytes; {
	case n == nil:
	case *n <= 0:
		errs = append(errs, connector.Errorf("max_record_bytes", "must be positive, such as 1048576 (1 MiB)"))
	case *n > maxMaxRecordBytes:
		errs = append(errs, connector.Errorf("max_record_bytes", "%d is more than the %d (1 GiB) a record may hold in memory", *n, maxMaxRecordBytes))
	}
	if env.Formats.Bulk(format) {
		s, err := newBulk(cfg, env, format, errs)
		if s != nil {
			s.objFollow, s.interval = objFollow, interval
			s.cfg, s.env = cfg, env
		}
		return s, err
	}
	obj, err := newObjectsFor(cfg)
	errs = append(errs, err)
	dec, err := env.Formats.NewDecoder(format, env.Schema)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sp, spans := dec.(connector.Splitter)
	if cfg.MaxRecordBytes != nil && !spans {
		return nil, connector.Errorf("max_record_bytes", "applies only to a format whose records span lines (csv); format %s reads one record per line", format.Type)
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		pattern:      cfg.Path,
		formatName:   format.Type,
		maxRecordSet: cfg.MaxRecordBytes != nil,
		updating:     env.Formats.Changelog(format),
		dec:          dec,
		width:        env.Schema.Len(),
		reject:       env.Reject,
		logger:       logger,
		fl:           fl,
		spares:       make(chan *row.Batch, sparesKept),
		obj:          obj,
		objFollow:    objFollow,
		interval:     interval,
		cfg:          cfg,
		env:          env,
	}
	if obj != nil {
		obj.logger = logger
	}
	s.parDone.Store(-1)
	if spans {
		maxRecordBytes := connector.DefaultMaxRecordBytes
		if cfg.MaxRecordBytes != nil {
			maxRecordBytes = *cfg.MaxRecordBytes
		}
		s.rd = newRecords(sp.SplitFunc(maxRecordBytes), maxRecordBytes)
	} else {
		s.rd = newRecords(nil, 0)
	}
	if hd, ok := dec.(connector.HeaderDecoder); ok && hd.HasHeader() {
		s.header = hd
	}
	return s, nil
}

// Register adds the file source to r.
func Register(r *connector.Registry) {
	connector.RegisterSource(r, "file", "reads a file, or a glob of files in name order, in any input format; bounded, or follows them as tail -F",
		func(cfg Config, env connector.SourceEnv) (connector.Source, error) {
			s, err := New(cfg, env)
			if err != nil {
				return nil, err
			}
			return s, nil
		})
}

// Source reads records from files. Open, Read and Close are called from one
// goroutine; Position and Restore between Reads.
//
// Read returns at most max changes. The final batch comes together with
// io.EOF, and every later call returns nil, io.EOF. Any other error comes
// alone: rows decoded before it are returned first, by the call before, and
// Position then names the record that failed, so that no checkpoint can
// step over it.
//
// Errors name the file, and the line where a record is at fault; the
// runtime adds the source's name.
//
// Every record goes to the decoder, a blank one too: the format knows what
// a blank line means (csv and json skip it, raw makes it an empty string, a
// one-column csv a NULL). Only blank lines before a header are skipped.
type Source struct {
	// cfg and env are what the source was built from, for a lookup join's
	// reader of the whole table (lookup.go).
	cfg     Config
	env     connector.SourceEnv
	pattern string
	// formatName and maxRecordSet are what FlinkSource needs of the
	// options.
	formatName   string
	maxRecordSet bool
	// updating: the format is a changelog format (debezium-json, ...).
	updating bool
	dec      connector.Decoder
	header   connector.HeaderDecoder // nil when the format reads no header
	width    int
	reject   func(connector.BadRecord) error
	logger   *slog.Logger
	// fl is the state of a followed source; nil when bounded.
	fl *follower

	files []string
	// ids holds each file's identity (fileID.String), for the locations
	// of its records.
	ids []string
	cur int // index into files of the file being read
	// before[i] is the sum of the sizes of files[:i], as Open found
	// them, for Size; total is the sum of them all.
	before []int64
	total  atomic.Int64
	// base is what Size adds to the bytes read (rd.read) to get the
	// offset in the whole input: the sizes of the files before the
	// current one, plus the offset it was opened at, less what had been
	// read from other files and the header before that offset.
	base atomic.Int64
	f    input
	rd   *records
	// positions is the Origin of the batch being read.
	positions *row.Positions
	// inHeader is set while the current file's header is still to come.
	inHeader bool
	// par, once the first Read started it, is a parallel read
	// (parallel.go): its reader goroutine then owns f, rd, cur and
	// inHeader.
	par *parallel
	// bufs reuses a parallel read's buffers once the runtime gives the
	// batches back through TextRecycle (bufpool.go); nil until it does.
	// textBack and madeBack say which batches come back: the source's
	// own (TextRecycle), those the map made (MappedTextRecycle).
	bufs               *bufPool
	textBack, madeBack bool
	// mapper, if set, maps each batch on the decode workers
	// (connector.MappingSource); mapFresh: its results hold none of the
	// decoded rows, whose batch a worker then reuses.
	mapper   func(*row.Batch) *row.Batch
	mapFresh bool
	// spares holds batches their reader gave back (Recycle), for the
	// decode workers.
	spares chan *row.Batch
	// columns: the decoder reads the columns SelectColumns chose; paths:
	// the rows have columns of ROW fields too (SetPaths); projected: the
	// decoder leaves some columns unread (SetColumns).
	columns, paths, projected bool
	// fullRows: every row the decoder writes has every value written, and
	// a batch given back (Recycle) is used again. Set before the first
	// batch of a parallel read is made.
	fullRows atomic.Bool
	// parDone is the offset in the whole input of a parallel read's
	// position, for Size; -1 while the read is serial.
	parDone atomic.Int64
	// bulk decodes a bulk format's files (bulk.go), instead of dec; bk
	// is its read once started, bytesRead the size of the files it
	// opened.
	bulk      connector.BulkDecoder
	bk        *bulkRead
	bytesRead atomic.Int64
	// obj reads an s3:// path's objects (s3input.go); objFollow: it
	// follows new ones, looking every interval; done are the objects
	// such a source read whole.
	obj       *objects
	objFollow bool
	interval  time.Duration
	done      []string
	// ctx is Open's, for the requests of listing.
	ctx context.Context
	// restore is the position Restore was given, applied by Open.
	restore *position
	// stop is where a reread ends (reread.go); rereadPos is the position
	// RereadTo was given.
	stop      *position
	rereadPos []byte
	// stopFile is the index in files of a bulk reread's stop; stopped:
	// the reread reached it.
	stopFile int
	stopped  bool
	opened   bool
	err      error // returned by every Read once set
}

// Bounded reports whether the source ends after its last file: it does
// unless it follows them.
func (s *Source) Bounded() bool { return s.fl == nil && !s.objFollow }

// Updating reports whether the format is a changelog format
// (debezium-json, canal-json, maxwell-json, ogg-json), whose records
// carry updates and deletes: the planner then plans the source as
// updating and asks for its key.
func (s *Source) Updating() bool { return s.updating }

// Open finds the files and opens the first, or the one Restore named at
// its offset.
func (s *Source) Open(ctx context.Context) error {
	if s.opened {
		return errors.New("opened twice")
	}
	s.opened = true
	s.ctx = ctx
	if s.fl != nil {
		return s.openFollow()
	}
	if s.bulk != nil {
		return s.openBulk()
	}
	if s.restore != nil && s.restore.V != positionVersion {
		return fmt.Errorf("the checkpoint position was taken with follow: true; set it again, or reset the pipeline's state (etld state reset) to start afresh")
	}
	if s.objFollow {
		return s.openObjects()
	}
	files, err := s.match()
	if err != nil {
		return err
	}
	s.files = files
	if err := s.measure(); err != nil {
		return err
	}
	if s.restore == nil || s.restore.File == "" {
		return s.openFile(0, 0, 1)
	}
	p := s.restore
	i := slices.Index(files, p.File)
	if i < 0 {
		return fmt.Errorf("checkpoint position is in %s, which %q no longer names", p.File, s.pattern)
	}
	return s.openFile(i, p.Offset, p.Line)
}

// Read decodes up to max changes.
func (s *Source) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.opened || (s.files == nil && s.fl == nil) {
		return nil, errors.New("read before open")
	}
	if max <= 0 {
		max = defaultBatch
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.fl != nil {
		return s.readFollow(ctx, max)
	}
	if s.bulk != nil {
		return s.readBulk(ctx, max)
	}
	// A reread stops at a record: it reads serially, where the record
	// boundaries are known one by one.
	if s.stop == nil && (s.par != nil || (!s.objFollow && s.parallelDecoder() != nil)) {
		return s.readParallel(ctx, max)
	}
	b := s.newBatch(max)
	for n := 0; b.Len() < max; n++ {
		if n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return s.fail(b, err)
			}
		}
		var rec []byte
		var line int64
		err := io.EOF
		if s.stop != nil {
			at, serr := s.atStop()
			if serr != nil {
				return s.fail(b, serr)
			}
			if at {
				s.err = io.EOF
				if b.Len() == 0 {
					return nil, io.EOF
				}
				return b, io.EOF
			}
		}
		if s.f != nil {
			rec, line, err = s.rd.next()
		}
		if err == io.EOF {
			if s.cur+1 < len(s.files) {
				if s.objFollow && s.f != nil {
					s.done = append(s.done, s.files[s.cur])
				}
				if err := s.openFile(s.cur+1, 0, 1); err != nil {
					return s.fail(b, err)
				}
				continue
			}
			if s.objFollow {
				if b.Len() > 0 {
					return b, nil
				}
				if err := s.followObjects(ctx); err != nil {
					return s.fail(b, err)
				}
				if s.cur+1 < len(s.files) {
					continue
				}
				if err := s.waitObjects(ctx); err != nil {
					return nil, err
				}
				continue
			}
			s.err = io.EOF
			if b.Len() == 0 {
				return nil, io.EOF
			}
			return b, io.EOF
		}
		if err != nil {
			return s.fail(b, fmt.Errorf("%s:%d: %w", s.files[s.cur], line, err))
		}
		if full, err := s.take(b, rec, line, max, s.files[s.cur], s.ids[s.cur]); err != nil {
			return s.fail(b, err)
		} else if full {
			break
		}
	}
	return b, nil
}

// take hands rec, read from file name, to the header decoder or the
// decoder. full reports that its changes did not fit in b: it is given
// back to the reader for the next batch. An error stops the source, with
// rec given back so that the position names it.
func (s *Source) take(b *row.Batch, rec []byte, line int64, max int, name, id string) (full bool, err error) {
	if s.inHeader {
		if len(rec) == 0 {
			return false, nil
		}
		s.inHeader = false
		if err := s.decodeHeader(rec); err != nil {
			s.rd.unread()
			s.inHeader = true
			return false, fmt.Errorf("%s:%d: header: %w", name, line, err)
		}
		return false, nil
	}
	before := b.Len()
	// A record the splitter found bad (a CSV quote that does not close)
	// comes with its error and is not decoded.
	err = s.rd.bad
	if err == nil {
		err = s.dec.Decode(rec, b)
	}
	if err == nil && b.Len() > max && before > 0 {
		// One record's changes never straddle two batches, so that a
		// position always falls between records: leave it for the next.
		b.Changes = b.Changes[:before]
		s.rd.unread()
		return true, nil
	}
	if err != nil {
		b.Changes = b.Changes[:before]
		if err := s.rejectRecord(rec, name, id, line, s.rd.prevOffset, err); err != nil {
			s.rd.unread()
			return false, err
		}
		return false, nil
	}
	s.positions.MarkAt(b.Len(), name, id, line, s.rd.prevOffset)
	return false, nil
}

// decodeHeader hands rec to the header decoder, unless the splitter found
// it bad.
func (s *Source) decodeHeader(rec []byte) error {
	if s.rd.bad != nil {
		return s.rd.bad
	}
	return s.header.DecodeHeader(rec)
}

// newBatch makes the batch of one Read, with Positions naming each
// change's file and line for the errors it may cause downstream.
func (s *Source) newBatch(max int) *row.Batch {
	b := row.NewBatch(max, s.width)
	s.positions = row.NewPositions(max, ":")
	b.Origin = s.positions
	return b
}

// rejectRecord hands a record the decoder refused to the on_error policy,
// and returns the error that stops the source, if any. Without a policy the
// record itself is that error. The record is at line and byte offset of
// the file name whose identity is id.
func (s *Source) rejectRecord(rec []byte, name, id string, line, offset int64, err error) error {
	bad := connector.BadRecord{
		Position: fmt.Sprintf("%s:%d", name, line),
		Location: &row.Location{File: name, ID: id, Line: line, Offset: offset},
		Raw:      bytes.Clone(rec),
		Err:      err,
	}
	if s.reject == nil {
		return bad
	}
	// The policy's error goes out as it is (SourceEnv.Reject's contract):
	// the policy names the position, and says what to set to go on.
	return s.reject(bad)
}

// fail returns what was read before err and keeps err for the next Read,
// or returns err now when nothing was read.
func (s *Source) fail(b *row.Batch, err error) (*row.Batch, error) {
	s.err = err
	if b.Len() > 0 {
		return b, nil
	}
	return nil, err
}

// Close closes the current file. It is safe after a failed Open and twice.
func (s *Source) Close(ctx context.Context) error {
	if s.err == nil {
		s.err = errors.New("read after close")
	}
	if s.fl != nil {
		return s.closeFollow()
	}
	s.stopParallel()
	s.stopBulk()
	return s.closeFile()
}
