package harness

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// CPUTime returns the CPU time the server has used so far, all threads,
// user and system: ProcRunTime (nanosecond resolution) where the kernel
// keeps it, else ProcCPUTime.
func (p *Process) CPUTime() (time.Duration, error) {
	if d, err := ProcRunTime(p.PID()); err == nil && d > 0 {
		return d, nil
	}
	return ProcCPUTime(p.PID())
}

// StatCPUTime returns utime+stime of the server from /proc/<pid>/stat
// (ProcCPUTime), whose resolution is one clock tick (ClockTick, usually
// 10 ms).
func (p *Process) StatCPUTime() (time.Duration, error) {
	return ProcCPUTime(p.PID())
}

// ProcRunTime returns the time the threads of process pid have spent
// running on a CPU, the sum of the first field of each
// /proc/<pid>/task/<tid>/schedstat, in nanoseconds. It is the same
// quantity as utime+stime at a far finer resolution; it misses the time of
// threads that have exited (the Go runtime does not end its threads). It
// returns 0 where the kernel keeps no such statistics.
func ProcRunTime(pid int) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := bytes.Fields(b)
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("harness: unexpected %s%s/schedstat", dir, t.Name())
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

// Memory returns the server's resident set now and at its peak.
func (p *Process) Memory() (Memory, error) {
	return ProcMemory(p.PID())
}

// Memory is a process's resident set size, in bytes.
type Memory struct {
	// RSS is the resident set now (VmRSS).
	RSS int64
	// Peak is the largest resident set so far (VmHWM).
	Peak int64
}

// ProcCPUTime returns utime+stime of process pid from /proc/<pid>/stat.
func ProcCPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields after the last ')'. State is field 3; utime and stime
	// are fields 14 and 15.
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, fmt.Errorf("harness: unexpected /proc/%d/stat", pid)
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("harness: unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("harness: unexpected /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * ClockTick(), nil
}

// ProcMemory returns VmRSS and VmHWM of process pid from
// /proc/<pid>/status.
func ProcMemory(pid int) (Memory, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	var found int
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		var dst *int64
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			dst = &m.RSS
		case bytes.HasPrefix(line, []byte("VmHWM:")):
			dst = &m.Peak
		default:
			continue
		}
		f := bytes.Fields(line[6:])
		if len(f) != 2 || string(f[1]) != "kB" {
			return Memory{}, fmt.Errorf("harness: unexpected line %q in /proc/%d/status", line, pid)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("harness: unexpected line %q in /proc/%d/status", line, pid)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("harness: no VmRSS/VmHWM in /proc/%d/status", pid)
	}
	return m, nil
}

// ClockTick returns the unit of the CPU times in /proc/<pid>/stat: one
// tick of USER_HZ, read from the AT_CLKTCK entry of /proc/self/auxv (10 ms
// when it cannot be read, as on every common Linux build).
func ClockTick() time.Duration {
	clockTickOnce.Do(func() { clockTick = readClockTick() })
	return clockTick
}

var (
	clockTickOnce sync.Once
	clockTick     time.Duration
)

func readClockTick() time.Duration {
	const atClkTck = 17
	fallback := 10 * time.Millisecond
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return fallback
	}
	word := int(unsafe.Sizeof(uintptr(0)))
	for i := 0; i+2*word <= len(b); i += 2 * word {
		var key, val uint64
		if word == 8 {
			key = binary.NativeEndian.Uint64(b[i:])
			val = binary.NativeEndian.Uint64(b[i+word:])
		} else {
			key = uint64(binary.NativeEndian.Uint32(b[i:]))
			val = uint64(binary.NativeEndian.Uint32(b[i+word:]))
		}
		if key == atClkTck && val > 0 {
			return time.Second / time.Duration(val)
		}
		if key == 0 {
			break
		}
	}
	return fallback
}

// LoadAverage returns the first three fields of /proc/loadavg (the 1, 5
// and 15 minute load averages), or "unknown". Commands print it beside
// their figures: other work on the machine during a run skews them.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "unknown"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
