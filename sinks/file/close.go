package file

import (
	"context"
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/connector"
)

// Close flushes, publishes what is still in parts (see the package doc)
// and closes the file. A flush that fails (a full disk) leaves whole
// records in the parts, which are published still. It is safe after a
// failed Open and twice.
func (s *Sink) Close(ctx context.Context) error {
	s.closed = true
	if s.out == nil {
		return nil
	}
	err := s.flush()
	// A flush that failed (a full disk) left every file at a whole
	// record, so the parts can still be published; only an fsync that
	// failed leaves their content in doubt.
	if s.staged && s.torn == nil && s.syncErr == nil {
		perr := s.closePart()
		switch {
		case perr != nil:
		case s.resumable && !s.covered:
			perr = s.discard()
		default:
			perr = s.publish(s.pending)
		}
		err = errors.Join(err, perr)
		if err != nil && !s.resumable {
			s.dropParts()
		}
	}
	var partErr error
	if s.f != nil && s.f != s.out {
		partErr = s.f.Close()
	}
	outErr := s.out.Close()
	s.f, s.out = nil, nil
	return errors.Join(err, partErr, outErr)
}

// shorten keeps an error message readable when a row holds a long text.
func shorten(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// errorf prefixes the file's path to the sink's own errors; errors of the
// os package name it already, and the runtime adds the sink's name.
func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{s.path}, args...)...)
}

// bindErrorf names the sink as well: the planner reports Bind's errors
// among those of every sink.
func (s *Sink) bindErrorf(format string, args ...any) error {
	return fmt.Errorf("sink %q (%s): "+format, append([]any{s.name, s.path}, args...)...)
}

var (
	_ connector.Sink            = (*Sink)(nil)
	_ connector.SinkSnapshotter = (*Sink)(nil)
	_ connector.Committer       = (*Sink)(nil)
	_ connector.Meter           = (*Sink)(nil)
	_ connector.RunAware        = (*Sink)(nil)
	_ connector.FileWriter      = (*Sink)(nil)
)
