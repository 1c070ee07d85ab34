package optest

// Must returns op, and panics on err: a test builds operators from calls
// it knows to be valid, often inside a table of constructors where there
// is no *testing.T to fail.
func Must[T any](op T, err error) T {
	if err != nil {
		panic(err)
	}
	return op
}
