package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

// pin binds the calling thread (locked to its goroutine) to cpu.
func pin(cpu int) error {
	var mask [16]uint64 // 1024 CPUs
	if cpu < 0 || cpu >= 64*len(mask) {
		return fmt.Errorf("cpu %d out of range", cpu)
	}
	mask[cpu/64] = 1 << (cpu % 64)
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask[0]))); e != 0 {
		return fmt.Errorf("pin to cpu %d: %w", cpu, e)
	}
	return nil
}
