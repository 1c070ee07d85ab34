package runtime

// Snapshotter is an operator with state that checkpoints keep: Snapshot
// encodes it at a barrier, Restore replaces it before the run starts.
// Both are called from the operator's goroutine (or before it starts).
type Snapshotter interface {
	Snapshot() ([]byte, error)
	Restore(state []byte) error
}
