//go:build race

package runtime_test

// raceEnabled: the race detector slows the keyed property tests about
// tenfold; they run fewer random rounds under it (the workers' races
// show in any round).
const raceEnabled = true
