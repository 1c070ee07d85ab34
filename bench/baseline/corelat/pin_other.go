//go:build !linux

package main

// pin does nothing where the thread's CPU cannot be set: the two threads
// then run where the system puts them.
func pin(int) error { return nil }
