package joinop

// ijTimers is one side's cleanup timers of an interval join: key ids by
// the time their timer fires. It is state.RunHeap's scheme (a timer set
// no earlier than the last one goes to the back of a FIFO run, any
// other into a heap; the least of the run's front and the heap's top
// comes out first) for this one item type, its comparisons inline: the
// generic heap's call of a less function per comparison was a tenth of
// the timers' cost. Timers of one time come out in no particular order.
type ijTimers struct {
	run  []ijTimer
	head int // run[head:] is the run
	heap []ijTimer
}

type ijTimer struct {
	at  int64
	kid int32
}

func (h *ijTimers) Len() int { return len(h.run) - h.head + len(h.heap) }

func (h *ijTimers) fromRun() bool {
	if h.head == len(h.run) {
		return false
	}
	return len(h.heap) == 0 || h.heap[0].at >= h.run[h.head].at
}

// Top is the least timer's time; there must be one.
func (h *ijTimers) Top() int64 {
	if h.fromRun() {
		return h.run[h.head].at
	}
	return h.heap[0].at
}

func (h *ijTimers) Push(x ijTimer) {
	n := len(h.run)
	switch {
	case n == h.head:
		h.run, h.head = append(h.run[:0], x), 0
	case x.at >= h.run[n-1].at:
		h.run = append(h.run, x)
	default:
		h.heap = append(h.heap, x)
		h.up(len(h.heap) - 1)
	}
}

// Pop removes and returns the least timer; there must be one.
func (h *ijTimers) Pop() ijTimer {
	if !h.fromRun() {
		x := h.heap[0]
		n := len(h.heap) - 1
		h.heap[0] = h.heap[n]
		h.heap = h.heap[:n]
		h.down(0)
		return x
	}
	x := h.run[h.head]
	h.head++
	switch {
	case h.head == len(h.run):
		h.run, h.head = h.run[:0], 0
	case h.head >= 64 && 2*h.head >= len(h.run):
		// Moving the run down costs no more than the pops that made room.
		n := copy(h.run, h.run[h.head:])
		h.run, h.head = h.run[:n], 0
	}
	return x
}

// Fill replaces the timers with items, in any order (a restore).
func (h *ijTimers) Fill(items []ijTimer) {
	h.run, h.head = h.run[:0], 0
	h.heap = append(h.heap[:0], items...)
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *ijTimers) up(i int) {
	x := h.heap[i]
	for i > 0 {
		p := (i - 1) / 2
		if h.heap[p].at <= x.at {
			break
		}
		h.heap[i] = h.heap[p]
		i = p
	}
	h.heap[i] = x
}

func (h *ijTimers) down(i int) {
	n := len(h.heap)
	if n == 0 {
		return
	}
	x := h.heap[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.heap[c+1].at < h.heap[c].at {
			c++
		}
		if h.heap[c].at >= x.at {
			break
		}
		h.heap[i] = h.heap[c]
		i = c
	}
	h.heap[i] = x
}
