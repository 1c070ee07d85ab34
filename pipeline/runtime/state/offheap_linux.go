//go:build linux

package state

import "golang.org/x/sys/unix"

const MapSupported = true

// mapBytes maps n zeroed bytes of private anonymous memory.
func mapBytes(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err == nil {
		hugePages(b)
	}
	return b, err
}

// remapBytes grows a mapping to n bytes, moving its pages (not copying
// them) when it cannot grow in place.
func remapBytes(b []byte, n int) ([]byte, error) {
	b, err := unix.Mremap(b, n, unix.MREMAP_MAYMOVE)
	if err == nil {
		hugePages(b)
	}
	return b, err
}

// hugePageMin is the size from which a mapping asks for huge pages.
const hugePageMin = 4 << 20

// hugePages asks the kernel to back a large mapping with transparent
// huge pages (2 MiB on x86-64), where it is set to do so on request
// (the common "madvise" setting): a key table's index and entries and
// an aggregate's accumulators are read at random, and on 4 KiB pages
// each read of a table of many megabytes also misses the TLB and walks
// the page tables. The cost: a touched huge page is resident whole, so
// an array filled from its start holds up to 2 MiB more than its
// written pages. Advice only: its failure (a kernel without THP)
// changes nothing.
func hugePages(b []byte) {
	if len(b) >= hugePageMin {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

func unmapBytes(b []byte) { _ = unix.Munmap(b) } // only fails for a bad range, which a map entry is not
