//go:build race

package expr

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// code that draws from a pool (encoding/json's scanner) allocates now and
// then; allocation counts of such code mean nothing under it.
const raceEnabled = true
