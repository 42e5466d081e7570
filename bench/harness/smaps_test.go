package harness

import (
	"os"
	"runtime"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	const smaps = `00400000-0137d000 r-xp 00000000 08:01 123 /tmp/mcprt
Size:              15860 kB
Rss:                8820 kB
0137d000-0229b000 r--p 00f7d000 08:01 123 /tmp/mcprt
Rss:                9336 kB
1f0ff6c00000-1f0ff7400000 rw-p 00000000 00:00 0
Rss:                5568 kB
7fa3043d0000-7fa304690000 rw-p 00000000 00:00 0 [anon:x]
Rss:                1468 kB
7fa34cb7a000-7fa34ccd0000 r-xp 00028000 08:01 99 /usr/lib/libc.so.6
Rss:                 792 kB
7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]
Rss:                 132 kB
`
	got, err := parseSmaps([]byte(smaps), "/tmp/mcprt")
	if err != nil {
		t.Fatal(err)
	}
	want := MemoryMap{Executable: (8820 + 9336) << 10, OtherFiles: 792 << 10, Anonymous: (5568 + 1468 + 132) << 10,
		LargestAnonymous: 5568 << 10, Total: (8820 + 9336 + 5568 + 1468 + 792 + 132) << 10}
	if got != want {
		t.Fatalf("parseSmaps = %+v, want %+v", got, want)
	}
	if _, err := parseSmaps([]byte("nothing\n"), "/x"); err == nil {
		t.Fatal("a malformed smaps parsed")
	}
}

func TestProcMemoryMapSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/smaps is Linux's")
	}
	m, err := ProcMemoryMap(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.Executable == 0 || m.Anonymous == 0 || m.Total != m.Executable+m.OtherFiles+m.Anonymous {
		t.Fatalf("the test binary's own map is implausible: %+v", m)
	}
}
