package pipetest

import (
	"bufio"
	"bytes"

	"github.com/etld/etld/pipeline/connector"
)

type rawRecord struct {
	raw  []byte
	line int // where the record starts, from 1
}

// splitRecords cuts a file's content into records as the file source
// does: by the format's own SplitFunc (a CSV field may hold a quoted
// newline), else one record a line, without the line terminator.
func splitRecords(data []byte, dec connector.Decoder) []rawRecord {
	split := bufio.ScanLines
	if sp, ok := dec.(connector.Splitter); ok {
		split = sp.SplitFunc(connector.DefaultMaxRecordBytes)
	}
	var out []rawRecord
	line, off := 1, 0
	for off < len(data) {
		adv, tok, err := split(data[off:], true)
		if adv == 0 || (err != nil && tok == nil) {
			// A bad tail the format cannot cut: hand it over whole, so
			// the format's error names it.
			out = append(out, rawRecord{raw: bytes.TrimRight(data[off:], "\r\n"), line: line})
			break
		}
		if tok != nil {
			out = append(out, rawRecord{raw: append([]byte(nil), tok...), line: line})
		}
		line += bytes.Count(data[off:off+adv], []byte("\n"))
		off += adv
	}
	return out
}
