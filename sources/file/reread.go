package file

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/etld/etld/pipeline/connector"
)

// A backfill reads the files again from their start and ends where a
// checkpoint's position was (connector.Rereader): the records before it,
// then io.EOF. Only the plain reading of files that do not grow can: a
// followed file may have been rotated away since (the records before the
// position are then in a file the glob no longer finds), and a bulk
// format's or an s3:// path's positions are of another shape.

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
	switch {
	case s.objFollow || s.obj != nil:
		return errors.New("an s3:// path cannot be read again up to a checkpoint's position yet")
	case s.bulk != nil:
		return fmt.Errorf("a file of format %s cannot be read again up to a checkpoint's position yet", s.formatName)
	}
	p, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("reread: %w", err)
	}
	if p.V != positionVersion {
		return fmt.Errorf("the checkpoint's position (version %d) was not taken by a plain read of files", p.V)
	}
	s.stop = &p
	return nil
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
	switch p.V {
	case positionVersion:
	case followPositionVersion:
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
