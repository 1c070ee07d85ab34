package sql

// Frame is a window frame: ROWS / RANGE BETWEEN ... AND CURRENT ROW. The
// OVER aggregates fill it in; until then parseWindowFrame refuses it.
type Frame struct {
	At Pos // the ROWS or RANGE keyword
}

// parseWindowFrame reads a window frame, the current token ROWS or RANGE.
func (p *parser) parseWindowFrame() (*Frame, *Error) {
	return nil, p.errAt(p.tok(), "window frames (ROWS / RANGE BETWEEN ...) are not supported yet")
}

// frame writes a window frame.
func (f *formatter) frame(fr *Frame) {}
