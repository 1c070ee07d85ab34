package file

// Reading a bulk format (parquet): files whose rows come in pieces (row
// groups) laid out by a footer, not in records. A dispatcher goroutine
// opens the files in name order, reads each footer and hands every row
// group to the workers, one per core, which decode the columns the plan
// reads (connector.ProjectingBulkDecoder) into batches. Read takes the
// row groups back in file order, so what it returns, and the position,
// do not depend on the number of workers. The position is the file, the
// row group and the row in it of the next row, and the row's number in
// the file, which a restore goes by:
// {"v":3,"file":"data/b.parquet","group":2,"row":1024,"file_row":246784}.
// So a restore starts at the same row even if the reader cuts the file
// into other pieces than the run that saved it (an Avro file's pieces
// are runs of blocks of about avro.PieceBytes). Objects of a
// followed s3:// path are complete once listed: the dispatcher lists them
// again at the end and goes on with the new ones (s3input.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync"

	"github.com/etld/etld/internal/s3conf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const bulkPositionVersion = 3

// bulkRead is the state of a read of a bulk format.
type bulkRead struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// order has every row group in file order; its capacity bounds the
	// groups in flight.
	order chan *piece
	cur   *piece
	// file, group and row are the position (Position), fileRow the
	// number in the file of its row; name is the file's. group is -1
	// after a restore by file row until a batch is read: the position is
	// then the one restored. done are the objects a followed s3:// path
	// read whole since the start or restore.
	file, group  int
	row, fileRow int64
	name         string
	done         []string
	// mu guards open: each file the dispatcher opened and the number of
	// its row groups not yet read.
	mu   sync.Mutex
	open map[io.Closer]int
}

// release notes that one more row group of f was read, and closes f
// after its last.
func (br *bulkRead) release(f io.Closer) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.open[f]--; br.open[f] <= 0 {
		delete(br.open, f)
		f.Close()
	}
}

// piece is a row group to decode, or with err set the end of the input
// (io.EOF) or the error that stops it.
type piece struct {
	file, group int
	skip        int64
	// first is the number of the file's rows before the group.
	first   int64
	reader  connector.BulkReader
	err     error
	ready   chan struct{}
	batches []*row.Batch
	next    int
	// f is the file, closed once its last piece is read; name is its.
	f    io.Closer
	name string
}

// startBulk starts the dispatcher and the workers at the position
// restored (or the start), decoding batches of up to max rows.
func (s *Source) startBulk(max int) {
	workers := parallelWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	br := &bulkRead{cancel: cancel, order: make(chan *piece, 2*workers), open: map[io.Closer]int{}}
	fileRow := int64(-1)
	if p := s.restore; p != nil && p.File != "" {
		// Open checked that the file is still there.
		br.file = slices.Index(s.files, p.File)
		br.group, br.row = p.Group, p.Row
		if p.FileRow > 0 {
			// The dispatcher finds the row's group in the file's pieces.
			br.group, br.row, fileRow = -1, 0, p.FileRow
		}
	}
	if br.file < len(s.files) {
		br.name = s.files[br.file]
	}
	s.bk = br
	work := make(chan *piece, 2*workers)
	br.wg.Add(1 + workers)
	// The dispatcher starts at the position Read moves on from.
	file, group, skip := br.file, br.group, br.row
	go func() {
		defer br.wg.Done()
		defer close(work)
		defer close(br.order)
		s.dispatch(ctx, br, work, slices.Clone(s.files), file, group, skip, fileRow)
	}()
	for range workers {
		go func() {
			defer br.wg.Done()
			for p := range work {
				if ctx.Err() == nil {
					p.err = p.reader.ReadGroup(ctx, p.group, p.skip, max, func(b *row.Batch) error {
						p.batches = append(p.batches, b)
						return nil
					})
				}
				close(p.ready)
			}
		}()
	}
}

// dispatch opens the files from row skip of row group group of file on,
// or from row fileRow of file when it is not -1, and hands out their row
// groups, in order.
func (s *Source) dispatch(ctx context.Context, br *bulkRead, work chan<- *piece, files []string, file, group int, skip, fileRow int64) {
	send := func(p *piece) bool {
		select {
		case br.order <- p:
		case <-ctx.Done():
			return false
		}
		if p.err != nil {
			close(p.ready)
			return false
		}
		select {
		case work <- p:
			return true
		case <-ctx.Done():
			return false
		}
	}
	stop := func(err error) { send(&piece{err: err, ready: make(chan struct{})}) }
	for i := file; ; i++ {
		if i >= len(files) {
			if !s.objFollow {
				break
			}
			// Followed objects: wait for new ones.
			more, err := s.moreObjects(ctx, files)
			if err != nil {
				stop(err)
				return
			}
			if len(more) == 0 {
				if s.waitObjects(ctx) != nil {
					return
				}
			}
			files = append(files, more...)
			i--
			continue
		}
		name := files[i]
		f, size, err := s.openInput(name)
		if err != nil {
			stop(err)
			return
		}
		fr, err := s.bulk.OpenFile(f, size, name)
		if err != nil {
			f.Close()
			stop(err)
			return
		}
		groups := fr.Groups()
		var first int64
		start := 0
		if i == file && fileRow >= 0 {
			var err error
			if start, skip, err = groupOfRow(groups, fileRow); err != nil {
				f.Close()
				stop(fmt.Errorf("checkpoint position row %d of %s: %w", fileRow, name, err))
				return
			}
		} else if i == file {
			start = group
			if start > len(groups) || (start < len(groups) && skip > groups[start]) || (start == len(groups) && skip > 0) {
				f.Close()
				stop(fmt.Errorf("checkpoint position row group %d, row %d is past the end of %s (%d row groups): the file changed since", start, skip, name, len(groups)))
				return
			}
		}
		for g := range start {
			first += groups[g]
		}
		if start == len(groups) {
			f.Close()
			continue
		}
		br.mu.Lock()
		br.open[f] = len(groups) - start
		br.mu.Unlock()
		for g := start; g < len(groups); g++ {
			p := &piece{file: i, group: g, skip: skip, first: first, reader: fr, ready: make(chan struct{}), f: f, name: name}
			first += groups[g]
			skip = 0
			if !send(p) {
				return
			}
		}
		s.bytesRead.Add(size)
	}
	stop(io.EOF)
}

// readBulk returns the next batch of the row groups in order.
func (s *Source) readBulk(ctx context.Context, max int) (*row.Batch, error) {
	if s.bk == nil {
		s.startBulk(max)
	}
	if s.stopped {
		s.err = io.EOF
		return nil, io.EOF
	}
	br := s.bk
	for {
		if br.cur == nil {
			select {
			case p, ok := <-br.order:
				if !ok {
					return nil, ctx.Err()
				}
				br.cur = p
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		p := br.cur
		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.err != nil {
			// At the end the position stays after the last row group.
			s.err = p.err
			return nil, p.err
		}
		if p.next == len(p.batches) {
			br.cur = nil
			br.release(p.f)
			// The position moves to the start of the next group.
			if p.name != br.name && br.name != "" && s.objFollow {
				br.done = append(br.done, br.name)
			}
			br.file, br.group, br.row, br.name = p.file, p.group+1, 0, p.name
			br.fileRow = p.first + p.reader.Groups()[p.group]
			continue
		}
		b := p.batches[p.next]
		p.batches[p.next] = nil
		p.next++
		at := p.skip
		if br.file == p.file && br.group == p.group {
			at = br.row
		}
		if s.stop != nil && s.cutBulk(p.file, p.first+at, b) {
			// A reread's end (reread.go).
			s.stopped = true
			if b.Len() == 0 {
				s.err = io.EOF
				return nil, io.EOF
			}
		}
		b.Origin = row.Sequence{Prefix: p.name + " row ", First: p.first + at + 1}
		if p.name != br.name && br.name != "" && s.objFollow {
			br.done = append(br.done, br.name)
		}
		br.file, br.group, br.row, br.name = p.file, p.group, at+int64(b.Len()), p.name
		br.fileRow = p.first + br.row
		return b, nil
	}
}

// stopBulk ends the dispatcher and the workers, waits for them and
// closes the files still open.
func (s *Source) stopBulk() {
	if s.bk == nil {
		return
	}
	s.bk.cancel()
	s.bk.wg.Wait()
	for f := range s.bk.open {
		f.Close()
	}
	s.bk.open = nil
}

// bulkPosition is Position for a bulk format.
func (s *Source) bulkPosition() position {
	p := position{V: bulkPositionVersion}
	switch {
	case s.bk != nil && s.bk.group < 0:
		p = *s.restore
	case s.bk != nil:
		p.File, p.Group, p.Row, p.FileRow = s.bk.name, s.bk.group, s.bk.row, s.bk.fileRow
		if s.objFollow {
			p.Done = append(slices.Clone(s.done), s.bk.done...)
		}
	case s.restore != nil:
		p = *s.restore
	}
	return p
}

// groupOfRow finds row n of a file of pieces of groups rows: the piece
// it is in, and its row in the piece; n the file's number of rows is
// the end of its last piece.
func groupOfRow(groups []int64, n int64) (int, int64, error) {
	var first int64
	for g, rows := range groups {
		if n < first+rows {
			return g, n - first, nil
		}
		first += rows
	}
	if n == first {
		return len(groups), 0, nil
	}
	return 0, 0, fmt.Errorf("past the end of the file's %d rows: the file changed since", first)
}

// newBulk builds a source of a bulk format; errs are the complaints about
// the other options so far.
func newBulk(cfg Config, env connector.SourceEnv, format connector.FormatSpec, errs []error) (*Source, error) {
	if cfg.Follow && !s3conf.IsS3(cfg.Path) {
		errs = append(errs, connector.Errorf("follow", "a %s file is read in pieces laid out when it is opened (a Parquet file's footer, an Avro file's blocks): it cannot be followed as it grows", format.Type))
	}
	if cfg.MaxRecordBytes != nil {
		errs = append(errs, connector.Errorf("max_record_bytes", "applies only to a format whose records span lines (csv); %s reads whole files in pieces", format.Type))
	}
	obj, err := newObjectsFor(cfg)
	errs = append(errs, err)
	dec, err := env.Formats.NewBulkDecoder(format, env.Schema)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		pattern:    cfg.Path,
		formatName: format.Type,
		bulk:       dec,
		width:      env.Schema.Len(),
		reject:     env.Reject,
		logger:     logger,
		rd:         newRecords(nil, 0),
		spares:     make(chan *row.Batch, sparesKept),
		obj:        obj,
	}
	if obj != nil {
		obj.logger = logger
	}
	s.parDone.Store(-1)
	return s, nil
}

// openBulk finds the files and checks a restored position against them.
func (s *Source) openBulk() error {
	if p := s.restore; p != nil && p.V != bulkPositionVersion {
		return fmt.Errorf("the checkpoint position was taken reading another format; set it again, or reset the pipeline's state (etld state reset) to start afresh")
	}
	if s.objFollow {
		return s.openBulkObjects()
	}
	files, err := s.match()
	if err != nil {
		return err
	}
	s.files = files
	if err := s.measure(); err != nil {
		return err
	}
	if p := s.restore; p != nil && p.File != "" && !slices.Contains(files, p.File) {
		return fmt.Errorf("checkpoint position is in %s, which %q no longer names", p.File, s.pattern)
	}
	return s.bulkStop()
}
