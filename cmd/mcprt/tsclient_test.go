package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// TestOfficialTypeScriptClient drives the real binary with the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// testdata/tsclient/package-lock.json), once per protocol revision, through
// every feature: handshake, ping, tools (structuredContent checked by the
// SDK against each outputSchema, tool errors, agents, dynamic registration
// and list_changed, a call the client abandons), resources (list,
// templates, text and blob reads, a template read, NOT_FOUND, subscribe,
// notifications/resources/updated, unsubscribe), prompts (list, get,
// missing arguments, content fitted to the revision), completion,
// logging/setLevel and notifications/message, progress, and the client
// answering sampling/createMessage, elicitation/create and roots/list
// (with roots list_changed). The binary runs behind testdata/tsclient/tee.mjs,
// which records both directions; every line the server wrote must then
// validate against the official schema of the negotiated revision (vendored in
// testdata/mcp-schema), and the server must exit 0 when the
// client closes its stdin. Without node or npm the test skips, saying why;
// a failed install of the pinned packages fails it.
func TestOfficialTypeScriptClient(t *testing.T) {
	node, modules := npmInstall(t, "tsclient")
	bin := wiretest.Build(t)
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			dir := nodeWorkDir(t, "tsclient", modules, "client.mjs", "tee.mjs")
			rec := func(name string) string { return filepath.Join(dir, name) }
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, node, "client.mjs")
			run.Dir = dir
			run.Env = append(os.Environ(), "MCPRT_BIN="+bin, "MCPRT_REV="+rev, "TEE_IN="+rec("in.jsonl"),
				"TEE_OUT="+rec("out.jsonl"), "TEE_ERR="+rec("stderr.log"), "TEE_EXIT="+rec("exit"))
			out, err := run.CombinedOutput()
			if err != nil {
				stderr, _ := os.ReadFile(rec("stderr.log"))
				t.Fatalf("the TypeScript SDK client failed (%v):\n%s\nserver stderr:\n%s", err, out, clip(string(stderr)))
			}
			t.Logf("%d checks passed", bytes.Count(append([]byte{'\n'}, out...), []byte("\nok [")))
			exit, err := os.ReadFile(rec("exit"))
			if err != nil || string(exit) != "0" {
				t.Fatalf("the server did not exit 0 when the client closed its stdin: %q (%v)", exit, err)
			}
			in, _ := os.ReadFile(rec("in.jsonl"))
			stdout, _ := os.ReadFile(rec("out.jsonl"))
			t.Run("schema", func(t *testing.T) {
				s := loadSchema(t, schemaDir(t), rev)
				registerByteFormat(s)
				checkServerTranscript(t, s, in, stdout)
			})
		})
	}
}

// resultDefs maps each client request method to the schema definition of
// its result.
var resultDefs = map[string]string{
	"initialize": "InitializeResult", "ping": "EmptyResult", "tools/list": "ListToolsResult",
	"tools/call": "CallToolResult", "resources/list": "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult", "resources/read": "ReadResourceResult",
	"resources/subscribe": "EmptyResult", "resources/unsubscribe": "EmptyResult",
	"prompts/list": "ListPromptsResult", "prompts/get": "GetPromptResult",
	"completion/complete": "CompleteResult", "logging/setLevel": "EmptyResult",
}

// serverMessageDefs maps what the server sends on its own (requests to
// the client, notifications) to the definition of the message.
var serverMessageDefs = map[string]string{
	"ping": "PingRequest", "sampling/createMessage": "CreateMessageRequest", "roots/list": "ListRootsRequest",
	"elicitation/create": "ElicitRequest", "notifications/message": "LoggingMessageNotification",
	"notifications/progress": "ProgressNotification", "notifications/cancelled": "CancelledNotification",
	"notifications/resources/updated":      "ResourceUpdatedNotification",
	"notifications/resources/list_changed": "ResourceListChangedNotification",
	"notifications/tools/list_changed":     "ToolListChangedNotification",
	"notifications/prompts/list_changed":   "PromptListChangedNotification",
}

// checkServerTranscript validates every line the server wrote (stdout)
// against s: each a whole JSON-RPC message; results against the result
// definition of the client request (in) they answer and ServerResult;
// requests and notifications against their own definition and
// ServerRequest or ServerNotification. It then checks that the transcript
// holds what the client script exercised, so that a path that went quiet
// cannot pass unvalidated.
func checkServerTranscript(t *testing.T, s *mcpSchema, in, stdout []byte) {
	t.Helper()
	methods := map[string]string{} // the client's request ids (JSON) → method
	for _, l := range splitLines(t, "client", in) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("client line %s: %v", clip(string(l)), err)
		}
		if m.Method != "" && m.ID != nil {
			methods[string(m.ID)] = m.Method
		}
	}
	seen := map[string]int{} // "result <method>", "error <method>", or a server method
	for _, l := range splitLines(t, "server", stdout) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			t.Errorf("server line is not a JSON object: %s", clip(string(l)))
			continue
		}
		if err := s.validate(t, "JSONRPCMessage", l); err != nil {
			t.Errorf("%v\n%s", err, clip(string(l)))
		}
		var method string
		_ = json.Unmarshal(m["method"], &method)
		var defs []string
		switch {
		case method != "":
			union := "ServerNotification"
			if m["id"] != nil {
				union = "ServerRequest"
			}
			def, ok := serverMessageDefs[method]
			if !ok {
				t.Errorf("the server sent %s, which this test does not expect: %s", method, clip(string(l)))
				continue
			}
			defs = []string{union, def}
			seen[method]++
		case m["error"] != nil:
			defs = []string{s.firstDef("JSONRPCErrorResponse", "JSONRPCError")}
			seen["error "+methods[string(m["id"])]]++
		case m["result"] != nil:
			req, ok := methods[string(m["id"])]
			if !ok {
				t.Errorf("a result for id %s, which the client never used: %s", m["id"], clip(string(l)))
				continue
			}
			seen["result "+req]++
			if err := s.validate(t, s.firstDef("JSONRPCResultResponse", "JSONRPCResponse"), l); err != nil {
				t.Errorf("%v\n%s", err, clip(string(l)))
			}
			for _, def := range []string{resultDefs[req], "ServerResult"} {
				if err := s.validate(t, def, m["result"]); err != nil {
					t.Errorf("%s result: %v\n%s", req, err, clip(string(l)))
				}
			}
		default:
			t.Errorf("neither a request, a notification, a result nor an error: %s", clip(string(l)))
		}
		for _, def := range defs {
			if err := s.validate(t, def, l); err != nil {
				t.Errorf("%v\n%s", err, clip(string(l)))
			}
		}
	}
	want := []string{"result initialize", "result ping", "result tools/list", "result tools/call",
		"result resources/list", "result resources/templates/list", "result resources/read",
		"result resources/subscribe", "result resources/unsubscribe", "result prompts/list", "result prompts/get",
		"result completion/complete", "result logging/setLevel", "error resources/read", "error prompts/get",
		"error completion/complete", "error logging/setLevel", "error resources/subscribe",
		"notifications/tools/list_changed", "notifications/resources/updated", "notifications/message",
		"notifications/progress", "sampling/createMessage", "roots/list"}
	if s.rev >= "2025-06-18" {
		want = append(want, "elicitation/create")
	}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("%s: the transcript has no %s; seen %v", s.rev, w, seen)
		}
	}
}

// registerByteFormat teaches s's validator the "byte" format (base64, as
// OpenAPI names it) that 2025-11-25 gives blob and data members: with
// formats asserted, an unknown format fails every value.
func registerByteFormat(s *mcpSchema) {
	s.compiler.RegisterFormat("byte", func(v any) bool {
		str, ok := v.(string)
		if !ok {
			return true // the format constrains strings only
		}
		_, err := base64.StdEncoding.DecodeString(str)
		return err == nil
	}, "string")
}

// splitLines splits a recorded stream into its lines, which must all be
// complete.
func splitLines(t *testing.T, who string, b []byte) [][]byte {
	t.Helper()
	if len(b) == 0 {
		t.Fatalf("the %s wrote nothing", who)
	}
	if b[len(b)-1] != '\n' {
		t.Errorf("the %s's last line is incomplete: %s", who, clip(string(b[bytes.LastIndexByte(b, '\n')+1:])))
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'})
}

// npmInstall returns node and the node_modules directory of the pinned
// packages of testdata/<name> (package.json and package-lock.json),
// installed with npm ci. Installs are kept under the user's cache
// directory (mcprt/node/<name>-<hash of both files>, npm's own cache in
// mcprt/npm), so that a later run reuses them; a new lock file means a new
// install. It skips when node or npm is missing and fails when the install
// fails.
func npmInstall(t *testing.T, name string) (node, modules string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed; the %s test needs it", name)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed; the %s test needs it", name)
	}
	h := sha256.New()
	files := map[string][]byte{}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
		h.Write(b)
	}
	root := filepath.Join(os.TempDir(), "mcprt-cache")
	if dir, err := os.UserCacheDir(); err == nil {
		root = filepath.Join(dir, "mcprt")
	}
	trees := filepath.Join(root, "node")
	final := filepath.Join(trees, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	const marker = ".mcprt-installed"
	if _, err := os.Stat(filepath.Join(final, marker)); err == nil {
		return node, filepath.Join(final, "node_modules")
	}
	if err := os.MkdirAll(trees, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(trees, name+"-installing-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--cache", filepath.Join(root, "npm"), "--prefer-offline",
		"--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = tmp
	start := time.Now()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("cannot install the pinned packages of testdata/%s from the npm registry (%v):\n%s", name, err, out)
	}
	t.Logf("installed the pinned packages of testdata/%s in %v (kept in %s)", name, time.Since(start).Round(time.Millisecond), final)
	if err := os.WriteFile(filepath.Join(tmp, marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(final, marker)); err == nil {
		return node, filepath.Join(final, "node_modules") // another run kept its install first
	}
	_ = os.RemoveAll(final) // an install that never finished
	if err := os.Rename(tmp, final); err != nil {
		// Another run may have put its install there first.
		if _, serr := os.Stat(filepath.Join(final, marker)); serr != nil {
			t.Fatalf("keeping the install of testdata/%s: %v", name, err)
		}
	}
	return node, filepath.Join(final, "node_modules")
}

// nodeWorkDir returns a new directory holding the named files of
// testdata/<name> and a node_modules link to modules, for node to run the
// scripts in.
func nodeWorkDir(t *testing.T, name, modules string, scripts ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range append([]string{"package.json"}, scripts...) {
		b, err := os.ReadFile(filepath.Join("testdata", name, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	return dir
}
