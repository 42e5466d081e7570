package main

// The process contract: flags, exit codes, stdin EOF and read errors, signals, startup timeout.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// --- the process ------------------------------------------------

// runBinary runs the binary to completion with a clean environment.
func runBinary(t *testing.T, args []string, env []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	bin := wiretest.Build(t) // outside the run's limit: building is not what is measured
	ctx, cancel := context.WithTimeout(context.Background(), wiretest.WaitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = wiretest.CleanEnv(env...)
	cmd.Dir = t.TempDir() // what it creates under relative paths (the store) stays out of the tree
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcprt %v did not exit within %v", args, wiretest.WaitTimeout)
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("mcprt %v: %v", args, err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "-version"} {
		// The flag wins over any configuration: no config is loaded.
		stdout, stderr, code := runBinary(t, []string{arg}, []string{"MCPRT_BOGUS=1"}, "")
		if code != 0 || stdout != "mcprt "+version+"\n" || stderr != "" {
			t.Errorf("mcprt %s: code %d, stdout %q, stderr %q; want 0, %q, nothing", arg, code, stdout, stderr, "mcprt "+version+"\n")
		}
	}
}

func TestHelpFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--help", "-help", "-h"} {
		stdout, stderr, code := runBinary(t, []string{arg}, nil, "")
		if code != 0 || !strings.Contains(stdout, "Usage") || !strings.Contains(stdout, "--config") || stderr != "" {
			t.Errorf("mcprt %s: code %d, stdout %q, stderr %q; want 0 and the usage on stdout", arg, code, stdout, stderr)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--bogus"},
		{"-x"},
		{"serve"},
		{"--config"},
		{"--version", "extra"},
		{"--config", "a.json", "b.json"},
		{"--version=maybe"},
	} {
		stdout, stderr, code := runBinary(t, args, nil, "")
		if code != 2 {
			t.Errorf("mcprt %q: exit code %d, want 2", args, code)
		}
		if stdout != "" {
			t.Errorf("mcprt %q: stdout %q, want nothing", args, stdout)
		}
		if !strings.Contains(stderr, "mcprt:") || !strings.Contains(stderr, "--help") {
			t.Errorf("mcprt %q: stderr %q does not explain the usage error", args, stderr)
		}
	}
}

func TestStdinEOF(t *testing.T) {
	t.Parallel()
	t.Run("at once", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := runBinary(t, nil, nil, "")
		if code != 0 || stdout != "" {
			t.Fatalf("empty stdin: code %d, stdout %q; want 0 and nothing\n%s", code, stdout, stderr)
		}
	})
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		finish(t, p)
		p.ExpectLog(t, "about shutting down", func(m map[string]any) bool {
			return strings.HasPrefix(m["msg"].(string), "shutting down")
		})
	})
	t.Run("with a request in flight", func(t *testing.T) {
		t.Parallel()
		p := running(t, latestRevision)
		p.Send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		p.CloseStdin()
		expectResult(t, p, "1")
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		checkLogs(t, p)
	})
	t.Run("requests piped at once", func(t *testing.T) {
		t.Parallel()
		in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n"
		p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Stdin: strings.NewReader(in)})
		expectResult(t, p, "1")
		expectResult(t, p, "2")
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		p.ExpectSilence(t, 0)
		checkLogs(t, p)
	})
}

// TestStdinReadErrorExits1: a read error on stdin (here EISDIR: stdin is a
// directory) is a fatal error, exit 1, logged at level ERROR —
// not a clean end of input.
func TestStdinReadErrorExits1(t *testing.T) {
	t.Parallel()
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for range 3 { // the session's end races with Serve's result; try a few times
		p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Stdin: dir})
		if code := p.Wait(t); code != 1 {
			t.Fatalf("exit code %d with an unreadable stdin, want 1\nstderr:\n%s", code, p.Stderr())
		}
		p.ExpectSilence(t, 0)
		p.ExpectLog(t, "at level ERROR", func(m map[string]any) bool { return m["level"] == "ERROR" })
		checkLogs(t, p)
	}
}

func TestSignalsShutDownGracefully(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			// An answered request proves the signal handler is installed.
			p := running(t, latestRevision)
			pingOK(t, p, "1")
			p.Signal(sig)
			if code := p.Wait(t); code != 0 {
				t.Fatalf("exit code %d after %v, want 0\nstderr:\n%s", code, sig, p.Stderr())
			}
			p.ExpectSilence(t, 10*time.Millisecond)
			p.ExpectLog(t, "about the signal", func(m map[string]any) bool {
				return strings.Contains(m["msg"].(string), "signal") && m["signal"] == sig.String()
			})
			checkLogs(t, p)
		})
	}
}

// TestStartupTimeoutExits75 stalls startup on a NATS server that accepts
// the connection and never says a word (its connect timeout is a minute):
// the startup deadline ends the process with 75. (A FIFO as the config
// used to stall it too; it is now refused at once with 78, see
// TestHostileFilesFIFORefusedAtOnce.)
func TestStartupTimeoutExits75(t *testing.T) {
	t.Parallel()
	addr := silentServer(t)
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: []string{
		"MCPRT_SERVER_STARTUP_TIMEOUT_MS=300", "MCPRT_AACP_DATA_DIR=" + t.TempDir(),
		"MCPRT_AACP_BACKEND=nats", "MCPRT_NATS_URL=nats://" + addr, "MCPRT_NATS_CONNECT_TIMEOUT_MS=60000",
	}})
	began := time.Now()
	if code := p.Wait(t); code != 75 {
		t.Fatalf("exit code %d, want 75\nstderr:\n%s", code, p.Stderr())
	}
	if took := time.Since(began); took < 250*time.Millisecond {
		t.Errorf("exited after %v, before the 300ms startup timeout", took)
	}
	p.ExpectSilence(t, 0)
	lines := checkLogs(t, p)
	var found bool
	for _, m := range lines {
		if m["level"] == "ERROR" && strings.Contains(fmt.Sprint(m), "startupTimeoutMs") {
			found = true
		}
	}
	if !found {
		t.Errorf("no ERROR log line about server.startupTimeoutMs:\n%s", p.Stderr())
	}
}

// silentServer listens on a loopback port, accepts connections and never
// writes to them, until the test ends; it returns the address.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for a silent server: %v", err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, unanswered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
