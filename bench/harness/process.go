package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Command is a server to launch.
type Command struct {
	// Name labels the server in figures and errors ("mcprt").
	Name string
	// Path is the executable.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env is added to the harness's own environment (later entries win).
	Env []string
	// Dir is the working directory ("" means the harness's).
	Dir string
	// Stderr receives the server's standard error. Nil means /dev/null, so
	// the server pays for its log writes but the harness pays nothing to
	// drain them. A writer that is not an *os.File is fed by a goroutine
	// that drains a pipe.
	Stderr io.Writer
}

// Process is a running server and the client end of its stdio. Its methods
// are not safe for concurrent use.
type Process struct {
	name   string
	cmd    *exec.Cmd
	stdin  *os.File // the server's stdin, our end
	stdout *os.File // the server's stdout, our end
	r      *bufio.Reader
	long   []byte // assembles lines longer than r's buffer
	nextID int64
	calls  int64 // tools/call requests answered so far
	waited chan struct{}
	werr   error

	reqHead []byte // `{"jsonrpc":"2.0","id":`
	reqTail []byte // `,"method":"tools/call","params":{...}}` + "\n"
}

// Start launches cmd with its standard input and output connected to the
// returned Process. The process is killed when ctx ends.
func Start(ctx context.Context, c Command) (*Process, error) {
	if c.Name == "" {
		c.Name = c.Path
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.WaitDelay = 5 * time.Second
	var devnull *os.File
	if c.Stderr == nil {
		if devnull, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
		cmd.Stderr = devnull
	} else {
		cmd.Stderr = c.Stderr
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if devnull != nil {
		devnull.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("harness: start %s: %w", c.Name, err)
	}
	p := &Process{
		name:   c.Name,
		cmd:    cmd,
		stdin:  inW,
		stdout: outR,
		r:      bufio.NewReaderSize(outR, 64<<10),
		nextID: 1,
		waited: make(chan struct{}),
	}
	go func() {
		p.werr = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

// Name returns the server's label.
func (p *Process) Name() string { return p.name }

// PID returns the server's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Calls returns the number of tools/call requests the server has answered
// on this connection (warm-up, checks and measured calls alike).
func (p *Process) Calls() int64 { return p.calls }

// DefaultProtocolVersion is the MCP revision Handshake asks for when given
// "": the one every server measured here speaks.
const DefaultProtocolVersion = "2025-06-18"

// Handshake initializes the session, lists the tools to check that tool is
// there, and calls it once with arguments (a JSON object; "" means {}),
// checking that the answer is a success. It prepares the request that
// Sequential and Pipelined send.
func (p *Process) Handshake(protocolVersion, tool, arguments string) error {
	if protocolVersion == "" {
		protocolVersion = DefaultProtocolVersion
	}
	if arguments == "" {
		arguments = "{}"
	}
	if !json.Valid([]byte(arguments)) {
		return fmt.Errorf("harness: the arguments %q are not valid JSON", arguments)
	}
	name, _ := json.Marshal(tool)
	pv, _ := json.Marshal(protocolVersion)
	p.reqHead = []byte(`{"jsonrpc":"2.0","id":`)
	p.reqTail = []byte(`,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":` + arguments + "}}\n")

	init := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(p.nextID, 10) + `,"method":"initialize","params":{"protocolVersion":` +
		string(pv) + `,"capabilities":{},"clientInfo":{"name":"mcprt-bench-harness","version":"1"}}}` + "\n"
	res, err := p.roundTrip([]byte(init))
	if err != nil {
		return fmt.Errorf("harness: %s: initialize: %w", p.name, err)
	}
	if !bytes.Contains(res, []byte(`"protocolVersion"`)) {
		return fmt.Errorf("harness: %s: initialize: unexpected result %s", p.name, clip(res))
	}
	if _, err := p.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return fmt.Errorf("harness: %s: notifications/initialized: %w", p.name, err)
	}
	list := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(p.nextID, 10) + `,"method":"tools/list","params":{}}` + "\n"
	if res, err = p.roundTrip([]byte(list)); err != nil {
		return fmt.Errorf("harness: %s: tools/list: %w", p.name, err)
	}
	if !bytes.Contains(res, []byte(`"name":`+string(name))) {
		return fmt.Errorf("harness: %s: tools/list does not list %s: %s", p.name, name, clip(res))
	}
	if res, err = p.roundTrip(p.callLine(nil, p.nextID)); err != nil {
		return fmt.Errorf("harness: %s: tools/call %s: %w", p.name, name, err)
	}
	p.calls++
	if bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("harness: %s: tools/call %s failed: %s", p.name, name, clip(res))
	}
	return nil
}

// callLine appends the tools/call request with the given id to dst.
func (p *Process) callLine(dst []byte, id int64) []byte {
	dst = append(dst, p.reqHead...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, p.reqTail...)
}

// roundTrip sends one request line whose id is p.nextID and returns its
// answer (valid until the next read). An error answer is an error.
func (p *Process) roundTrip(line []byte) ([]byte, error) {
	id := p.nextID
	p.nextID++
	if _, err := p.stdin.Write(line); err != nil {
		return nil, err
	}
	for {
		msg, err := p.readMessage()
		if err != nil {
			return nil, err
		}
		got, ok, isErr, isCall := scanEnvelope(msg)
		if !ok || isCall || got != id {
			continue // a notification, a request from the server, or a stray answer
		}
		if isErr {
			return nil, fmt.Errorf("error answer: %s", clip(msg))
		}
		return msg, nil
	}
}

// errNoAnswer reports that the server's stdout ended.
var errNoAnswer = errors.New("the server closed its output (did it exit?)")

// readMessage returns the next line of the server's output without its
// newline. The slice is valid until the next call.
func (p *Process) readMessage() ([]byte, error) {
	line, err := p.r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if err != bufio.ErrBufferFull {
		if err == io.EOF {
			err = errNoAnswer
		}
		return nil, err
	}
	p.long = append(p.long[:0], line...)
	for {
		line, err = p.r.ReadSlice('\n')
		p.long = append(p.long, line...)
		switch err {
		case nil:
			return p.long[:len(p.long)-1], nil
		case bufio.ErrBufferFull:
		case io.EOF:
			return nil, errNoAnswer
		default:
			return nil, err
		}
	}
}

// Close ends the session the way a client does: it closes the server's
// standard input and waits up to grace for the process to exit, killing it
// after that. It returns the process's exit error (nil for exit status 0).
func (p *Process) Close(grace time.Duration) error {
	p.stdin.Close()
	go func() { // keep reading so a server flushing its last answers never blocks
		_, _ = io.Copy(io.Discard, p.stdout)
		p.stdout.Close()
	}()
	select {
	case <-p.waited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.waited
		return fmt.Errorf("harness: %s did not exit within %v of its input closing; killed", p.name, grace)
	}
	return p.werr
}

// clip shortens a message for an error text.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
