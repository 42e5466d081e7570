package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/jsonrpc"
)

// The tasks extension (io.modelcontextprotocol/tasks) of the stateless
// revision: a tools/call that takes long is answered at once with a task
// (a CreateTaskResult: resultType "task", taskId, status), keeps running
// after that answer went out, and the client polls it with tasks/get, gives
// it the input it asks for with tasks/update, and stops it with
// tasks/cancel. The handler decides when its call becomes a task: it calls
// StartTask. Tasks live in the server's memory only (bounded, removed
// TaskOptions.TTL after their creation); a restart loses them.

// ExtensionTasks is the identifier of the tasks extension: long-running
// tool calls the client polls with tasks/get.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Task statuses (the status member of a task).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed" // result holds the tool's result (isError true for a tool error)
	TaskFailed        = "failed"    // error holds a JSON-RPC error: the call failed below the tool
	TaskCancelled     = "cancelled"

	// ResultTask is the resultType of a CreateTaskResult.
	ResultTask = "task"
)

// TaskSupport says whether calls of a tool may become tasks.
type TaskSupport string

const (
	// TaskForbidden (the zero value): the tool's calls never become tasks;
	// StartTask reports false.
	TaskForbidden TaskSupport = ""
	// TaskOptional: a call becomes a task when its handler calls StartTask
	// and the request declared the tasks extension; otherwise it runs as
	// an ordinary call.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: a stateless request that did not declare the tasks
	// extension is refused with -32021 before the handler runs. Under the
	// session revisions the call runs as an ordinary one.
	TaskRequired TaskSupport = "required"
)

// Causes of a task's handler context (context.Cause).
var (
	// ErrTaskCancelled: the client sent tasks/cancel. It wraps
	// ErrCancelled, so errors.Is(cause, ErrCancelled) holds too.
	ErrTaskCancelled = fmt.Errorf("%w: tasks/cancel", ErrCancelled)
	// ErrTaskExpired: the task outlived its time to live and was removed.
	ErrTaskExpired = errors.New("mcp: the task's time to live passed; it was removed")
)

// TaskOptions configures the tasks extension (Options.Tasks). Zero fields
// get the defaults.
type TaskOptions struct {
	// Disabled turns the extension off: server/discover does not list it,
	// tasks/* answer -32601 and StartTask reports false.
	Disabled bool
	// MaxTasks bounds the tasks kept at once, running or finished
	// (default 1000). StartTask fails with RESOURCE_EXHAUSTED beyond it.
	MaxTasks int
	// TTL is how long a task is kept after its creation (default one
	// hour): then it is removed and, if still running, cancelled with
	// ErrTaskExpired. It is the ttlMs of every task.
	TTL time.Duration
	// PollInterval is the pollIntervalMs suggested to clients (default
	// one second).
	PollInterval time.Duration
}

// Defaults of TaskOptions.
const (
	DefaultMaxTasks         = 1000
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
)

// maxTaskIDLen bounds a taskId the server looks up; its own are 32 bytes.
const maxTaskIDLen = 128

// taskStore holds the tasks of the tasks extension.
type taskStore struct {
	clock core.Clock
	max   int
	ttl   time.Duration
	poll  time.Duration

	mu    sync.Mutex
	tasks map[string]*task
}

func newTaskStore(o TaskOptions, clock core.Clock) *taskStore {
	st := &taskStore{clock: clock, max: o.MaxTasks, ttl: o.TTL, poll: o.PollInterval, tasks: map[string]*task{}}
	if st.max <= 0 {
		st.max = DefaultMaxTasks
	}
	if st.ttl <= 0 {
		st.ttl = DefaultTaskTTL
	}
	if st.poll <= 0 {
		st.poll = DefaultTaskPollInterval
	}
	return st
}

// task is one task. Everything after id is guarded by the store's mutex.
type task struct {
	id      string
	created time.Time
	cancel  context.CancelCauseFunc // cancels the handler's context
	timer   core.Timer              // removes the task when its TTL passes

	status  string
	message string
	updated time.Time
	result  json.RawMessage            // completed
	err     *jsonrpc.Error             // failed
	pending map[string]json.RawMessage // input requests awaiting an answer, encoded
	answers map[string]json.RawMessage // answers not yet taken by the handler
	changed chan struct{}              // closed (and replaced) when answers arrive or the task ends
}

func (t *task) terminal() bool {
	return t.status == TaskCompleted || t.status == TaskFailed || t.status == TaskCancelled
}

// setStatus changes the status and wakes whoever waits on the task.
func (t *task) setStatus(status string, now time.Time) {
	t.status, t.updated = status, now
	t.wake()
}

func (t *task) wake() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// newTaskID returns 128 random bits, hex: unguessable, so the id is the
// only credential a task needs.
func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// create adds a working task whose handler context cancel cancels.
func (st *taskStore) create(cancel context.CancelCauseFunc) (*task, error) {
	now := st.clock.Now()
	t := &task{id: newTaskID(), created: now, updated: now, cancel: cancel, status: TaskWorking,
		pending: map[string]json.RawMessage{}, answers: map[string]json.RawMessage{}, changed: make(chan struct{})}
	st.mu.Lock()
	if len(st.tasks) >= st.max {
		st.mu.Unlock()
		return nil, core.NewError(core.CodeResourceExhausted, fmt.Sprintf(
			"the server keeps at most %d tasks (TaskOptions.MaxTasks) and has no room for another; "+
				"retry once older tasks have expired (they are kept %d ms)", st.max, st.ttl.Milliseconds())).
			WithDetail("maxTasks", st.max).WithRetryable(true)
	}
	st.tasks[t.id] = t
	st.mu.Unlock()
	t.timer = st.clock.AfterFunc(st.ttl, func() { st.expire(t) })
	return t, nil
}

// lookup returns the task with id, or nil.
func (st *taskStore) lookup(id string) *task {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tasks[id]
}

// remove forgets t at once (a task whose CreateTaskResult never reached
// the client).
func (st *taskStore) remove(t *task) {
	st.mu.Lock()
	delete(st.tasks, t.id)
	t.setStatus(TaskCancelled, st.clock.Now())
	st.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
}

// expire removes t when its TTL passed, cancelling it if still running.
func (st *taskStore) expire(t *task) {
	st.mu.Lock()
	delete(st.tasks, t.id)
	running := !t.terminal()
	if running {
		t.message = "expired"
		t.setStatus(TaskCancelled, st.clock.Now())
	}
	st.mu.Unlock()
	if running {
		t.cancel(ErrTaskExpired)
	}
}

// cancelTask ends a task that is not yet terminal as cancelled and
// cancels its handler. It reports whether the task exists.
func (st *taskStore) cancelTask(id string) bool {
	st.mu.Lock()
	t := st.tasks[id]
	if t == nil {
		st.mu.Unlock()
		return false
	}
	running := !t.terminal()
	if running {
		t.message = "cancelled by the client (tasks/cancel)"
		clear(t.pending)
		t.setStatus(TaskCancelled, st.clock.Now())
	}
	st.mu.Unlock()
	if running {
		t.cancel(ErrTaskCancelled)
	}
	return true
}

// complete ends t with the tool's result. It reports whether t was still
// running (a cancelled or expired task keeps its status).
func (st *taskStore) complete(t *task, result json.RawMessage) bool {
	return st.end(t, TaskCompleted, func() { t.result = result })
}

// fail ends t with a JSON-RPC error.
func (st *taskStore) fail(t *task, e *jsonrpc.Error) bool {
	return st.end(t, TaskFailed, func() { t.err = e })
}

// end gives a running t its final status and outcome (set, under the
// store's lock); it reports false when t had already ended.
func (st *taskStore) end(t *task, status string, set func()) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if t.terminal() {
		return false
	}
	set()
	clear(t.pending)
	t.setStatus(status, st.clock.Now())
	return true
}

// update hands the client's answers to the task: those under a key the
// task waits for are taken, the rest ignored. It reports whether the task
// exists.
func (st *taskStore) update(id string, responses map[string]json.RawMessage) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	t := st.tasks[id]
	if t == nil {
		return false
	}
	took := false
	for k, v := range responses {
		if _, waiting := t.pending[k]; waiting {
			t.answers[k] = v
			delete(t.pending, k)
			took = true
		}
	}
	if !took {
		return true
	}
	if len(t.pending) == 0 && t.status == TaskInputRequired {
		t.status = TaskWorking
	}
	t.updated = st.clock.Now()
	t.wake()
	return true
}

// await asks the client for the input requests reqs (encoded, by key) and
// waits for tasks/update to bring every answer, or for ctx (the handler's)
// to end. Meanwhile the task is input_required and tasks/get lists what is
// still pending.
func (st *taskStore) await(ctx context.Context, t *task, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	st.mu.Lock()
	if t.terminal() {
		st.mu.Unlock()
		return nil, causeOr(ctx, ErrTaskCancelled)
	}
	for k, v := range reqs {
		t.pending[k] = v
	}
	t.setStatus(TaskInputRequired, st.clock.Now())
	for {
		got := 0
		for k := range reqs {
			if _, ok := t.answers[k]; ok {
				got++
			}
		}
		if got == len(reqs) {
			out := make(map[string]json.RawMessage, len(reqs))
			for k := range reqs {
				out[k] = t.answers[k]
				delete(t.answers, k)
			}
			st.mu.Unlock()
			return out, nil
		}
		if t.terminal() {
			st.mu.Unlock()
			return nil, causeOr(ctx, ErrTaskCancelled)
		}
		changed := t.changed
		st.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			st.mu.Lock()
			for k := range reqs {
				delete(t.pending, k)
			}
			if len(t.pending) == 0 && t.status == TaskInputRequired {
				t.setStatus(TaskWorking, st.clock.Now())
			}
			st.mu.Unlock()
			return nil, context.Cause(ctx)
		}
		st.mu.Lock()
	}
}

// causeOr is ctx's cause, or err when ctx is not done.
func causeOr(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}

// taskWire is a task on the wire: a CreateTaskResult (resultType "task")
// or, with result, error or inputRequests, the DetailedTask of tasks/get.
type taskWire struct {
	ResultType     string                     `json:"resultType,omitempty"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          *jsonrpc.Error             `json:"error,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
}

// taskTime is the ISO 8601 form of a task's times.
const taskTime = "2006-01-02T15:04:05.000Z07:00"

// wire returns t as tasks/get shows it (detailed) or as the
// CreateTaskResult of its tools/call.
func (st *taskStore) wire(t *task, detailed bool) taskWire {
	st.mu.Lock()
	defer st.mu.Unlock()
	w := taskWire{TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(taskTime), LastUpdatedAt: t.updated.UTC().Format(taskTime),
		TTLMs: st.ttl.Milliseconds(), PollIntervalMs: st.poll.Milliseconds()}
	if !detailed {
		w.ResultType = ResultTask
		return w
	}
	switch t.status {
	case TaskCompleted:
		w.Result = t.result
	case TaskFailed:
		w.Error = t.err
	case TaskInputRequired:
		w.InputRequests = make(map[string]json.RawMessage, len(t.pending))
		for k, v := range t.pending {
			w.InputRequests[k] = v
		}
	}
	return w
}

// declaresTasks reports whether caps declare the tasks extension.
func declaresTasks(caps ClientCapabilities) bool {
	_, ok := caps.Extensions[ExtensionTasks]
	return ok
}

// tasksRequired is -32021 for a request that needs the tasks extension.
func tasksRequired(what string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + what +
		` needs the tasks extension; declare it in _meta["` + MetaClientCapabilities + `"].extensions["` + ExtensionTasks +
		`"] (an object, {} for no settings) if the client supports tasks`,
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}}}
}
