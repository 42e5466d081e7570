package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MemoryMap splits a process's resident set by what backs it, from
// /proc/<pid>/smaps: where a resident set larger than expected comes from.
type MemoryMap struct {
	// Executable is the resident part of the program file's mappings:
	// its code and read-only data, paged in from the file as they are
	// touched (a fault maps a few neighbouring pages with it, so a large
	// binary costs more than the code it runs).
	Executable int64
	// OtherFiles is the resident part of other file mappings (shared
	// libraries, a database's shared-memory index).
	OtherFiles int64
	// Anonymous is memory the process allocated: the Go heap, goroutine
	// stacks, runtime metadata and C-style allocations (modernc's SQLite
	// keeps its page cache there, outside the Go heap).
	Anonymous int64
	// LargestAnonymous is the largest anonymous mapping's resident part:
	// for a Go program, usually the heap arena.
	LargestAnonymous int64
	// Total is the resident set (VmRSS), the sum of the above.
	Total int64
}

// String formats m in MB.
func (m MemoryMap) String() string {
	mb := func(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) }
	return fmt.Sprintf("rss %s MB = executable %s + other files %s + anonymous %s (largest mapping, the Go heap arena: %s)",
		mb(m.Total), mb(m.Executable), mb(m.OtherFiles), mb(m.Anonymous), mb(m.LargestAnonymous))
}

// ProcMemoryMap returns the MemoryMap of process pid.
func ProcMemoryMap(pid int) (MemoryMap, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return MemoryMap{}, fmt.Errorf("harness: reading the executable of process %d: %w", pid, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return MemoryMap{}, fmt.Errorf("harness: reading the memory map of process %d: %w", pid, err)
	}
	return parseSmaps(b, exe)
}

// parseSmaps sums the Rss lines of an smaps file by the mapping they
// follow.
func parseSmaps(b []byte, exe string) (MemoryMap, error) {
	var m MemoryMap
	var anon []int64
	path := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header: range perms offset dev inode [path]
			if len(fields) < 5 {
				return MemoryMap{}, fmt.Errorf("harness: smaps header %q has %d fields, want at least 5", line, len(fields))
			}
			path = ""
			if len(fields) > 5 {
				path = fields[5]
			}
			continue
		}
		if fields[0] != "Rss:" || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return MemoryMap{}, fmt.Errorf("harness: smaps line %q: %w", line, err)
		}
		n := kb << 10
		m.Total += n
		switch {
		case path == exe || (exe != "" && filepath.Clean(path) == filepath.Clean(exe)):
			m.Executable += n
		case strings.HasPrefix(path, "/"):
			m.OtherFiles += n
		default: // [heap], [stack], [anon...], or no name
			m.Anonymous += n
			anon = append(anon, n)
		}
	}
	if err := sc.Err(); err != nil {
		return MemoryMap{}, fmt.Errorf("harness: reading smaps: %w", err)
	}
	if m.Total == 0 {
		return MemoryMap{}, fmt.Errorf("harness: smaps has no Rss lines")
	}
	sort.Slice(anon, func(i, j int) bool { return anon[i] > anon[j] })
	if len(anon) > 0 {
		m.LargestAnonymous = anon[0]
	}
	return m, nil
}
