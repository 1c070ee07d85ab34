package daemon

import (
	"time"
)

// HistoryLength is how many samples a pipeline's history keeps: 15
// minutes at the default interval of one second.
const HistoryLength = 900

// DefaultSampleInterval is how often the supervisor samples the counters
// of every pipeline for its history.
const DefaultSampleInterval = time.Second

// sample is a pipeline's totals at one moment: rows read by its sources
// and rows written by its sinks.
type sample struct {
	at      time.Time
	in, out int64
}

// ring keeps the newest HistoryLength samples. The unit's mutex guards it.
type ring struct {
	buf  []sample
	next int // where the next sample goes once buf is full
}

func (r *ring) add(s sample) {
	if len(r.buf) < HistoryLength {
		r.buf = append(r.buf, s)
		return
	}
	r.buf[r.next] = s
	r.next = (r.next + 1) % HistoryLength
}

// ordered returns the samples oldest first.
func (r *ring) ordered() []sample {
	out := make([]sample, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// Rate is the throughput between two samples, at the later one.
type Rate struct {
	At  time.Time `json:"t"`
	In  float64   `json:"rows_in_per_second"`
	Out float64   `json:"rows_out_per_second"`
}

// History is what /pipelines/{name}/history shows: rows per second in
// (read by the sources) and out (written by the sinks), oldest first,
// over the last 15 minutes.
type History struct {
	Name            string  `json:"name"`
	IntervalSeconds float64 `json:"interval_seconds"`
	Rates           []Rate  `json:"rates"`
}

// rates turns consecutive samples into rates. Counters only grow while a
// file's version runs; a negative step (never expected) counts as 0.
func rates(samples []sample) []Rate {
	out := make([]Rate, 0, max(len(samples)-1, 0))
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		dt := b.at.Sub(a.at).Seconds()
		if dt <= 0 {
			continue
		}
		out = append(out, Rate{At: b.at.UTC(), In: max(float64(b.in-a.in), 0) / dt, Out: max(float64(b.out-a.out), 0) / dt})
	}
	return out
}

// recentRate is the rate over the last span of samples (the whole ring
// when it is shorter), nil with fewer than two samples.
func recentRate(samples []sample, span time.Duration) *Rate {
	if len(samples) < 2 {
		return nil
	}
	last := samples[len(samples)-1]
	first := samples[0]
	for i := len(samples) - 2; i >= 0; i-- {
		first = samples[i]
		if last.at.Sub(first.at) >= span {
			break
		}
	}
	r := rates([]sample{first, last})
	if len(r) == 0 {
		return nil
	}
	return &r[0]
}

// sampleLoop samples every pipeline's totals each interval until the
// supervisor's context ends (at Shutdown).
func (s *Supervisor) sampleLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.sampleAll(now)
		}
	}
}

// sampleAll adds one sample to every unit's history.
func (s *Supervisor) sampleAll(now time.Time) {
	s.mu.Lock()
	units := make([]*unit, 0, len(s.units))
	for _, u := range s.units {
		units = append(units, u)
	}
	s.mu.Unlock()
	for _, u := range units {
		st := u.status()
		u.mu.Lock()
		u.history.add(sample{at: now, in: sumIn(st.Sources), out: sumOut(st.Sinks)})
		u.mu.Unlock()
	}
}

// History returns the rates of the pipeline called name.
func (s *Supervisor) History(name string) (History, bool) {
	u := s.byName(name)
	if u == nil {
		return History{}, false
	}
	u.mu.Lock()
	samples := u.history.ordered()
	u.mu.Unlock()
	return History{Name: name, IntervalSeconds: s.opt.SampleInterval.Seconds(), Rates: rates(samples)}, true
}

func sumIn(cs []Counter) int64 {
	var n int64
	for _, c := range cs {
		n += c.In
	}
	return n
}

func sumOut(cs []Counter) int64 {
	var n int64
	for _, c := range cs {
		n += c.Out
	}
	return n
}
