package main

// Shutdown while the client does not read stdout, or has closed it.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- shutdown while stdout is stuck ------------------------------

// stuckServer starts the binary with a stdout pipe nobody reads, shrunk to
// one page, and floods it with pings until the server's writer is blocked
// on the full pipe. Only Linux can shrink a pipe and measure its contents
// (F_SETPIPE_SZ, FIONREAD); elsewhere the test is skipped.
func stuckServer(t *testing.T, env ...string) (*exec.Cmd, fmt.Stringer, <-chan int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux pipes (F_SETPIPE_SZ, FIONREAD) to block the server's stdout")
	}
	const (
		fSetPipeSz = 1031   // F_SETPIPE_SZ
		fionread   = 0x541B // FIONREAD
		pipeSize   = 4096
	)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() }) // runs last
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSz, pipeSize); e != 0 {
		w.Close()
		t.Skipf("cannot shrink the stdout pipe: %v", e)
	}
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv(env...)
	cmd.Dir = t.TempDir() // the store of the traced calls stays out of the tree
	cmd.Stdout = w
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan int, 1)
	reaped := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
		close(reaped)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
		<-reaped
		// What the server did write is protocol, and its logs are JSON.
		out, _ := io.ReadAll(r)
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if err := wiretest.CheckProtocolLine(line); err != nil {
				t.Errorf("stdout: %v", err)
				break
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if _, err := wiretest.CheckLogLine(line); err != nil {
				t.Errorf("stderr: %v", err)
			}
		}
	})
	go func() {
		// Far more answers than the pipe holds; this goroutine blocks too
		// once the server stops reading, and ends when the process dies.
		var b strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
		_, _ = io.WriteString(stdin, b.String())
	}()
	// Wait until a thread of the server is blocked in write(2) on fd 1:
	// /proc/PID/task/TID/syscall then reads "1 0x1 ..." (x86-64 and most
	// Linux ABIs number write 1... arm64 numbers it 64), and the thread's
	// wchan names the pipe's write path, so it is asleep waiting for a
	// reader rather than copying.
	writeNr := "1"
	if runtime.GOARCH == "arm64" {
		writeNr = "64"
	}
	deadline := time.Now().Add(wiretest.ExpectTimeout)
	for !blockedWritingStdout(cmd.Process.Pid, writeNr) {
		if time.Now().After(deadline) {
			var n int32
			_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), fionread, uintptr(unsafe.Pointer(&n)))
			t.Fatalf("no thread of the server is blocked writing stdout after %v (the pipe holds %d bytes)",
				wiretest.ExpectTimeout, n)
		}
		time.Sleep(time.Millisecond) // poll /proc: there is nothing to wait on
	}
	return cmd, stderr, exited
}

// blockedWritingStdout reports whether a thread of process pid is asleep in
// the write system call on file descriptor 1, waiting for room in the pipe.
// Where the kernel hides wchan ("0"), being in the call has to do.
func blockedWritingStdout(pid int, writeNr string) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(task, "syscall"))
		if err != nil || !strings.HasPrefix(string(b), writeNr+" 0x1 ") {
			continue
		}
		wchan, err := os.ReadFile(filepath.Join(task, "wchan"))
		if err != nil || string(wchan) == "0" || strings.Contains(string(wchan), "pipe_write") {
			return true
		}
	}
	return false
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitExit waits for the exit code from stuckServer.
func waitExit(t *testing.T, exited <-chan int, stderr fmt.Stringer) int {
	t.Helper()
	select {
	case code := <-exited:
		return code
	case <-time.After(wiretest.WaitTimeout):
		t.Fatalf("the process did not exit within %v\nstderr:\n%s", wiretest.WaitTimeout, stderr)
		return 0
	}
}

// TestFirstSignalWithStdoutBlocked: a client that stops reading stdout does
// not keep the first signal from shutting down (exit 0).
func TestFirstSignalWithStdoutBlocked(t *testing.T) {
	t.Parallel()
	cmd, stderr, exited := stuckServer(t, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=600000")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, exited, stderr); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, stderr)
	}
}

func TestShutdownTimeoutBoundsAStuckWriter(t *testing.T) {
	t.Parallel()
	cmd, stderr, exited := stuckServer(t, "MCPRT_SERVER_SHUTDOWN_TIMEOUT_MS=200")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, exited, stderr); code != 0 {
		t.Fatalf("exit code %d, want 0 once server.shutdownTimeoutMs has passed\nstderr:\n%s", code, stderr)
	}
}

// TestClosedStdout: a client that closes its end of stdout makes every write
// fail (EPIPE; SIGPIPE is ignored). The server must end promptly and
// cleanly — not hang, not die of SIGPIPE, not panic (a Go panic exits 2).
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(wiretest.Build(t))
	cmd.Env = wiretest.CleanEnv()
	cmd.Dir = t.TempDir()
	cmd.Stdout = w
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer stdin.Close()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// stdin stays open: only the failed write can end the session.
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if code := waitExit(t, exited, stderr); code != 0 && code != 1 {
		t.Fatalf("exit code %d with a closed stdout, want 0 or 1\nstderr:\n%s", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if _, err := wiretest.CheckLogLine(line); err != nil {
			t.Error(err)
		}
	}
}
