package journal

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"
)

// QuarantinedLine is a channel line a reader refused: it does not decode,
// is not valid UTF-8, is filed in the wrong channel, or its seq does not
// continue the channel's numbering. The line stays where it is (readers
// skip it the same way every time); a copy is kept in
// quarantine/lines.ndjson for the operator.
type QuarantinedLine struct {
	At      time.Time `json:"at"`
	Channel string    `json:"channel"`
	File    string    `json:"file"`   // the segment's name when the line was found
	Offset  int64     `json:"offset"` // the line's byte offset in that file
	Seq     uint64    `json:"seq,omitempty"`
	Reason  string    `json:"reason"`
	// Line is the line's text when it is valid UTF-8; LineBase64 the
	// line's bytes otherwise.
	Line       string `json:"line,omitempty"`
	LineBase64 string `json:"lineBase64,omitempty"`
	// Key identifies the line (channel and content) so that a line seen
	// again, by another reader or after a restart, is recorded once.
	Key string `json:"key"`
}

// Quarantiner is a Store that keeps the lines its readers refused
// (FileStore does).
type Quarantiner interface {
	// Quarantined lists the refused lines, oldest first.
	Quarantined(ctx context.Context) ([]QuarantinedLine, error)
}

var _ Quarantiner = (*FileStore)(nil)

// quarantine is the store's record of refused lines.
type quarantine struct {
	af *appendFile

	mu     sync.Mutex
	loaded bool                // guarded by mu
	keys   map[string]struct{} // guarded by mu
}

func newQuarantine(dir string, policy FsyncPolicy, s *FileStore) *quarantine {
	return &quarantine{af: newAppendFile(filepath.Join(dir, "quarantine", "lines.ndjson"), policy, s.log), keys: map[string]struct{}{}}
}

func quarantineKey(channel string, line []byte) string {
	h := sha256.New()
	h.Write([]byte(channel))
	h.Write([]byte{0})
	h.Write(line)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// add records q unless a line with its key was recorded before. A failure
// to record is logged, never returned: a refused line must not block the
// good ones.
func (s *FileStore) quarantineLine(q QuarantinedLine, line []byte) {
	qu := s.quar
	q.Key = quarantineKey(q.Channel, line)
	if utf8.Valid(line) {
		q.Line = string(line)
	} else {
		q.LineBase64 = base64.StdEncoding.EncodeToString(line)
	}
	q.At = time.Now().UTC()
	s.log.Warn("aacp journal: quarantined a channel line", "channel", q.Channel, "file", q.File, "offset", q.Offset, "reason", q.Reason)
	qu.mu.Lock()
	defer qu.mu.Unlock()
	if !qu.loaded {
		all, err := s.readQuarantine()
		if err != nil {
			s.log.Warn("aacp journal: cannot read the quarantine", "err", err)
		}
		for _, r := range all {
			qu.keys[r.Key] = struct{}{}
		}
		qu.loaded = err == nil
	}
	if _, seen := qu.keys[q.Key]; seen {
		return
	}
	b, err := json.Marshal(q)
	if err != nil {
		s.log.Warn("aacp journal: cannot encode a quarantine record", "err", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(qu.af.path), 0o755); err != nil {
		s.log.Warn("aacp journal: cannot record a quarantined line", "err", err)
		return
	}
	if err := qu.af.append(append(b, '\n')); err != nil {
		s.log.Warn("aacp journal: cannot record a quarantined line", "err", err)
		return
	}
	qu.keys[q.Key] = struct{}{}
}

func (s *FileStore) readQuarantine() ([]QuarantinedLine, error) {
	data, err := os.ReadFile(s.quar.af.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the quarantine: %w", err)
	}
	var out []QuarantinedLine
	seen := map[string]bool{}
	eachLine(data, func(line []byte) {
		var q QuarantinedLine
		if json.Unmarshal(line, &q) == nil && q.Key != "" && !seen[q.Key] {
			seen[q.Key] = true
			out = append(out, q)
		}
	})
	return out, nil
}

// Quarantined implements Quarantiner.
func (s *FileStore) Quarantined(context.Context) ([]QuarantinedLine, error) {
	return s.readQuarantine()
}

// QuarantineSummary reads the quarantine of the journal in dir without
// opening a Store: how many distinct lines readers refused, and when the
// latest was found (zero when none). A missing quarantine is none. The
// file is read as a stream, so its size does not matter.
func QuarantineSummary(dir string) (n int, latest time.Time, err error) {
	f, err := os.Open(filepath.Join(dir, "quarantine", "lines.ndjson"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read the quarantine: %w", err)
	}
	defer f.Close()
	seen := map[string]bool{}
	dec := json.NewDecoder(f)
	for {
		var q struct {
			At  time.Time `json:"at"`
			Key string    `json:"key"`
		}
		if err := dec.Decode(&q); err != nil {
			// The end, or a torn last record (a crash while it was
			// written): what came before it counts.
			return n, latest, nil
		}
		if q.Key == "" || seen[q.Key] {
			continue
		}
		seen[q.Key] = true
		n++
		if q.At.After(latest) {
			latest = q.At
		}
	}
}
