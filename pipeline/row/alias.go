package row

import (
	"fmt"
	"strings"
	"unsafe"
)

// NewAliasDecoder decodes from s without copying: the strings it reads
// are substrings of s, so values decoded from one string of many
// encoded rows cost no allocation each (a batch decoded at once).
func NewAliasDecoder(s string) *Decoder { return itemDecoder(s) }

// DecodeRowText decodes the row encoded in b (AppendRow) into dst, which
// must have its width, its strings copied into text's shared chunks: a
// row read back from state for a batch costs no allocation of its own
// (CopyRow makes a copy of b and a slice), as Layout.Decode's. With text
// nil each string is a copy of its own (state.DecodeRowInto): for rows
// kept long, one of which would keep a whole chunk alive.
func DecodeRowText(dst Row, b []byte, text *Text) error {
	d := Decoder{buf: b, alias: true}
	if n := d.Count(1); d.err == nil && n != len(dst) {
		return fmt.Errorf("%w: a row of %d columns decoded into %d", ErrCorrupt, n, len(dst))
	}
	for i := range dst {
		v := d.Value()
		if v.s != "" {
			if text == nil {
				v.s = strings.Clone(v.s)
			} else {
				v.s = text.String(unsafe.Slice(unsafe.StringData(v.s), len(v.s)))
			}
		}
		dst[i] = v
	}
	return d.End()
}
