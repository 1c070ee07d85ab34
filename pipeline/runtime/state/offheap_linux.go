//go:build linux

package state

import "golang.org/x/sys/unix"

const MapSupported = true

// mapBytes maps n zeroed bytes of private anonymous memory.
func mapBytes(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// remapBytes grows a mapping to n bytes, moving its pages (not copying
// them) when it cannot grow in place.
func remapBytes(b []byte, n int) ([]byte, error) {
	return unix.Mremap(b, n, unix.MREMAP_MAYMOVE)
}

func unmapBytes(b []byte) { _ = unix.Munmap(b) } // only fails for a bad range, which a map entry is not
