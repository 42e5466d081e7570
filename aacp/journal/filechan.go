package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// Channel directory layout: the active segment is messages.ndjson; a full
// segment is renamed messages.{last seq, 20 digits}.ndjson ("sealed") and
// a new active segment starts; messages.lock is the lock file; seq.json
// remembers the highest seq of segments removed by compaction, so that
// numbering continues after every segment is gone.
const (
	activeName  = "messages.ndjson"
	seqFileName = "seq.json"
)

// channelFile appends to one channel directory.
type channelFile struct {
	dir    string
	af     *appendFile
	maxSeg int64

	// The seq of the last line of the active segment as this process last
	// saw it, valid while the segment is the same file with the same
	// size. Guarded by af.mu.
	lastSeq     uint64
	lastDamaged uint64 // lines refused after lastSeq's
	lastIno     [2]uint64
	lastSize    int64

	// appended is set by this process's first append to the channel:
	// until then its local inboxes may not know the channel exists.
	appended atomic.Bool
}

func newChannelFile(dir string, policy FsyncPolicy, maxSeg int64, s *FileStore) *channelFile {
	af := newAppendFile(filepath.Join(dir, activeName), policy, s.log)
	af.hooks = s.hooks
	af.mark = policy == FsyncAlways
	return &channelFile{dir: dir, af: af, maxSeg: maxSeg, lastSize: -1}
}

// seqPrefix is how every encoded envelope starts (Seq is its first field
// and is zero when encoded): append splices the real number in its place.
var seqPrefix = []byte(`{"seq":0,`)

// append writes env with the channel's next seq and returns the seq and
// the write's number for waitSync. body, when not nil, is env's encoding
// with Seq 0 (envelope.AppendJSON). before, when not nil, runs under the
// channel's locks with the seq the line will get, before it is written;
// its error cancels the append.
func (c *channelFile) append(env *envelope.Envelope, body []byte, before func(seq uint64) error) (uint64, uint64, error) {
	if !bytes.HasPrefix(body, seqPrefix) {
		env.Seq = 0
		enc := getBuf()
		defer putBuf(enc)
		var err error
		if *enc, err = envelope.AppendJSON((*enc)[:0], env); err != nil {
			return 0, 0, fmt.Errorf("encode the envelope: %w", err)
		}
		body = *enc
	}
	body = body[len(seqPrefix):]
	buf := getBuf()
	defer putBuf(buf)
	line := *buf
	defer func() { *buf = line }()
	var seq, w uint64
	err := c.af.locked(func() error {
		last, err := c.last()
		if err != nil {
			return err
		}
		line = append(line[:0], `{"seq":`...)
		line = strconv.AppendUint(line, last+1, 10)
		line = append(line, ',')
		line = append(line, body...)
		line = append(line, '\n')
		if c.af.size > 0 && c.af.size+int64(len(line)) > c.maxSeg {
			if err := c.rotate(last); err != nil {
				return err
			}
		}
		if before != nil {
			if err := before(last + 1); err != nil {
				return err
			}
		}
		if w, err = c.af.write(line); err != nil {
			return err
		}
		seq = last + 1
		c.lastSeq, c.lastDamaged, c.lastIno, c.lastSize = seq, 0, c.af.ino, c.af.size
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	env.Seq = seq
	return seq, w, nil
}

// last returns the channel's last seq; af's locks are held.
//
// It is derived from the lines, never trusted from one line alone: the
// lines of the active segment are scanned in order from the sealed base
// (or, when the same file only grew, from where the last scan stopped),
// and a line counts only when its seq continues the numbering — above
// the last one, by at most one more than the damaged lines since. So a
// damaged line (a seq of 2^64-1, a repeated seq, garbage) can neither
// stop the numbering nor make it jump; readers apply the same rule.
func (c *channelFile) last() (uint64, error) {
	if c.lastSize == c.af.size && c.lastIno == c.af.ino {
		return c.lastSeq, nil
	}
	var from int64
	var seq, damaged uint64
	if c.lastIno == c.af.ino && c.lastSize > 0 && c.lastSize < c.af.size {
		from, seq, damaged = c.lastSize, c.lastSeq, c.lastDamaged
	} else {
		base, err := c.sealedBase()
		if err != nil {
			return 0, err
		}
		seq = base
	}
	if c.af.size > from {
		err := scanLines(c.af.f, from, c.af.size, func(line []byte) {
			s, ok := lineSeq(line)
			if ok && s > seq && s-seq <= damaged+1 {
				seq, damaged = s, 0
			} else {
				damaged++
			}
		})
		if err != nil {
			return 0, err
		}
	}
	c.lastSeq, c.lastDamaged, c.lastIno, c.lastSize = seq, damaged, c.af.ino, c.af.size
	return seq, nil
}

// lineSeq reads the seq of a stored line: fast for lines as written
// ({"seq":N,...}), by decoding otherwise.
func lineSeq(line []byte) (uint64, bool) {
	if rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`)); ok {
		if i := bytes.IndexByte(rest, ','); i > 0 {
			if n, err := strconv.ParseUint(string(rest[:i]), 10, 64); err == nil {
				return n, n > 0
			}
		}
	}
	var head struct {
		Seq uint64 `json:"seq"`
	}
	if json.Unmarshal(line, &head) != nil {
		return 0, false
	}
	return head.Seq, head.Seq > 0
}

// scanLines calls fn with each complete line of f between from and to
// (which end lines), reading in chunks.
func scanLines(f *os.File, from, to int64, fn func(line []byte)) error {
	buf := make([]byte, 0, 256<<10)
	var carry []byte
	for off := from; off < to; {
		n := min(int64(cap(buf)), to-off)
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, off); err != nil {
			return fmt.Errorf("read %s: %w", f.Name(), err)
		}
		off += n
		data := chunk
		if len(carry) > 0 {
			data = append(carry, chunk...)
		}
		used := eachLine(data, fn)
		carry = append(carry[:0:0], data[used:]...)
	}
	return nil
}

// sealedBase is the highest seq of sealed or compacted segments.
func (c *channelFile) sealedBase() (uint64, error) {
	segs, err := listSealed(c.dir)
	if err != nil {
		return 0, err
	}
	base := readSeqFile(c.dir)
	if n := len(segs); n > 0 {
		base = max(base, segs[n-1].last)
	}
	return base, nil
}

// rotate seals the active segment, whose last seq is last; af's locks are
// held. The next write creates a new active segment.
func (c *channelFile) rotate(last uint64) error {
	sealed := filepath.Join(c.dir, sealedName(last))
	if err := os.Rename(c.af.path, sealed); err != nil {
		return fmt.Errorf("seal segment %s: %w", sealed, err)
	}
	c.af.retire() // syncs the sealed segment
	if c.af.policy != FsyncNever {
		syncDir(c.dir)
	}
	return c.af.current()
}

// compact removes sealed segments whose last seq is below `below`.
func (c *channelFile) compact(below uint64) (int, error) {
	n := 0
	err := c.af.locked(func() error {
		segs, err := listSealed(c.dir)
		if err != nil {
			return err
		}
		var drop []segment
		for _, s := range segs {
			if s.last < below {
				drop = append(drop, s)
			}
		}
		if len(drop) == 0 {
			return nil
		}
		if top := drop[len(drop)-1].last; top > readSeqFile(c.dir) {
			if err := writeSeqFile(c.dir, top, c.af.policy); err != nil {
				return err
			}
		}
		for _, s := range drop {
			if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove segment: %w", err)
			}
			n++
		}
		if c.af.policy != FsyncNever {
			syncDir(c.dir)
		}
		return nil
	})
	return n, err
}

// segment is a sealed segment file.
type segment struct {
	path string
	last uint64
}

func sealedName(last uint64) string { return fmt.Sprintf("messages.%020d.ndjson", last) }

// listSealed returns a channel's sealed segments, oldest first.
func listSealed(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list segments: %w", err)
	}
	var out []segment
	for _, e := range ents {
		mid, ok := strings.CutPrefix(e.Name(), "messages.")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(mid, ".ndjson")
		if !ok || len(num) != 20 {
			continue
		}
		last, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, segment{path: filepath.Join(dir, e.Name()), last: last})
	}
	slices.SortFunc(out, func(a, b segment) int {
		switch {
		case a.last < b.last:
			return -1
		case a.last > b.last:
			return 1
		}
		return 0
	})
	return out, nil
}

func readSeqFile(dir string) uint64 {
	b, err := os.ReadFile(filepath.Join(dir, seqFileName))
	if err != nil {
		return 0
	}
	var v struct {
		LastSeq uint64 `json:"lastSeq"`
	}
	if json.Unmarshal(b, &v) != nil {
		return 0
	}
	return v.LastSeq
}

func writeSeqFile(dir string, last uint64, policy FsyncPolicy) error {
	tmp := filepath.Join(dir, ".seq.json.tmp")
	data := fmt.Appendf(nil, "{\"lastSeq\":%d}\n", last)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", seqFileName, err)
	}
	_, err = f.Write(data)
	if err == nil && policy != FsyncNever {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, seqFileName))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", seqFileName, err)
	}
	return nil
}

// lastSequence reads the channel's highest seq without appending.
func (c *channelFile) lastSequence() (uint64, error) {
	var seq uint64
	err := c.af.locked(func() (err error) {
		seq, err = c.last()
		return err
	})
	return seq, err
}
