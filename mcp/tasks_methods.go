package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// The methods of the tasks extension: tasks/get, tasks/update and
// tasks/cancel. They exist only in the stateless revision (under a
// session revision they are -32601) and only for a request that declared
// the extension in its _meta (else -32021). An unknown or expired taskId
// is -32602.

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	taskID    string
	responses map[string]json.RawMessage // tasks/update's inputResponses
}

// taskRequest checks a tasks/* request and reads its params.
func (sess *Session) taskRequest(ctx context.Context, req *jsonrpc.Request) (*taskStore, taskParams, *jsonrpc.Error) {
	var p taskParams
	st := sess.srv.tasks
	r := statelessOf(ctx)
	switch {
	case st == nil:
		return nil, p, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+jsontext.Quote(req.Method)+
			" belongs to the tasks extension ("+ExtensionTasks+"), which this server does not serve "+
			"(server/discover lists the extensions it does)")
	case r == nil || !declaresTasks(r.caps):
		return nil, p, tasksRequired(req.Method)
	}
	raw := jsontext.Member(req.Params, "taskId")
	id, ok := jsontext.String(raw)
	switch {
	case len(raw) == 0:
		return nil, p, invalidParams(req.Method + " needs params.taskId, the taskId of the CreateTaskResult")
	case !ok:
		return nil, p, invalidParams(req.Method + " params.taskId must be a string: the taskId of the CreateTaskResult, unchanged")
	case len(id) > maxTaskIDLen || st.lookup(id) == nil:
		return nil, p, invalidParams("unknown taskId " + jsontext.Quote(jsontext.Clip(id, jsontext.MaxEcho)) +
			": no such task, or it expired (tasks are kept ttlMs after their creation); use the taskId of a CreateTaskResult")
	}
	p.taskID = id
	if req.Method != MethodTasksUpdate {
		return st, p, nil
	}
	rawIn := jsontext.Member(req.Params, "inputResponses")
	if len(rawIn) == 0 {
		return nil, p, invalidParams("tasks/update needs params.inputResponses: an object mapping keys of the task's " +
			"inputRequests to the client's results")
	}
	bad := ""
	p.responses = map[string]json.RawMessage{}
	isObj := jsontext.EachMember(rawIn, func(key, value []byte) bool {
		var k string
		if json.Unmarshal(key, &k) != nil || !isObject(value) {
			bad = string(key)
			return false
		}
		p.responses[k] = append(json.RawMessage(nil), value...)
		return true
	})
	switch {
	case !isObj:
		return nil, p, invalidParams("tasks/update params.inputResponses must be an object mapping keys of the task's " +
			"inputRequests to the client's results")
	case bad != "":
		return nil, p, invalidParams("tasks/update params.inputResponses[" + jsontext.Clip(bad, jsontext.MaxEcho) +
			"] must be an object: the client's result for that input request")
	}
	return st, p, nil
}

// tasksGet answers tasks/get: the task's status and, once it is there,
// its result (completed), error (failed) or the input it waits for
// (input_required).
func (sess *Session) tasksGet(ctx context.Context, req *jsonrpc.Request) (any, error) {
	st, p, err := sess.taskRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	t := st.lookup(p.taskID)
	if t == nil { // expired since taskRequest looked
		return nil, invalidParams("unknown taskId " + jsontext.Quote(p.taskID) + ": it expired")
	}
	return st.wire(t, true), nil
}

// tasksUpdate answers tasks/update: the answers whose keys the task waits
// for are handed to it (others are ignored), and the ack is empty; the
// task's new status shows in the next tasks/get.
func (sess *Session) tasksUpdate(ctx context.Context, req *jsonrpc.Request) (any, error) {
	st, p, err := sess.taskRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	st.update(p.taskID, p.responses)
	return struct{}{}, nil
}

// tasksCancel answers tasks/cancel: a task still running becomes
// cancelled and its handler's context is cancelled (ErrTaskCancelled); a
// finished task keeps its status. The ack is empty either way.
func (sess *Session) tasksCancel(ctx context.Context, req *jsonrpc.Request) (any, error) {
	st, p, err := sess.taskRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	st.cancelTask(p.taskID)
	return struct{}{}, nil
}
