package broker

import "slices"

// SeqTracker computes the cumulative acknowledgement of one channel: the
// highest seq such that it and every seq below it have been received.
// Seqs that arrive above a gap are remembered until the gap fills. Its
// zero value expects seq 1 first. It is not safe for concurrent use.
type SeqTracker struct {
	ack   uint64
	above map[uint64]struct{} // received seqs > ack+1
	top   uint64              // highest seq received
}

// Start declares every seq up to base received (the stream starts after
// base, as it does after the earlier part was compacted away).
func (t *SeqTracker) Start(base uint64) {
	if base > t.ack {
		t.ack = base
		t.top = max(t.top, base)
		for s := range t.above {
			if s <= base {
				delete(t.above, s)
			}
		}
		t.advance()
	}
}

// Observe records seq and reports whether it had been received before.
func (t *SeqTracker) Observe(seq uint64) (dup bool) {
	if seq == 0 {
		return false
	}
	if seq <= t.ack {
		return true
	}
	if _, ok := t.above[seq]; ok {
		return true
	}
	t.top = max(t.top, seq)
	if seq == t.ack+1 {
		t.ack = seq
		t.advance()
		return false
	}
	if t.above == nil {
		t.above = make(map[uint64]struct{})
	}
	t.above[seq] = struct{}{}
	return false
}

func (t *SeqTracker) advance() {
	for {
		if _, ok := t.above[t.ack+1]; !ok {
			return
		}
		delete(t.above, t.ack+1)
		t.ack++
	}
}

// Ack is the cumulative acknowledgement: every seq ≤ Ack was received.
func (t *SeqTracker) Ack() uint64 { return t.ack }

// Top is the highest seq received.
func (t *SeqTracker) Top() uint64 { return t.top }

// Gaps returns up to limit missing seqs between Ack and Top, lowest
// first.
func (t *SeqTracker) Gaps(limit int) []uint64 {
	var out []uint64
	for s := t.ack + 1; s < t.top && len(out) < limit; s++ {
		if _, ok := t.above[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// doneSet tracks which seqs of one inbound channel still matter to the
// receiver (queued, handed out, or answered "received" and awaiting
// "processed"), so that segments below the lowest of them can be
// compacted.
type doneSet struct {
	open map[uint64]struct{}
	top  uint64
}

func (d *doneSet) add(seq uint64) {
	if d.open == nil {
		d.open = make(map[uint64]struct{})
	}
	d.open[seq] = struct{}{}
	d.top = max(d.top, seq)
}

func (d *doneSet) seen(seq uint64) { d.top = max(d.top, seq) }

func (d *doneSet) done(seqs ...uint64) {
	for _, s := range seqs {
		delete(d.open, s)
	}
}

// low is the lowest seq still open, or top+1 when none is.
func (d *doneSet) low() uint64 {
	if len(d.open) == 0 {
		return d.top + 1
	}
	keys := make([]uint64, 0, len(d.open))
	for s := range d.open {
		keys = append(keys, s)
	}
	return slices.Min(keys)
}
