package broker

import (
	"errors"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
	"github.com/mcprt/mcprt/aacp/journal"
)

// local is an agent this broker hosts.
//
// Lock order: rmu, then mu, then smu, then amu. rmu serialises the reads
// of the inbox (the journal I/O: a read of files or a NATS fetch), so
// that what is read is applied in the order it was read; mu guards the
// receiving side (the inbox: queued, handed-out and answered messages)
// and is held only to apply what a read returned, never across the read,
// so that Receive's hand-out and Inbox do not wait on the journal; smu
// guards the sending side (every change of a delivery's state, and the
// timers); amu guards the cumulative acknowledgements and the agent's
// type, which sends read (a send takes neither mu nor rmu).
type local struct {
	id      string
	release func() error
	ledger  journal.Ledger
	inbox   journal.Inbox
	gone    chan struct{} // closed by shutdown
	once    sync.Once

	rmu sync.Mutex // held across inbox.Read and the application of what it read

	mu       sync.Mutex
	queues   [3][]*item             // guarded by mu: by priority rank, arrival order
	items    map[string]*item       // guarded by mu: by every messageId standing for the item
	byReq    map[string]*item       // guarded by mu: by sender + requestId
	trackers map[string]*SeqTracker // guarded by mu: by sender
	open     map[string]*doneSet    // guarded by mu: by sender
	wake     chan struct{}          // guarded by mu: closed when items are queued
	arrivals uint64                 // guarded by mu: items created so far (item.order)

	smu    sync.Mutex
	timers timerHeap // guarded by smu

	amu  sync.Mutex
	acks map[string]uint64  // guarded by amu: sender → cumulative ack of its channel into us
	typ  envelope.AgentType // guarded by amu
}

// itemState is where an inbound message stands at its receiver.
type itemState int

const (
	queued   itemState = iota // waiting to be handed out
	inHand                    // handed out by Receive, not answered
	answered                  // ACKed received or queued; waiting for processed
)

// item is an inbound request at its receiver: the transmission to hand
// out, and every transmission of the request seen so far.
type item struct {
	env         envelope.Envelope
	ids         []string
	seqs        []uint64
	state       itemState
	redelivered bool
	order       uint64 // arrival order at this receiver
}

func (b *Broker) newLocal(id string, typ envelope.AgentType, release func() error) (*local, error) {
	ledger, err := b.store.Ledger(id)
	if err != nil {
		return nil, envelope.Errorf(envelope.CodeChannelUnavailable, "open the ledger of agent %q: %w", id, err)
	}
	inbox, err := b.store.Inbox(id)
	if err != nil {
		return nil, envelope.Errorf(envelope.CodeChannelUnavailable, "open the inbox of agent %q: %w", id, err)
	}
	return &local{
		id: id, typ: typ, release: release, ledger: ledger, inbox: inbox, gone: make(chan struct{}),
		items: make(map[string]*item), byReq: make(map[string]*item), trackers: make(map[string]*SeqTracker),
		open: make(map[string]*doneSet), wake: make(chan struct{}), acks: make(map[string]uint64),
	}, nil
}

func (l *local) shutdown() error {
	var err error
	l.once.Do(func() {
		close(l.gone)
		// An inbox is not closed under a running Read (ingest holds rmu
		// across it): a Receive racing a Release or an unregistration
		// finishes its read first.
		l.rmu.Lock()
		cerr := l.inbox.Close()
		l.rmu.Unlock()
		err = errors.Join(cerr, l.release())
	})
	return err
}

func (l *local) setType(t envelope.AgentType) {
	l.amu.Lock()
	l.typ = t
	l.amu.Unlock()
}

// agent is l as a sender; it takes only amu, so a send never waits on
// the receiving side.
func (l *local) agent() envelope.Agent {
	l.amu.Lock()
	defer l.amu.Unlock()
	return envelope.Agent{AgentID: l.id, Type: l.typ}
}

// ackFor is the cumulative acknowledgement to put in a message to peer.
func (l *local) ackFor(peer string) uint64 {
	l.amu.Lock()
	defer l.amu.Unlock()
	return l.acks[peer]
}

func (l *local) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, q := range l.queues {
		n += len(q)
	}
	return n
}

// enqueue appends it to its priority queue; mu is held.
func (l *local) enqueue(it *item) {
	r := min(it.env.Priority.Rank(), 2)
	l.queues[r] = append(l.queues[r], it)
	it.state = queued
}

// unqueue takes it out of its queue; mu is held.
func (l *local) unqueue(it *item) {
	r := min(it.env.Priority.Rank(), 2)
	for i, x := range l.queues[r] {
		if x == it {
			l.queues[r] = append(l.queues[r][:i], l.queues[r][i+1:]...)
			return
		}
	}
}

// forget drops it entirely: its transmissions no longer matter; mu is
// held.
func (l *local) forget(it *item) {
	if it.state == queued {
		l.unqueue(it)
	}
	for _, id := range it.ids {
		delete(l.items, id)
	}
	key := reqKey(it.env.Sender.AgentID, it.env.RequestID)
	if l.byReq[key] == it {
		delete(l.byReq, key)
	}
	if ds := l.open[it.env.Sender.AgentID]; ds != nil {
		ds.done(it.seqs...)
	}
}

// take hands out up to max queued messages of the given types (all when
// types is empty), HIGH first, then NORMAL, then LOW, each in arrival
// order, dropping expired ones on the way; it returns them and the
// channel that is closed when more are queued.
func (l *local) take(max int, types []string, now time.Time) ([]Message, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Message
	for r := range l.queues {
		q := l.queues[r]
		kept := q[:0]
		for _, it := range q {
			switch {
			case expiredAt(it.env.ExpiresAt(), now):
				it.state = answered // not queued any more: forget must not look
				l.forget(it)
			case len(out) < max && (len(types) == 0 || contains(types, it.env.MessageType)):
				it.state = inHand
				out = append(out, Message{Envelope: it.env, Redelivered: it.redelivered})
			default:
				kept = append(kept, it)
			}
		}
		clear(q[len(kept):])
		l.queues[r] = kept
	}
	return out, l.wake
}

// signal wakes the waiting receivers; mu is held.
func (l *local) signal() {
	close(l.wake)
	l.wake = make(chan struct{})
}

func reqKey(sender, requestID string) string { return sender + "\x00" + requestID }

func expiredAt(at, now time.Time) bool { return !at.IsZero() && !at.After(now) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// timer is a delivery to look at again at due.
type timer struct {
	due       time.Time
	requestID string
	receiver  string
	messageID string
}

// timerHeap is a min-heap of timers by due time.
type timerHeap []timer

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	i := len(*h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !(*h)[i].due.Before((*h)[p].due) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

// popDue removes and returns the earliest timer if it is due at now.
func (h *timerHeap) popDue(now time.Time) (timer, bool) {
	if len(*h) == 0 || (*h)[0].due.After(now) {
		return timer{}, false
	}
	top := (*h)[0]
	n := len(*h) - 1
	(*h)[0] = (*h)[n]
	*h = (*h)[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && (*h)[l].due.Before((*h)[m].due) {
			m = l
		}
		if r < n && (*h)[r].due.Before((*h)[m].due) {
			m = r
		}
		if m == i {
			return top, true
		}
		(*h)[i], (*h)[m] = (*h)[m], (*h)[i]
		i = m
	}
}
