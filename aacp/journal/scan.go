package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// ChannelDirs lists the channels stored under a journal directory as
// [sender, receiver] pairs, in directory order. A missing journal has
// none.
func ChannelDirs(dir string) ([][2]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "channels"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list the channels of %s: %w", dir, err)
	}
	var out [][2]string
	for _, e := range ents {
		s, r, ok := strings.Cut(e.Name(), "_to_")
		if e.IsDir() && ok && s != "" && r != "" {
			out = append(out, [2]string{s, r})
		}
	}
	return out, nil
}

// ScanChannel calls fn, in seq order, with each complete transmission of
// the channel sender → receiver in the journal directory dir whose seq is
// above after, reading the files directly (no lock, no claim: a reader
// beside the writers). Lines that do not decode are skipped. It is for
// indexing and rebuilding derived views, not for delivery.
func ScanChannel(dir, sender, receiver string, after uint64, fn func(env *envelope.Envelope) error) error {
	chDir := filepath.Join(dir, "channels", envelope.Channel(sender, receiver))
	sealed, err := listSealed(chDir)
	if err != nil {
		return fmt.Errorf("scan channel %s: %w", envelope.Channel(sender, receiver), err)
	}
	var files []string
	for _, s := range sealed {
		if s.last > after {
			files = append(files, s.path)
		}
	}
	files = append(files, filepath.Join(chDir, activeName))
	for _, path := range files {
		if err := scanFile(path, after, fn); err != nil {
			return err
		}
	}
	return nil
}

func scanFile(path string, after uint64, fn func(env *envelope.Envelope) error) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // rotated or compacted meanwhile, or never written
		}
		return fmt.Errorf("scan %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var env envelope.Envelope
		if json.Unmarshal(sc.Bytes(), &env) != nil || env.Seq <= after {
			continue // a torn or damaged line, or one indexed already
		}
		if err := fn(&env); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("scan %s: %w", path, err)
	}
	return nil
}
