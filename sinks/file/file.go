// Package file is the file sink: it encodes changes with a format's encoder
// into one file, in append mode (+I only) or in retract mode (every kind,
// written in an op column first; with a changelog format such as
// debezium-json or canal-json, as the format's own events instead, and
// then chosen by mode: auto for an updating input).
//
// # Exactly-once output
//
// The sink is two-phase, as Flink's FileSink, but keeps the one output
// file users name (path: out.csv) rather than a directory of part files:
// byte-identical output to a run without crashes is the guarantee, and a
// single file is what a user expects to read.
//
//   - In a run without a state directory, until the runtime takes its
//     first checkpoint (Snapshot), the sink writes straight into the
//     file, so that a one-shot run behaves as it always did: rows are in
//     the file after every Flush. In a run with one (connector.RunAware
//     says so), rows go to parts from the start: the output only ever
//     holds what a stored checkpoint covers.
//   - From the first Snapshot (or a Restore) on, rows go to a hidden
//     in-progress file beside the output, .<name>.part-<run>-<n>.inprogress.
//     Flush makes it durable; Snapshot closes it and returns a state naming
//     every part not yet published with its length and the offset it takes
//     in the output. Commit, called once the checkpoint is stored, appends
//     the parts' bytes to the output at those offsets, fsyncs it and
//     deletes them. Commit is idempotent: a part whose bytes are already in
//     the output is skipped, and one interrupted midway is completed.
//   - Restore truncates the output to the length the checkpoint
//     had published plus its pending parts, publishes those parts, and
//     deletes every other in-progress file of this output (rows written
//     after that checkpoint, which the sources send again). The result is
//     byte-identical to a run without the crash; the header of a format
//     that writes one is written once, into an empty output only.
//   - Close publishes what was written since the last checkpoint, so that
//     a run that stops, even on an error, leaves all its rows in the file
//     as before; a later Restore truncates them away again if they were
//     past the checkpoint it resumes from. A run with a state directory
//     that stops before its first checkpoint publishes nothing: no
//     checkpoint would cover those rows, and the next run, starting
//     afresh, writes them again.
//
// # Existing output
//
// The sink never destroys data it was not asked to. A fresh start (no
// checkpoint of this sink restored) truncates an existing file only in a
// run without a state directory, as a shell's `>` does, and logs it when
// the file held data. With a state directory, a non-empty file that this
// pipeline's checkpoint does not cover (another pipeline's output, or this
// one's under its old name) is refused unless the sink says overwrite:
// true; append: true keeps it and writes after it.
//
// Publishing copies the parts' bytes (copy_file_range on Linux, so within
// the kernel) rather than renaming files: one output file can only grow by
// appending. The one exception is a part that starts an empty output (the
// first commit of a run with a state directory): it is renamed onto it,
// so that the commit needs no room beside the part.
//
// # A full disk
//
// The output only ever holds whole records (space.go). A write that fails
// is cut back to where it began, its bytes kept in the buffer for a later
// Flush; a commit whose append fails cuts the output back to the part's
// start and keeps the part for the next commit or restore. The error names
// the file, the bytes needed and those free. A run without a state
// directory that fails deletes its parts: nothing can resume from them.
package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/etld/etld/internal/durable"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Config is the sink's options.
type Config struct {
	// Path is the file to write; its parent directories are created.
	Path string `yaml:"path,required"`
	// Format is csv when not given.
	Format connector.FormatSpec `yaml:"format"`
	// Append keeps an existing file and writes after its content (its
	// header too, when the format writes one, only if the file is empty).
	// By default Open truncates the file, so that a re-run gives the same
	// output; with a state directory only with Overwrite (see the package
	// doc).
	Append bool `yaml:"append"`
	// Overwrite lets a run with a state directory truncate a non-empty
	// file that no checkpoint of this pipeline covers.
	Overwrite bool `yaml:"overwrite"`
	// PartitionBy names the columns whose values make the partition
	// directories; with it, or with a bulk format (parquet), path is a
	// directory of part files (dir.go).
	PartitionBy []string `yaml:"partition_by"`
	// PartitionCommit says when a partition is complete and gets its
	// success file.
	PartitionCommit PartitionCommit `yaml:"partition_commit"`
	// Rolling says when a part file is complete.
	Rolling Rolling `yaml:"rolling"`
	// S3 is the object storage of an s3://bucket/prefix path (endpoint,
	// region, credentials); such a path is always a directory of part
	// files (s3store.go).
	S3 s3conf.Config `yaml:"s3"`
}

const (
	// bufferSize is how much encoded output is held before a write.
	bufferSize = 256 << 10
	// opColumn is the column retract mode prepends with the change kind.
	opColumn = "op"
)

// New builds a file sink. It checks the options and touches no file.
func New(cfg Config, env connector.SinkEnv) (*Sink, error) {
	if cfg.Path == "" {
		return nil, connector.Errorf("path", "must name the file to write")
	}
	if cfg.Append && cfg.Overwrite {
		return nil, connector.Errorf("overwrite", "contradicts append: true, which keeps the file's content; set one of them")
	}
	if env.Formats == nil {
		return nil, fmt.Errorf("sink %q: no format registry", env.Name)
	}
	format := cfg.Format
	if format.IsZero() {
		format = connector.FormatSpec{Type: "csv"}
	}
	if s3conf.IsS3(cfg.Path) {
		return nil, connector.Errorf("path", "object storage takes whole objects: the sink writes a directory of part files there (use the registered sink, or NewDir)")
	}
	if env.Formats.Bulk(format) {
		return nil, connector.Errorf("format", "%s writes whole files: the sink writes a directory of part files for it (use the registered sink, or NewDir)", format.Type)
	}
	switch {
	case len(cfg.PartitionBy) > 0:
		return nil, connector.Errorf("partition_by", "makes the sink write a directory of part files (use the registered sink, or NewDir)")
	case cfg.PartitionCommit != (PartitionCommit{}):
		return nil, connector.Errorf("partition_commit", "applies to partitioned output: set partition_by")
	case cfg.Rolling != (Rolling{}):
		return nil, connector.Errorf("rolling", "applies to a directory of part files: a bulk format (parquet) or partition_by; this sink writes the one file %s", cfg.Path)
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{
		name:      env.Name,
		path:      cfg.Path,
		format:    format,
		formats:   env.Formats,
		changelog: env.Formats.Changelog(format),
		append:    cfg.Append,
		overwrite: cfg.Overwrite,
		logger:    logger,
	}, nil
}

// Register adds the file sink to r.
func Register(r *connector.Registry) {
	connector.RegisterSink(r, "file", "writes one file in any output format (append, or retract with an op column), or a directory of part files: parquet, or partitioned",
		func(cfg Config, env connector.SinkEnv) (connector.Sink, error) {
			if IsDir(cfg, env) {
				s, err := NewDir(cfg, env)
				if err != nil {
					return nil, err
				}
				return s, nil
			}
			s, err := New(cfg, env)
			if err != nil {
				return nil, err
			}
			return s, nil
		})
}

// IsDir reports whether the options make the sink write a directory of
// part files (a bulk format, or partition_by) rather than one file.
func IsDir(cfg Config, env connector.SinkEnv) bool {
	return len(cfg.PartitionBy) > 0 || s3conf.IsS3(cfg.Path) || (env.Formats != nil && env.Formats.Bulk(cfg.Format))
}

// NewDir builds a file sink that writes a directory of part files.
func NewDir(cfg Config, env connector.SinkEnv) (*DirSink, error) {
	if cfg.Path == "" {
		return nil, connector.Errorf("path", "must name the directory to write")
	}
	if cfg.Append && cfg.Overwrite {
		return nil, connector.Errorf("overwrite", "contradicts append: true, which keeps the existing parts; set one of them")
	}
	if env.Formats == nil {
		return nil, fmt.Errorf("sink %q: no format registry", env.Name)
	}
	format := cfg.Format
	if format.IsZero() {
		format = connector.FormatSpec{Type: "csv"}
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return newDir(cfg, env, format, logger)
}

// Sink writes changes to a file. Bind, Open, Write, Flush and Close are
// called from one goroutine; Bytes from any.
//
// Errors name the file; the runtime adds the sink's name, and Bind, whose
// errors the planner reports as they are, adds it itself.
//
// Write buffers encoded records and writes them out in large chunks; Flush
// writes the rest and fsyncs. The sink keeps its own buffer rather than a
// bufio.Writer so that a failed write keeps what it could not write, and a
// later Flush can write it still: a bufio.Writer stays failed for good.
type Sink struct {
	name    string
	path    string
	format  connector.FormatSpec
	formats *connector.Registry
	// changelog: the format writes row kinds itself (debezium-json,
	// canal-json, ...), so retract mode needs no op column.
	changelog bool
	append    bool
	// overwrite: Config.Overwrite. resumable: the run has a state
	// directory (SetRun).
	overwrite bool
	resumable bool
	logger    *slog.Logger

	mode connector.Mode
	enc  connector.Encoder
	// op is the row handed to the encoder in retract mode: the kind, then
	// the change's values.
	op row.Row

	// f is the file Write and Flush write: the output itself until the
	// first Snapshot, then the current in-progress part (nil until a write
	// needs one).
	f *os.File
	// out is the output file, open for writing all along. outSize is its
	// length as the sink made it.
	out     *os.File
	outSize int64
	// outRegular is set when the output is a regular file, which a failed
	// write can be cut back in (not a pipe or /dev/stdout).
	outRegular bool
	// torn stays once a file could not be cut back to a whole record
	// after a failed write: nothing more is written to it.
	torn error
	// staged is set from the first Snapshot or Restore on: rows go to parts.
	staged bool
	// run names this run's parts; seq numbers them.
	run string
	seq int
	// cur is the part f writes, pending the parts snapshotted and not yet
	// published, in output order.
	cur     *part
	pending []part
	// end is the output offset the next byte written will take once
	// published: outSize, plus the pending parts, plus cur.
	end int64
	// restored is what Restore was given, applied by Open.
	restored *state
	// covered is set once a checkpoint covers the output: restored, or
	// committed in this run. Until then a resumable run's Close publishes
	// nothing.
	covered bool

	buf []byte
	// dirty is set when bytes were written since the last fsync.
	dirty bool
	// syncDirs are directories whose new entries (the file, directories
	// Open created) the next Flush makes durable.
	syncDirs []string
	// syncErr stays once an fsync failed: the kernel may have dropped the
	// pages it could not write, so a later fsync succeeding proves nothing.
	syncErr error
	closed  bool
	written atomic.Int64
}

// Capabilities: append, and retract when asked for with mode: retract;
// a changelog format writes every kind as its events, so mode: auto picks
// retract for an updating input.
func (s *Sink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Retract: true, AutoRetract: s.changelog}
}

// Bind builds the encoder for the input: over its schema in append mode,
// over op STRING and its schema in retract mode.
func (s *Sink) Bind(in connector.SinkInput) error {
	schema := in.Schema
	switch in.Mode {
	case connector.Append:
	case connector.Retract:
		if s.changelog {
			break // the format writes the kind
		}
		if i := schema.Index(opColumn); i >= 0 {
			return s.bindErrorf("retract mode writes the change kind into a column %q, and the input has one already (column %d); rename it with AS in the query", opColumn, i+1)
		}
		op := row.Field{Name: opColumn, Type: row.Type{ID: row.String, NotNull: true}}
		schema = row.NewSchema(append([]row.Field{op}, schema.Fields...)...)
	default:
		return s.bindErrorf("cannot run in %s mode: a file takes append or retract", in.Mode)
	}
	enc, err := s.formats.NewEncoder(s.format, schema)
	if err != nil {
		return err
	}
	s.mode, s.enc = in.Mode, enc
	if in.Mode == connector.Retract && !s.changelog {
		s.op = make(row.Row, schema.Len())
	}
	return nil
}

// SetRun learns whether the run keeps state (connector.RunAware).
func (s *Sink) SetRun(info connector.RunInfo) { s.resumable = info.Resumable }

// Open creates the file and its directories, truncating it, or appending
// to it with append: true, and writes the format's header into a new or
// empty file. After a Restore it brings the file back to the checkpoint
// instead; in a run with a state directory it refuses to truncate a file
// with data that no checkpoint covers (see the package doc).
func (s *Sink) Open(ctx context.Context) error {
	if s.enc == nil {
		return s.errorf("open before bind")
	}
	if s.out != nil || s.closed {
		return s.errorf("opened twice")
	}
	dirs, err := newEntries(s.path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	s.syncDirs = dirs
	// Never O_APPEND: a restore and Commit write at offsets they check.
	flags := os.O_WRONLY | os.O_CREATE
	if !s.append && s.restored == nil {
		if err := s.checkTruncate(); err != nil {
			return err
		}
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(s.path, flags, 0o644)
	if err != nil {
		return err
	}
	s.out, s.f = f, f
	st, err := f.Stat()
	if err != nil {
		return err
	}
	s.outSize, s.outRegular = st.Size(), st.Mode().IsRegular()
	if s.run, err = runID(); err != nil {
		return err
	}
	if s.restored != nil {
		if err := s.recover(*s.restored); err != nil {
			return err
		}
	} else if err := s.removeParts(); err != nil {
		// Parts of an earlier run that crashed and starts afresh.
		return err
	}
	// s.out, not f: a restore may have renamed a part onto the output
	// and reopened it (renamePart), closing f.
	if _, err := s.out.Seek(s.outSize, io.SeekStart); err != nil {
		return err
	}
	if !s.staged {
		s.end = s.outSize
		if s.resumable {
			// With a state directory, rows reach the output only through
			// a checkpoint's Commit, from the first row on.
			s.staged, s.f = true, nil
		}
	}
	s.buf = make([]byte, 0, bufferSize+bufferSize/4)
	if h, ok := s.enc.(connector.HeaderEncoder); ok && s.end == 0 {
		s.buf = h.AppendHeader(s.buf)
	}
	return nil
}

// checkTruncate is called before a fresh start truncates the file: in a
// run with a state directory a file with data is refused unless the sink
// says overwrite: true; otherwise its truncation is logged.
func (s *Sink) checkTruncate() error {
	st, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Size() == 0 || !st.Mode().IsRegular() {
		return nil
	}
	if s.resumable && !s.overwrite {
		// Permanent: the file stays until someone moves it or changes
		// the sink's options.
		return retry.Permanent(s.errorf("the file holds %d bytes that no checkpoint of this pipeline covers (a renamed pipeline starts with new, empty state), and a run with a state directory does not destroy data it did not write; set overwrite: true on the sink to replace the file, append: true to write after it, or move it away", st.Size()))
	}
	s.logger.Info("file sink: truncating the existing file", "sink", s.name, "path", s.path, "bytes", st.Size(), "overwrite", s.overwrite)
	return nil
}

// Write encodes the changes of b into the buffer, writing it out whenever
// it is full. In append mode a change other than +I is refused: the
// planner lets none through, so one here is a bug upstream.
// CopiesRows implements connector.RowCopier: Write encodes each row into
// the buffer at once.
func (s *Sink) CopiesRows() bool { return true }

// CopiesText implements connector.TextCopier: the encoding copies the
// strings' bytes.
func (s *Sink) CopiesText() bool { return true }

var _ connector.TextCopier = (*Sink)(nil)

func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if s.out == nil {
		return s.errorf("write before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, c := range b.Changes {
		n := len(s.buf)
		var err error
		switch {
		case s.mode == connector.Retract && s.changelog:
			// The format's events say the kind (a -U as a delete).
			s.buf, err = s.enc.Encode(s.buf, c.Kind, c.Row)
		case s.mode == connector.Retract:
			// Kind.String returns constant strings: no allocation per row.
			s.op[0] = row.StringValue(c.Kind.String())
			copy(s.op[1:], c.Row)
			s.buf, err = s.enc.Encode(s.buf, row.Insert, s.op)
		case c.Kind != row.Insert:
			return s.errorf("change %d of the batch is %s in append mode; only +I can be written (set mode: retract to write every kind)", i, c.Kind)
		default:
			s.buf, err = s.enc.Encode(s.buf, c.Kind, c.Row)
		}
		if err != nil {
			s.buf = s.buf[:n]
			return s.errorf("change %d of the batch, %s: %w", i, shorten(c.String()), err)
		}
		if len(s.buf) >= bufferSize {
			if err := s.writeOut(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeOut writes the buffer to the file. The buffer ends at a record's
// end, so that a write that fails on a regular file (a full disk) is
// undone: the file is cut back to where the write began, the end of its
// last whole record, and the whole buffer stays, for a later Flush to
// write again. Only a pipe or a device, which cannot be cut back, keeps
// what a failed write left over at the front of the buffer.
func (s *Sink) writeOut() error {
	if s.torn != nil {
		return s.torn
	}
	if len(s.buf) == 0 {
		return nil
	}
	if s.f == nil {
		if err := s.newPart(); err != nil {
			return err
		}
	}
	n, err := s.f.Write(s.buf)
	if err != nil && (s.staged || s.outRegular) {
		return s.undoWrite(n, err)
	}
	s.written.Add(int64(n))
	if n > 0 {
		s.dirty = true
		s.end += int64(n)
		if s.staged {
			s.cur.Len += int64(n)
		} else {
			s.outSize += int64(n)
		}
	}
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	return err
}

// Flush writes out the buffer and fsyncs the file: what was written before
// is on disk when it returns nil.
func (s *Sink) Flush(ctx context.Context) error {
	if s.out == nil {
		return s.errorf("flush before open or after close")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.flush()
}

func (s *Sink) flush() error {
	if s.syncErr != nil {
		return s.syncErr
	}
	if err := s.writeOut(); err != nil {
		return err
	}
	if s.dirty && s.f != nil {
		if err := s.f.Sync(); err != nil {
			s.syncErr = fmt.Errorf("%w (data written since the last flush may be lost)", err)
			return s.syncErr
		}
		s.dirty = false
	}
	for len(s.syncDirs) > 0 {
		if err := durable.SyncDir(s.syncDirs[0]); err != nil {
			return err
		}
		s.syncDirs = s.syncDirs[1:]
	}
	return nil
}

// newEntries lists the directories that will get a new entry when path
// and its missing parents are created, innermost first: a new file is
// durable only once those directories are synced too.
func newEntries(path string) ([]string, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var dirs []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		_, err := os.Stat(dir)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return dirs, nil
		}
	}
}

// Bytes is the number of bytes written to the file so far, header
// included; buffered bytes count once they reach the file (connector.Meter,
// for /metrics).
func (s *Sink) Bytes() int64 { return s.written.Load() }
