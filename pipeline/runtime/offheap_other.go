//go:build !linux

package runtime

import "errors"

// Elsewhere state stays on the Go heap: newOffHeap returns nil.
const mapSupported = false

var errNoMap = errors.New("no anonymous mappings on this platform")

func mapBytes(int) ([]byte, error)           { return nil, errNoMap }
func remapBytes([]byte, int) ([]byte, error) { return nil, errNoMap }
func unmapBytes([]byte)                      {}
