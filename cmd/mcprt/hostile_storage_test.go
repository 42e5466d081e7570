package main

// Storage failures through the binary (the hostile round three): a full
// disk (a small tmpfs mounted by the test), a file-size limit
// (RLIMIT_FSIZE on the child), a read-only data directory and a data
// directory removed under a running server. Each call that cannot be
// recorded gets a clear STORAGE_* tool error, nothing crashes, reads keep
// working, and writes work again by themselves once the cause is gone.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// mountTmpfs mounts a tmpfs of size (mount's syntax, "4m") on a fresh
// directory of the test, unmounted at its end. Where mounting is
// impossible (not root, no mount rights) the test is skipped, saying so.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("SKIPPED, NOT PASSED: cannot mount a tmpfs for the full-disk case (%v: %s); it needs root with mount rights. "+
			"The RLIMIT_FSIZE and fault-injection tests cover write failures without it.", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// remount changes the options of a tmpfs mounted by mountTmpfs.
func remount(t *testing.T, dir, opts string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opts, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, opts, err, out)
	}
}

// fillDisk writes a file in dir until the file system is full and returns
// its path (remove it to free the space).
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v, want ENOSPC", dir, err)
			}
			break
		}
	}
	// Fill the last partial blocks too.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// checkStorageErr fails t unless e is the messaging protocol's "channel
// unavailable" (E_ROUTING_003, retryable) caused by the storage condition
// cause, with a message saying what to do.
func checkStorageErr(t *testing.T, what string, e *aerr, cause string) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s succeeded, want E_ROUTING_003 caused by %s", what, cause)
	}
	if e.Code != "E_ROUTING_003" || !e.Retryable || !strings.Contains(e.Message, cause) || !strings.Contains(e.Message, "free space") {
		t.Fatalf("%s: %s (retryable %v): %s; want E_ROUTING_003, retryable, caused by %s, saying to free space", what, e.Code, e.Retryable, e.Message, cause)
	}
}

// A full disk: creating a channel (its lock file) and appending fail with
// STORAGE_FULL, retryable; the processes live, reads work; freeing the
// space makes sends and receives work again without a restart.
func TestStorageFullDiskMessaging(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "4m")
	data := filepath.Join(mnt, "aacp")
	env := "MCPRT_STORE_DIR=" + filepath.Join(mnt, "store")
	snd := startAgent(t, data, "snd", "Manager", env)
	rcv := startAgent(t, data, "rcv", "Implementation", env)
	snd.ok(t, "aacp_register_agent", `{"agentId":"third","type":"Implementation"}`)
	rcv.receive(t, `{"waitMs":0}`) // registers rcv
	snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":1}`))
	if m := rcv.receiveOne(t); anum(m, "payload", "n") != 1 {
		t.Fatalf("before the disk filled: %v", m)
	}
	filler := fillDisk(t, mnt)

	// A new channel on the full disk (its lock file used to be mapped
	// from a sparse file: SIGBUS), then an old one.
	_, e := snd.await(t, snd.send("aacp_send", sendArgsTo("third", "CUSTOM_PING", `{"n":2}`)))
	checkStorageErr(t, "aacp_send into a new channel on a full disk", e, "STORAGE_FULL")
	big := `{"blob":"` + strings.Repeat("z", 300<<10) + `"}`
	_, e = snd.await(t, snd.send("aacp_send", sendArgsTo("rcv", "CUSTOM_PING", big)))
	checkStorageErr(t, "aacp_send of 300 KiB on a full disk", e, "STORAGE_FULL")
	// Reads still work in both processes.
	snd.ok(t, "aacp_agents", `{}`)
	rcv.receive(t, `{"waitMs":0}`)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	snd.ok(t, "aacp_send", sendArgsTo("third", "CUSTOM_PING", `{"n":3}`))
	snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":4}`))
	if m := rcv.receiveOne(t); anum(m, "payload", "n") != 4 {
		t.Fatalf("after space returned: %v", m)
	}
	for _, p := range []*aproc{snd, rcv} {
		if p.p.Exited() {
			t.Fatalf("%s exited: %s", p.agent, p.p.Stderr())
		}
		if strings.Contains(p.p.Stderr(), "SIGBUS") || strings.Contains(p.p.Stderr(), "panic") {
			t.Fatalf("%s crashed: %s", p.agent, p.p.Stderr())
		}
	}
}

// A full disk under the SQLite store: memory_store fails STORAGE_FULL,
// retryable; memory_retrieve works; freeing the space makes writes work.
func TestStorageFullDiskMemory(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "4m")
	c, _ := newDomainClient(t, filepath.Join(mnt, "store"))
	c.ok("memory_store", `{"key":"kept","value":"before"}`)
	filler := fillDisk(t, mnt)
	big := `"` + strings.Repeat("q", 90<<10) + `"`
	e := c.toolError(c.send("memory_store", `{"key":"big","value":`+big+`}`), "STORAGE_FULL")
	if !e.Retryable {
		t.Errorf("STORAGE_FULL is not retryable: %+v", e)
	}
	if r := c.ok("memory_retrieve", `{"key":"kept"}`); r["value"] != "before" {
		t.Fatalf("memory_retrieve on a full disk: %v", r)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.ok("memory_store", `{"key":"big","value":`+big+`}`)
}

// A read-only data directory: reads work (the database is opened
// read-only), writes fail STORAGE_READ_ONLY, and once the directory is
// writable again writes work without a restart.
func TestStorageReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "8m")
	dir := filepath.Join(mnt, "store")
	c, _ := newDomainClient(t, dir)
	c.ok("memory_store", `{"key":"kept","value":"written"}`)
	c.p.CloseStdin()
	c.p.Wait(t)
	remount(t, mnt, "ro")
	c, _ = newDomainClient(t, dir, "MCPRT_TRACE_ENABLED=false")
	if r := c.ok("memory_retrieve", `{"key":"kept"}`); r["value"] != "written" {
		t.Fatalf("memory_retrieve on a read-only data dir: %v", r)
	}
	e := c.toolError(c.send("memory_store", `{"key":"new","value":1}`), "STORAGE_READ_ONLY")
	if e.Retryable || !strings.Contains(e.Message, "writable") {
		t.Errorf("STORAGE_READ_ONLY: %+v", e)
	}
	remount(t, mnt, "rw")
	c.ok("memory_store", `{"key":"new","value":1}`)
}

// A file-size limit (RLIMIT_FSIZE, set on the child): appends past it fail
// STORAGE_FULL (EFBIG), the server keeps serving.
func TestStorageFileSizeLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "mcprt-limited")
	script := "#!/bin/sh\nulimit -f 4096\nexec " + wiretest.Build(t) + ` "$@"` + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := wiretest.Start(t, wrapper, wiretest.Options{Env: aacpEnv(filepath.Join(dir, "aacp"), "snd", "Manager", "MCPRT_STORE_DIR="+filepath.Join(dir, "store"))})
	p.Handshake(t, latestRevision)
	snd := &aproc{p: p, agent: "snd", stash: map[string]string{}}
	snd.ok(t, "aacp_register_agent", `{"agentId":"rcv","type":"Implementation"}`)
	big := `{"blob":"` + strings.Repeat("z", 600<<10) + `"}`
	var e *aerr
	for i := 0; i < 20 && e == nil; i++ {
		_, e = snd.await(t, snd.send("aacp_send", sendArgsTo("rcv", "CUSTOM_PING", big)))
	}
	checkStorageErr(t, "aacp_send past the file-size limit", e, "file too large")
	snd.ok(t, "aacp_agents", `{}`)
	if p.Exited() {
		t.Fatalf("the server exited: %s", p.Stderr())
	}
}

// The store directory removed under a running server (rm -rf): a write
// would go into unlinked files and be lost at the next start, so it is
// refused with STORAGE_GONE, for the SQLite store and for the messaging
// journal alike; the processes keep answering.
func TestStorageRemovedUnderServer(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	storeDir := filepath.Join(base, "store")
	c, _ := newDomainClient(t, storeDir, "MCPRT_TRACE_ENABLED=false")
	c.ok("memory_store", `{"key":"before","value":1}`)

	data := filepath.Join(base, "aacp")
	rcv := startAgent(t, data, "rcv", "Implementation", "MCPRT_STORE_DIR="+filepath.Join(base, "rstore"))
	rcv.receive(t, `{"waitMs":0}`)
	snd := startAgent(t, data, "snd", "Manager", "MCPRT_STORE_DIR="+filepath.Join(base, "sstore"))
	snd.ok(t, "aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":1}`))
	rcv.receiveOne(t)

	for _, d := range []string{storeDir, data} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	e := c.toolError(c.send("memory_store", `{"key":"after","value":2}`), "STORAGE_GONE")
	if !strings.Contains(e.Message, "removed") || !strings.Contains(e.Message, "restart") {
		t.Errorf("STORAGE_GONE does not say what happened and what to do: %s", e.Message)
	}
	_, ae := snd.await(t, snd.send("aacp_send", sendArgsTo("rcv", "CUSTOM_PING", `{"n":2}`)))
	if ae == nil || !strings.Contains(ae.Message, "STORAGE_GONE") {
		t.Fatalf("aacp_send into a removed journal: %+v, want an error caused by STORAGE_GONE", ae)
	}
	snd.ok(t, "aacp_agents", `{}`)
	c.ok("memory_list", `{}`)
}
