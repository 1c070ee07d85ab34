//go:build !linux

package state

import "errors"

// Elsewhere state stays on the Go heap: NewOffHeap returns nil.
const MapSupported = false

var errNoMap = errors.New("no anonymous mappings on this platform")

func mapBytes(int) ([]byte, error)           { return nil, errNoMap }
func remapBytes([]byte, int) ([]byte, error) { return nil, errNoMap }
func unmapBytes([]byte)                      {}
