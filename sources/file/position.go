package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// position is where the next record starts. It is stored as JSON so that a
// checkpoint can be read by a person deciding whether to resume from it.
type position struct {
	// V is the encoding's version, for a later change of it.
	V int `json:"v"`
	// File is the file being read, as the glob matched it; empty means
	// the start of the first file.
	File string `json:"file,omitempty"`
	// Offset is the byte offset of the next record in File.
	Offset int64 `json:"offset"`
	// Line is the 1-based line the next record starts on, so that error
	// positions stay right after a resume.
	Line int64 `json:"line"`
	// Files is the position of a followed source (version 2): every file
	// read past its start.
	Files []followPos `json:"files,omitempty"`
	// Group and Row place the next row of a bulk format's File (version
	// 3): its row group, and its row in the group.
	Group int   `json:"group,omitempty"`
	Row   int64 `json:"row,omitempty"`
	// Left counts the files a followed source let go of since its state
	// began (version 2): rotated away and dropped, truncated, gone.
	Left int `json:"left,omitempty"`
	// FileRow is the number of the next row in File, from 0. A restore
	// goes by it when it is set, and by Group and Row (positions saved
	// before it) when not: a format's pieces can depend on a setting of
	// its reader (the bytes of an Avro file's piece), and a file row is
	// the same row whatever its pieces.
	FileRow int64 `json:"file_row,omitempty"`
	// Done lists the objects a followed s3:// path read whole.
	Done []string `json:"done,omitempty"`
}

const (
	positionVersion       = 1
	followPositionVersion = 2
)

// Position returns where the record after the last batch Read returned
// starts: {"v":1,"file":"data/b.csv","offset":1234,"line":17}.
//
// A followed source's position lists every file read past its start:
// {"v":2,"files":[{"path":"app.log","dev":2049,"ino":1234,"offset":5678,
// "line":90,"head":"<sha-256 hex>","head_len":1024,"size":6000}]}.
func (s *Source) Position() ([]byte, error) {
	p := position{V: positionVersion, Line: 1}
	switch {
	case s.fl != nil && s.opened:
		files, err := s.followPosition()
		if err != nil {
			return nil, fmt.Errorf("position: %w", err)
		}
		out, err := json.Marshal(struct {
			V     int         `json:"v"`
			Files []followPos `json:"files"`
			Left  int         `json:"left,omitempty"`
		}{followPositionVersion, files, s.fl.left})
		if err != nil {
			return nil, fmt.Errorf("encode position: %w", err)
		}
		return out, nil
	case s.objFollow && s.bulk == nil && s.opened && s.files != nil:
		p.Done = slices.Clone(s.done)
		if s.cur >= 0 {
			p.File, p.Offset, p.Line = s.files[s.cur], s.rd.offset, s.rd.line
		}
	case s.bulk != nil:
		p = s.bulkPosition()
	case s.par != nil:
		p.File, p.Offset, p.Line = s.files[s.par.file], s.par.offset, s.par.line
	case s.files != nil:
		p.File, p.Offset, p.Line = s.files[s.cur], s.rd.offset, s.rd.line
	case s.restore != nil:
		p = *s.restore
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode position: %w", err)
	}
	return out, nil
}

// Restore makes Open start at pos, a value Position returned.
func (s *Source) Restore(pos []byte) error {
	p, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if s.opened {
		return errors.New("restore after open")
	}
	s.restore = &p
	return nil
}

func decodePosition(pos []byte) (position, error) {
	var p position
	dec := json.NewDecoder(bytes.NewReader(pos))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("position %.64q is not a file source position: %w", pos, err)
	}
	if dec.More() {
		return p, fmt.Errorf("position %.64q: data after the position", pos)
	}
	if p.V == followPositionVersion {
		return p, checkFollowPosition(pos, p)
	}
	if p.V == bulkPositionVersion {
		if p.Offset != 0 || p.Line != 0 || p.Files != nil || p.Group < 0 || p.Row < 0 || p.FileRow < 0 || (p.File == "" && (p.Group != 0 || p.Row != 0 || p.FileRow != 0)) {
			return p, fmt.Errorf("position %.64q: version 3 names a file, a row group and a row", pos)
		}
		return p, nil
	}
	switch {
	case p.V != positionVersion:
		return p, fmt.Errorf("position %.64q: version %d, want %d, %d or %d", pos, p.V, positionVersion, followPositionVersion, bulkPositionVersion)
	case p.Offset < 0:
		return p, fmt.Errorf("position %.64q: negative offset", pos)
	case p.Line < 1:
		return p, fmt.Errorf("position %.64q: line %d, want 1 or more", pos, p.Line)
	case p.Group != 0 || p.Row != 0 || p.FileRow != 0:
		return p, fmt.Errorf("position %.64q: a row group in version 1", pos)
	case p.File == "" && (p.Offset != 0 || p.Line != 1):
		return p, fmt.Errorf("position %.64q: an offset without a file", pos)
	}
	return p, nil
}

func checkFollowPosition(pos []byte, p position) error {
	if p.File != "" || p.Offset != 0 || p.Line != 0 || p.Files == nil {
		return fmt.Errorf("position %.64q: version 2 lists files", pos)
	}
	for _, f := range p.Files {
		switch {
		case f.Path == "":
			return fmt.Errorf("position %.64q: a file without a path", pos)
		case f.Offset <= 0 || f.Line < 1 || f.Size < 0:
			return fmt.Errorf("position %.64q: %s at offset %d, line %d", pos, f.Path, f.Offset, f.Line)
		case f.HeadLen != min(f.Offset, headLen) || len(f.Head) != 64:
			return fmt.Errorf("position %.64q: %s: a fingerprint of %d bytes, want %d", pos, f.Path, f.HeadLen, min(f.Offset, headLen))
		}
	}
	return nil
}
