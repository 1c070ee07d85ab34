package udf

import (
	"bytes"
	"fmt"
)

// checkVectorCounts refuses a module a section of which starts with a
// vector count its bytes cannot hold (every item takes a byte at least).
// Why here, before wazero sees the module: wazero allocates a vector's
// declared count before it reads the items, so that a module of a dozen
// bytes declaring 2^32-1 functions costs 16 GiB before it is refused,
// enough to take the daemon and every pipeline in it down at a reload.
// The custom (0), start (8) and data count (12) sections hold no vector.
func checkVectorCounts(code []byte) error {
	if !bytes.HasPrefix(code, wasmHeader) {
		return nil // wazero says what it is not
	}
	r := &wreader{b: code, off: len(wasmHeader)}
	for !r.done() {
		id := r.byte()
		body := r.take(uint64(r.u32()))
		if r.err != nil {
			return nil // a truncated module: wazero refuses it without reading a count
		}
		if id == 0 || id == 8 || id == 12 {
			continue
		}
		br := &wreader{b: body}
		br.count()
		if br.err != nil {
			return fmt.Errorf("not a valid module: section %d: %w", id, br.err)
		}
	}
	return nil
}
