package file

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A backfill reads the files again from their start and ends where a
// checkpoint's position was (connector.Rereader): the records before it,
// then io.EOF. The reading of files or objects that do not grow can (a
// text format up to the record at the position's offset, a bulk format
// up to the row the position's file_row numbers), and a followed file
// that was not rotated. A followed glob or rotated files may be gone
// since (the records before the position are then in a file the glob no
// longer finds), and a followed s3:// path's objects are read in the
// order they appeared, which a new listing does not give back.

// RereadTo implements connector.Rereader.
func (s *Source) RereadTo(pos []byte) error {
	if s.opened {
		return errors.New("reread after open")
	}
	if s.stop != nil && bytes.Equal(s.rereadPos, pos) {
		return nil // asked again: a followed read is a plain one by now
	}
	s.rereadPos = slices.Clone(pos)
	if s.fl != nil {
		return s.rereadFollowed(pos)
	}
	if s.objFollow {
		return errors.New("a followed s3:// path cannot be read again up to a checkpoint's position: its objects were read in the order they appeared, which a new listing does not give back")
	}
	p, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	switch {
	case s.bulk != nil && p.V != bulkPositionVersion:
		return fmt.Errorf("the checkpoint's position (version %d) was not taken by a read of format %s", p.V, s.formatName)
	case s.bulk != nil && p.File != "" && p.FileRow == 0 && (p.Group != 0 || p.Row != 0):
		return errors.New("the checkpoint's position names no row number in its file (file_row): it was taken by an etld before backfills")
	case s.bulk == nil && p.V != positionVersion:
		return fmt.Errorf("the checkpoint's position (version %d) was not taken by a plain read of files", p.V)
	}
	s.stop = &p
	return nil
}

// bulkStop checks, at Open, that the file a bulk reread stops in is
// still there, and notes its index.
func (s *Source) bulkStop() error {
	s.stopFile = -1
	if s.stop == nil || s.stop.File == "" {
		return nil
	}
	if s.stopFile = slices.Index(s.files, s.stop.File); s.stopFile < 0 {
		return fmt.Errorf("the checkpoint's position is in %s, which the path no longer finds: the rows before it cannot be read again", s.stop.File)
	}
	return nil
}

// cutBulk cuts a bulk reread's batch b, whose first row is row first of
// file file, at the position it stops at, and reports whether the
// position is reached: the rows from there on are not read.
func (s *Source) cutBulk(file int, first int64, b *row.Batch) (reached bool) {
	p := s.stop
	keep := int64(b.Len())
	switch {
	case s.stopFile < 0 || file > s.stopFile:
		keep = 0
	case file == s.stopFile:
		keep = max(0, min(keep, p.FileRow-first))
	}
	b.Changes = b.Changes[:keep]
	return s.stopFile < 0 || file > s.stopFile || (file == s.stopFile && first+keep >= p.FileRow)
}

// atStop reports whether a reread reached its position: the next record
// is the one the position names, or one after it.
func (s *Source) atStop() (bool, error) {
	p := s.stop
	if p.File == "" {
		return true, nil // the position of a source that had read nothing
	}
	i := slices.Index(s.files, p.File)
	if i < 0 {
		return false, fmt.Errorf("the checkpoint's position is in %s, which the path no longer finds: the records before it cannot be read again", p.File)
	}
	return s.cur > i || (s.cur == i && s.f != nil && s.rd.offset >= p.Offset), nil
}

// rereadFollowed rereads a followed file as a plain read of it up to
// the position: one file, named by path (no glob, no rotated_path), the
// one the position names (its device, inode and first bytes), and none
// let go of since the state began, whose records would be gone.
func (s *Source) rereadFollowed(pos []byte) error {
	p, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	switch {
	case isGlob(s.pattern) || s.fl.rotatedPath != "":
		return errors.New("a followed glob or rotated files cannot be read again up to a checkpoint's position: the files read before may be gone")
	case p.V != followPositionVersion:
		return fmt.Errorf("the checkpoint's position (version %d) was not taken by a followed read", p.V)
	case p.Left > 0:
		return fmt.Errorf("the followed file was rotated or truncated since the state began (%d files let go of): their records cannot be read again", p.Left)
	case len(p.Files) > 1:
		return fmt.Errorf("the checkpoint's position is in %d files: the file was rotated, and the records of the one before cannot be read again in order", len(p.Files))
	}
	stop := position{V: positionVersion, Line: 1}
	if len(p.Files) == 1 {
		e := p.Files[0]
		f, err := os.Open(s.pattern)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		id := idOf(st)
		head, err := headOf(f, e.HeadLen)
		if err != nil {
			return err
		}
		if e.Path != s.pattern || (e.Ino != 0 && (id.Dev != e.Dev || id.Ino != e.Ino)) || head != e.Head || st.Size() < e.Offset {
			return fmt.Errorf("%s is no longer the file the checkpoint's position is in (rotated, replaced or truncated): its records cannot be read again", s.pattern)
		}
		stop = position{V: positionVersion, File: s.pattern, Offset: e.Offset, Line: e.Line}
	}
	// The reread is a bounded read of the file.
	s.fl = nil
	s.stop = &stop
	return nil
}

// RereadRange implements connector.RangeRereader: a reread up to to
// (RereadTo, with its checks) that starts where from was, as a restore
// of a plain read does. A followed file's from is taken as a plain
// position in the one file; it must not have been rotated since from,
// which RereadTo's checks of to already refuse.
func (s *Source) RereadRange(from, to []byte) error {
	if err := s.RereadTo(to); err != nil {
		return err
	}
	p, err := decodePosition(from)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	start := p
	switch {
	case s.bulk != nil:
		if p.V != bulkPositionVersion {
			return fmt.Errorf("the range's start (version %d) was not taken by a read of format %s", p.V, s.formatName)
		}
		s.restore = &start
		return nil
	case p.V == positionVersion:
	case p.V == followPositionVersion:
		switch {
		case p.Left > 0 || len(p.Files) > 1:
			return errors.New("the followed file was rotated before the range's start: the records before it cannot be read again in order")
		case len(p.Files) == 0:
			start = position{V: positionVersion, Line: 1}
		case p.Files[0].Path != s.pattern:
			return fmt.Errorf("the range's start is in %s, not %s", p.Files[0].Path, s.pattern)
		default:
			start = position{V: positionVersion, File: s.pattern, Offset: p.Files[0].Offset, Line: p.Files[0].Line}
		}
	default:
		return fmt.Errorf("the range's start (version %d) was not taken by a read of files", p.V)
	}
	if s.stop.File != "" && start.File == s.stop.File && start.Offset > s.stop.Offset {
		return fmt.Errorf("the range's start (offset %d) is after its end (offset %d)", start.Offset, s.stop.Offset)
	}
	s.restore = &start
	return nil
}

var _ connector.RangeRereader = (*Source)(nil)
