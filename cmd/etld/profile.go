package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are etld run's --cpuprofile and --memprofile: files a user can
// send with a performance report, read with `go tool pprof`.
type profiles struct {
	cpu, mem string
	cpuFile  *os.File
}

// start begins the CPU profile, if one was asked for. Both files are
// created now, so that a path that cannot be written fails the run before
// any pipeline starts rather than after it ends.
func (p *profiles) start() error {
	if p.mem != "" {
		f, err := os.Create(p.mem)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		f.Close()
	}
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the heap profile: after a GC, so
// that it shows the memory still live at exit, not garbage not yet
// collected (the allocation counts since start are in it either way).
func (p *profiles) stop() error {
	var errs []error
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
		}
		p.cpuFile = nil
	}
	if p.mem != "" {
		runtime.GC()
		if err := writeHeapProfile(p.mem); err != nil {
			errs = append(errs, fmt.Errorf("--memprofile: %w", err))
		}
	}
	return errors.Join(errs...)
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
