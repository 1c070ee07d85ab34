package row

// Reset empties b for reuse by the one that made it, keeping its memory;
// its rows are zeroed, as NewRow promises. Only for a batch that was
// never sent and whose rows nobody holds (a decoder's scratch batch
// whose rows an operator in the same goroutine copied out).
func (b *Batch) Reset() {
	clear(b.Changes)
	b.Changes = b.Changes[:0]
	clear(b.arena)
	b.arena = b.arena[:0]
	b.Origin = nil
}
