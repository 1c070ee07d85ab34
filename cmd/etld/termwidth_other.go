//go:build !unix

package main

import "io"

// termWidth is 0, unknown: lines are not cut.
func termWidth(io.Writer) int { return 0 }
