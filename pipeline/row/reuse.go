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

// Reuse empties b for new rows, keeping its memory, without zeroing it:
// rows written next overwrite the old ones, which (and what their values
// point to) stay reachable until then. For a batch whose reader gave it
// back (connector.BatchRecycler) to a maker that overwrites every value
// of the rows it carves; at the rate batches are recycled, zeroing would
// cost what allocating them did.
func (b *Batch) Reuse() {
	b.Changes = b.Changes[:0]
	b.arena = b.arena[:0]
	b.Origin = nil
}
