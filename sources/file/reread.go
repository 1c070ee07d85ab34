package file

import (
	"errors"
	"fmt"
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
	switch {
	case s.fl != nil:
		return errors.New("a followed file (follow: true) cannot be read again up to a checkpoint's position: it may have been rotated since")
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

var _ connector.Rereader = (*Source)(nil)
