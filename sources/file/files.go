// Finding the files a source reads and opening them one after another.

package file

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// match resolves the path option to the list of files to read.
func (s *Source) match() ([]string, error) {
	if s.obj != nil {
		files, err := s.obj.list(s.ctx)
		if err == nil && len(files) == 0 && !s.objFollow {
			err = fmt.Errorf("no object matches %q", s.pattern)
		}
		return files, err
	}
	if !isGlob(s.pattern) {
		st, err := os.Stat(s.pattern)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory: name a file, or its files with a glob such as %s", s.pattern, filepath.Join(s.pattern, "*.csv"))
		}
		return []string{s.pattern}, nil
	}
	matches, err := filepath.Glob(s.pattern)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", s.pattern, err)
	}
	files := matches[:0]
	for _, m := range matches {
		// Directories hold no records; the glob names the files in them.
		if st, err := os.Stat(m); err != nil {
			return nil, err
		} else if !st.IsDir() {
			files = append(files, m)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no file matches %q", s.pattern)
	}
	slices.Sort(files)
	return files, nil
}

// measure records the files' sizes for Size. A file that grows while
// it is read makes Size's done pass total: Size then reports done as the
// total.
func (s *Source) measure() error {
	s.before = make([]int64, len(s.files))
	s.ids = make([]string, len(s.files))
	var total int64
	for i, name := range s.files {
		if s.obj != nil {
			s.before[i] = total
			total += s.obj.sizes[name]
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return err
		}
		s.ids[i] = idOf(st).String()
		s.before[i] = total
		total += st.Size()
	}
	s.total.Store(total)
	return nil
}

// openFile opens files[i] and makes the reader start at offset, the start
// of line. A resumed file with a header has it read again first, since
// the decoder may map columns by it.
func (s *Source) openFile(i int, offset, line int64) error {
	name := s.files[i]
	f, size, err := s.openInput(name)
	if err != nil {
		// Position still names the end of the file before, which is true.
		return err
	}
	s.closeFile()
	s.cur, s.f = i, f
	if offset > size {
		return fmt.Errorf("checkpoint offset %d is past the end of %s (%d bytes): the file changed since", offset, name, size)
	}
	s.rd.reset(f, 0, 1)
	s.inHeader = s.header != nil
	if offset == 0 {
		s.base.Store(s.before[i] - s.rd.read.Load())
		return nil
	}
	if s.inHeader {
		if err := s.readHeader(name); err != nil {
			return err
		}
	}
	if err := s.checkBoundary(name, offset); err != nil {
		return err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	s.rd.reset(f, offset, line)
	s.base.Store(s.before[i] + offset - s.rd.read.Load())
	return nil
}

// input is an open file or object.
type input interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}

// openInput opens file or object name and returns its size; a file's
// identity goes into ids.
func (s *Source) openInput(name string) (input, int64, error) {
	if s.obj != nil {
		f, err := s.obj.open(name)
		if err != nil {
			return nil, 0, err
		}
		return f, f.Size(), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if i := slices.Index(s.files, name); s.bulk == nil && i >= 0 && i < len(s.ids) {
		s.ids[i] = idOf(st).String()
	}
	return f, st.Size(), nil
}

// checkBoundary catches a file replaced since the checkpoint: every record
// etld reads ends with a newline, so a record starts at 0, after one, or at
// the end of a file whose last line has none.
func (s *Source) checkBoundary(name string, offset int64) error {
	var b [1]byte
	if _, err := s.f.ReadAt(b[:], offset-1); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if b[0] == '\n' {
		return nil
	}
	if _, err := s.f.ReadAt(b[:], offset); err == io.EOF {
		return nil
	}
	return fmt.Errorf("checkpoint offset %d in %s is not at the start of a record: the file changed since", offset, name)
}

// readHeader reads the current file's header record, skipping blank lines
// before it, and hands it to the decoder.
func (s *Source) readHeader(name string) error {
	for {
		rec, line, err := s.rd.next()
		if err == io.EOF {
			return fmt.Errorf("%s: the header is gone: the file changed since the checkpoint", name)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if len(rec) == 0 {
			continue
		}
		if err := s.decodeHeader(rec); err != nil {
			return fmt.Errorf("%s:%d: header: %w", name, line, err)
		}
		s.inHeader = false
		return nil
	}
}

func (s *Source) closeFile() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
