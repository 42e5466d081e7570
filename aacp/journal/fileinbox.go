package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// Inbox implements Store. The inbox learns of new data from file
// notifications (inotify on Linux) on the channels directory and on each
// channel into the receiver, from appends made by this store, and from a
// poll tick.
func (s *FileStore) Inbox(receiver string) (Inbox, error) {
	if err := envelope.CheckAgentID(receiver); err != nil {
		return nil, err
	}
	in := &fileInbox{s: s, receiver: receiver, ch: make(chan struct{}, 1), readers: make(map[string]*chanReader)}
	in.dirty.Store(true)
	in.signal()
	poll := s.poll
	w, err := newWatcher(filepath.Join(s.dir, "channels"), in.event, s.log)
	if err != nil {
		s.log.Info("aacp journal: file notifications unavailable, polling", "err", err)
		if poll <= 0 {
			poll = 100 * time.Millisecond
		}
	} else if poll <= 0 {
		poll = time.Second
	}
	in.w = w
	in.stop = make(chan struct{})
	in.done = make(chan struct{})
	go in.tick(poll)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		in.Close()
		return nil, s.closedErr()
	}
	s.inboxes[receiver] = append(s.inboxes[receiver], in)
	s.mu.Unlock()
	return in, nil
}

type fileInbox struct {
	s        *FileStore
	receiver string
	ch       chan struct{}
	dirty    atomic.Bool // the set of channels may have changed
	w        *watcher    // nil when notifications are unavailable
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once

	readers map[string]*chanReader // by sender; only Read uses it
	gen     int64                  // the channels generation at the last look; only Read uses it
}

func (in *fileInbox) signal() {
	select {
	case in.ch <- struct{}{}:
	default:
	}
}

// event is the watcher's callback: newDir when the channels directory
// itself changed (a channel may have appeared).
func (in *fileInbox) event(newDir bool) {
	if newDir {
		in.dirty.Store(true)
	}
	in.signal()
}

func (in *fileInbox) tick(every time.Duration) {
	defer close(in.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-in.stop:
			return
		case <-t.C:
			in.event(true)
		}
	}
}

func (in *fileInbox) Changed() <-chan struct{} { return in.ch }

func (in *fileInbox) Close() error {
	in.once.Do(func() {
		close(in.stop)
		<-in.done
		if in.w != nil {
			in.w.close()
		}
		in.s.mu.Lock()
		in.s.inboxes[in.receiver] = slices.DeleteFunc(in.s.inboxes[in.receiver], func(x *fileInbox) bool { return x == in })
		in.s.mu.Unlock()
		for _, r := range in.readers {
			r.closeFile()
		}
	})
	return nil
}

func (in *fileInbox) Read(ctx context.Context, fn func(env *envelope.Envelope) error) error {
	if gen := in.s.channelsGeneration(); gen != in.gen {
		in.gen = gen // a process wrote to a channel it had not written to before
		in.dirty.Store(true)
	}
	if in.dirty.Swap(false) {
		if err := in.refresh(); err != nil {
			in.dirty.Store(true)
			return err
		}
	}
	senders := make([]string, 0, len(in.readers))
	for s := range in.readers {
		senders = append(senders, s)
	}
	slices.Sort(senders)
	for _, s := range senders {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := in.readers[s].read(fn); err != nil {
			return err
		}
	}
	return nil
}

// refresh finds the channels into the receiver.
func (in *fileInbox) refresh() error {
	root := filepath.Join(in.s.dir, "channels")
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("list channels: %w", err)
	}
	for _, e := range ents {
		sender, receiver, ok := envelope.SplitChannel(e.Name())
		if !ok || receiver != in.receiver || !e.IsDir() || in.readers[sender] != nil {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if in.w != nil {
			if err := in.w.add(dir); err != nil {
				in.s.log.Warn("aacp journal: cannot watch a channel, relying on polling", "dir", dir, "err", err)
			}
		}
		in.readers[sender] = &chanReader{in: in, dir: dir, sender: sender}
	}
	return nil
}

// chanReader follows one channel: sealed segments, then the active one,
// following it across rotations.
type chanReader struct {
	in     *fileInbox
	dir    string
	sender string
	f      *os.File  // the active segment as opened, or nil
	ino    [2]uint64 // f's identity
	off    int64     // offset in f of the first byte not yet passed
	last   uint64    // highest seq passed (or the compaction base)
	// started: last has been set from the channel's seq.json. damaged
	// counts the lines refused since the last one passed: each may have
	// held a seq, so the next good line may be that many above last+1.
	started bool
	damaged uint64
	durable int64 // f's bytes known to be on stable storage
	buf     []byte
}

func (r *chanReader) closeFile() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func (r *chanReader) read(fn func(*envelope.Envelope) error) error {
	if !r.started {
		r.last, r.started = readSeqFile(r.dir), true
	}
	for {
		if r.f == nil {
			// Open the active segment first, then read the sealed ones:
			// a rotation in between only makes lines come twice, and
			// the seq check drops the second copy.
			f, err := os.Open(filepath.Join(r.dir, activeName))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("open channel %s: %w", filepath.Base(r.dir), err)
			}
			segs, lerr := listSealed(r.dir)
			if lerr != nil {
				if f != nil {
					f.Close()
				}
				return lerr
			}
			for _, sg := range segs {
				if sg.last <= r.last {
					continue
				}
				if err := r.readSealed(sg.path, fn); err != nil {
					if f != nil {
						f.Close()
					}
					return err
				}
			}
			if f == nil {
				return nil
			}
			if same, err := sameFile(f, filepath.Join(r.dir, activeName)); err != nil || !same {
				// Rotated between the open and the listing: it was just
				// read as a sealed segment; start again from the new one.
				f.Close()
				if err != nil {
					return fmt.Errorf("stat channel %s: %w", filepath.Base(r.dir), err)
				}
				continue
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return fmt.Errorf("stat channel %s: %w", filepath.Base(r.dir), err)
			}
			r.f, r.ino, r.off, r.durable = f, inode(fi), 0, 0
		}
		if err := r.drain(r.f, &r.off, true, fn); err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(r.dir, activeName))
		if err == nil && inode(fi) == r.ino {
			return nil
		}
		// Rotated (or removed): what was written before the rotation is
		// complete now; take the rest and move on to the new segment.
		if err := r.drain(r.f, &r.off, true, fn); err != nil {
			return err
		}
		r.closeFile()
	}
}

func (r *chanReader) readSealed(path string, fn func(*envelope.Envelope) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // compacted meanwhile
	}
	if err != nil {
		return fmt.Errorf("open segment: %w", err)
	}
	defer f.Close()
	var off int64
	return r.drain(f, &off, false, fn)
}

// drain passes every complete line of f from *off on, advancing *off past
// each line passed (or skipped); a partial last line is left for later.
//
// Under FsyncAlways a line is passed only once it is on stable storage:
// in the active segment (active), where its writer may still be waiting
// for its fsync, the reader fsyncs the file itself before passing lines
// past what it already made durable. (Sealed segments were synced before
// they were sealed.)
func (r *chanReader) drain(f *os.File, off *int64, active bool, fn func(*envelope.Envelope) error) error {
	maxLine := r.in.s.maxLine
	if r.buf == nil {
		r.buf = make([]byte, 256<<10)
	}
	for {
		n, err := f.ReadAt(r.buf, *off)
		if err != nil && err != io.EOF {
			return fmt.Errorf("read channel %s: %w", filepath.Base(r.dir), err)
		}
		data := r.buf[:n]
		if nl := bytes.LastIndexByte(data, '\n'); active && r.in.s.policy == FsyncAlways && nl >= 0 && *off+int64(nl)+1 > r.durable {
			if err := r.makeDurable(f, *off+int64(nl)+1, *off+int64(n)); err != nil {
				return err
			}
		}
		used := 0
		for {
			i := bytes.IndexByte(data[used:], '\n')
			if i < 0 {
				break
			}
			line := data[used : used+i]
			if err := r.pass(line, f.Name(), *off+int64(used), fn); err != nil {
				*off += int64(used)
				return err
			}
			used += i + 1
		}
		*off += int64(used)
		if used == 0 && n == len(r.buf) {
			// One line fills the buffer.
			if len(r.buf) < maxLine+1 {
				r.buf = make([]byte, min(2*len(r.buf), maxLine+1))
				continue
			}
			skip, err := skipLine(f, *off)
			if err != nil || skip == 0 {
				return err // a giant line still being written, or an error
			}
			r.refuse(QuarantinedLine{File: filepath.Base(f.Name()), Offset: *off, Reason: fmt.Sprintf("over-long line (%d bytes; the limit is %d)", skip, maxLine)}, r.buf[:min(len(r.buf), 4096)])
			*off += skip
			continue
		}
		if n < len(r.buf) {
			return nil
		}
	}
}

// makeDurable makes sure that the active segment f, read up to read, is
// on stable storage up to need: the durable mark of a writer that has
// fsynced it says so (read after the data, see durable.go), or the
// reader fsyncs it itself.
func (r *chanReader) makeDurable(f *os.File, need, read int64) error {
	// The lock file at the path, opened for each look: a lock file
	// replaced meanwhile (and so its marks) must not vouch for a segment
	// created since, whose reset went to the new one.
	if lf, err := os.Open(filepath.Join(r.dir, lockPathFor(activeName))); err == nil {
		end := readMark(lf, r.ino)
		lf.Close()
		if end >= need {
			r.durable = end
			return nil
		}
	}
	if err := r.in.s.hooks.fsync(f); err != nil {
		return fmt.Errorf("make channel %s durable before reading it: %w", filepath.Base(r.dir), err)
	}
	r.durable = read
	return nil
}

// skipLine returns the length through the next newline from off, or 0
// when there is no newline yet.
func skipLine(f *os.File, off int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := f.ReadAt(buf, off+n)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return n + int64(i) + 1, nil
		}
		n += int64(k)
		if err == io.EOF || k == 0 {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// pass decodes one line and hands it to fn unless it is damaged,
// misfiled or already passed. A damaged line (not valid UTF-8, not an
// envelope, filed in the wrong channel, or with a seq that does not
// continue the numbering) is quarantined and skipped: it can neither
// block the lines after it nor move the numbering.
func (r *chanReader) pass(line []byte, file string, off int64, fn func(*envelope.Envelope) error) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	q := QuarantinedLine{File: filepath.Base(file), Offset: off}
	if !utf8.Valid(line) {
		q.Reason = "not valid UTF-8"
		r.refuse(q, line)
		return nil
	}
	var env envelope.Envelope
	if err := json.Unmarshal(line, &env); err != nil || env.Seq == 0 || env.MessageID == "" {
		q.Reason = "not an envelope with a seq and a messageId"
		if err != nil {
			q.Reason += ": " + err.Error()
		}
		r.refuse(q, line)
		return nil
	}
	q.Seq = env.Seq
	if env.Sender.AgentID != r.sender || env.Receiver.AgentID != r.in.receiver {
		q.Reason = fmt.Sprintf("misfiled: from %q to %q", env.Sender.AgentID, env.Receiver.AgentID)
		r.refuse(q, line)
		return nil
	}
	switch {
	case env.Seq <= r.last:
		q.Reason = fmt.Sprintf("seq %d repeated (the channel is at %d); the sender's retry after its ack timeout delivers the message again", env.Seq, r.last)
		r.refuse(q, line)
		return nil
	case env.Seq-r.last > r.damaged+1:
		q.Reason = fmt.Sprintf("seq %d does not continue the channel's numbering (at %d, %d damaged line(s) since)", env.Seq, r.last, r.damaged)
		r.refuse(q, line)
		return nil
	}
	if err := fn(&env); err != nil {
		return err
	}
	r.last, r.damaged = env.Seq, 0
	return nil
}

// refuse quarantines a damaged line.
func (r *chanReader) refuse(q QuarantinedLine, line []byte) {
	r.damaged++
	q.Channel = filepath.Base(r.dir)
	r.in.s.quarantineLine(q, line)
}
