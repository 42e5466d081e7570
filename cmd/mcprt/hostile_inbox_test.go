package main

// mcprt aacp inbox over a large inbox: its memory does not grow with the
// payloads stored (the hostile round three measured 600-750 MiB for
// 100,000 messages before it streamed).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// writeChannel writes n stored transmissions from snd to rcv, each with a
// payload of size bytes, as the journal stores them.
func writeChannel(t *testing.T, dir string, n, size int) {
	t.Helper()
	ch := filepath.Join(dir, "channels", "snd_to_rcv")
	if err := os.MkdirAll(ch, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(ch, "messages.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	blob := strings.Repeat("p", size)
	prios := []string{"LOW", "NORMAL", "HIGH"}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, `{"seq":%d,"version":"1.0.0","messageId":"m%07d","requestId":"r%07d","timestamp":"2026-01-01T00:00:00.000Z",`+
			`"sender":{"agentId":"snd","type":"Manager"},"receiver":{"agentId":"rcv","type":"Implementation"},`+
			`"messageType":"CUSTOM_BULK","priority":%q,"payload":{"i":%d,"blob":%q},"metadata":{"retryCount":0}}`+"\n",
			i, i, i, prios[i%3], i, blob)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Not parallel, so that it runs while the test process is small: a child
// started from it inherits its peak resident size as a floor of its own
// (the child begins life sharing the parent's memory), and the child's
// output goes to a file and is checked by streaming for the same reason.
func TestAACPInboxStreams(t *testing.T) {
	const n, size = 5000, 4096 // 20 MiB of payloads
	dir := t.TempDir()
	writeChannel(t, dir, n, size)
	bin := wiretest.Build(t)
	for _, args := range [][]string{{"inbox", "rcv"}, {"--json", "inbox", "rcv"}} {
		outPath := filepath.Join(t.TempDir(), "out")
		outFile, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"aacp", "--data-dir", dir}, args...)...)
		// The Go runtime reports the heap at every collection (gctrace):
		// that is the command's own memory. The rusage peak RSS of a child
		// also counts the test process's resident set at the moment it
		// was forked, so under a big -race test binary it says little.
		cmd.Env = append(wiretest.CleanEnv(), "GODEBUG=gctrace=1")
		var errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = outFile, &errOut
		err = cmd.Run()
		outFile.Close()
		if err != nil {
			t.Fatalf("mcprt aacp %v: %v: %s", args, err, errOut.String())
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		heap, gcs := peakHeapMB(errOut.String())
		t.Logf("mcprt aacp %v over %d messages (%d MiB of payloads): peak heap %d MB over %d collections (peak RSS %d MiB, the test's own included)",
			args, n, n*size>>20, heap, gcs, rss>>20)
		if heap > 24 {
			t.Errorf("mcprt aacp %v: the heap reached %d MB over %d MiB of payloads; want it streamed (under 24 MB)", args, heap, n*size>>20)
		}
		f, err := os.Open(outPath)
		if err != nil {
			t.Fatal(err)
		}
		if args[0] != "--json" {
			head := make([]byte, 200)
			k, _ := f.Read(head)
			f.Close()
			if !strings.Contains(string(head[:k]), fmt.Sprintf("%d unfinished", n)) {
				t.Fatalf("inbox table: %s", head[:k])
			}
			continue
		}
		count, first, last := jsonInboxSummary(t, f)
		f.Close()
		if count != n || first != "HIGH" || last != "LOW" {
			t.Fatalf("inbox --json: %d messages, first priority %s, last %s; want %d, HIGH, LOW", count, first, last, n)
		}
	}
}

// jsonInboxSummary reads {"agent":..., "messages":[...]} as a stream and
// returns how many messages it holds and the first and last priority.
func jsonInboxSummary(t *testing.T, r io.Reader) (count int, first, last string) {
	t.Helper()
	dec := json.NewDecoder(bufio.NewReader(r))
	depth := 0
	key := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return count, first, last
		}
		if err != nil {
			t.Fatalf("inbox --json is not JSON after %d messages: %v", count, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				depth++
				if v == '{' && depth == 3 {
					count++
				}
			default:
				depth--
			}
			key = ""
		case string:
			switch {
			case key == "priority" && depth == 3:
				if first == "" {
					first = v
				}
				last = v
				key = ""
			case key == "" && dec.More():
				key = v
			default:
				key = ""
			}
		default:
			key = ""
		}
	}
}

// gcLine matches the heap sizes of a gctrace line: "… 4->5->1 MB, 8 MB goal …".
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

// peakHeapMB returns the largest heap that GODEBUG=gctrace=1 lines on
// stderr report (at the start and at the end of each collection's mark),
// and how many collections there were. No collection means the heap
// never reached the first goal (4 MB).
func peakHeapMB(stderr string) (peak, gcs int) {
	for _, m := range gcLine.FindAllStringSubmatch(stderr, -1) {
		gcs++
		for _, v := range m[1:3] {
			if n, err := strconv.Atoi(v); err == nil && n > peak {
				peak = n
			}
		}
	}
	return peak, gcs
}
