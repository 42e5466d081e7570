package jsonrpc

import (
	"context"
	"fmt"
)

// State is a connection's lifecycle state (SPEC §4).
type State int32

// The lifecycle states, in the only order a connection moves through them.
const (
	StateStarting State = iota
	StateInitializing
	StateRunning
	StateClosed
)

var stateNames = [...]string{"STARTING", "INITIALIZING", "RUNNING", "CLOSED"}

// String returns the state's name as SPEC §4 writes it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Handler handles one request. It returns the result to send (any value
// encoding/json can encode; a json.RawMessage is sent as is, compacted) or
// an error: an *Error is sent as that JSON-RPC error, ErrNoResponse sends
// nothing, and any other error becomes -32603.
//
// Handlers run concurrently with each other unless their Method is Inline.
// ctx is cancelled when the client cancels the request or the connection
// closes; ConnFromContext(ctx) is the connection.
type Handler interface {
	Handle(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// NotificationHandler handles one notification. It runs on the reading
// goroutine, so it must not block.
type NotificationHandler interface {
	HandleNotification(ctx context.Context, n *Notification)
}

// NotificationFunc adapts a function to NotificationHandler.
type NotificationFunc func(ctx context.Context, n *Notification)

// HandleNotification calls f.
func (f NotificationFunc) HandleNotification(ctx context.Context, n *Notification) { f(ctx, n) }

var (
	_ Handler             = HandlerFunc(nil)
	_ NotificationHandler = NotificationFunc(nil)
)

// Phase says in which lifecycle states a method is served.
type Phase uint8

// The phases.
const (
	// PhaseRunning methods are served only in RUNNING; before that the
	// gate answers them (SPEC §4: -32002).
	PhaseRunning Phase = iota
	// PhaseAlways methods are served in every state but CLOSED (ping).
	PhaseAlways
	// PhaseHandshake is the handshake request (initialize): served in
	// STARTING, where success moves the connection to INITIALIZING;
	// answered with the AlreadyInitialized error in any later state.
	PhaseHandshake
)

// Method is a request method's registration.
type Method struct {
	Handler Handler
	Phase   Phase
	// Inline runs the handler on the reading goroutine, before the next
	// line is read. Only for cheap handlers that never block; it makes
	// lifecycle requests take effect in order.
	Inline bool
	// CloseAfter closes the connection once the response is written
	// (shutdown).
	CloseAfter bool
}

// Notify is a notification method's registration.
type Notify struct {
	Handler NotificationHandler
	// Phase PhaseAlways delivers the notification in every state but
	// CLOSED; otherwise only in RUNNING (earlier ones are dropped).
	Phase Phase
}

// RouterConfig plugs the layer above into the router's state machine. Nil
// functions get the defaults documented on each field.
type RouterConfig struct {
	// Initialized is the notification that moves INITIALIZING to RUNNING
	// (in STARTING it is ignored with a warning).
	Initialized string
	// NotInitialized builds the gate's answer to a request that may not run
	// before RUNNING. Default: -32002 "Not initialized" with the
	// connection's correlation id.
	NotInitialized func(c *Conn, req *Request) *Error
	// AlreadyInitialized builds the answer to a handshake request after
	// STARTING. Default: -32600 saying the session is already initialized.
	AlreadyInitialized func(c *Conn, req *Request) *Error
	// Stateless reports whether a request is served outside the lifecycle
	// (a request that carries its own protocol version). Default: none is.
	Stateless func(req *Request) bool
}

// Router maps (state × message kind × method) to an action. Register every
// method before serving; a Router is read-only while connections use it and
// may be shared by several connections.
type Router struct {
	cfg           RouterConfig
	methods       map[string]Method
	notifications map[string]Notify
}

// NewRouter returns an empty router.
func NewRouter(cfg RouterConfig) *Router {
	return &Router{cfg: cfg, methods: map[string]Method{}, notifications: map[string]Notify{}}
}

// Handle registers a request method. Registering a method twice, or one
// without a handler, is a programmer error and panics.
func (r *Router) Handle(method string, m Method) {
	if m.Handler == nil {
		panic("jsonrpc: nil handler for method " + method)
	}
	if _, dup := r.methods[method]; dup {
		panic("jsonrpc: method registered twice: " + method)
	}
	r.methods[method] = m
}

// HandleNotification registers a notification method; it panics on a
// duplicate or a nil handler.
func (r *Router) HandleNotification(method string, n Notify) {
	if n.Handler == nil {
		panic("jsonrpc: nil handler for notification " + method)
	}
	if _, dup := r.notifications[method]; dup {
		panic("jsonrpc: notification registered twice: " + method)
	}
	r.notifications[method] = n
}

// route is the state machine: the one place that decides what a message
// means in the connection's current state. It reports whether the calling
// goroutine is still the connection's reader (see dispatch).
func (c *Conn) route(msg Message, b *batch) (reader bool) {
	reader = true
	st := c.State()
	if st == StateClosed {
		return reader
	}
	r := c.router
	switch m := msg.(type) {
	case *Request:
		meth, known := r.methods[m.Method]
		switch {
		case c.inFlight(m.ID):
			// Whatever the method: a second response with this id would be
			// ambiguous (SPEC §3.2).
			c.replyError(b, m.ID, m.Params, duplicateID(m.ID))
		case r.cfg.Stateless != nil && r.cfg.Stateless(m):
			if !known {
				c.replyError(b, m.ID, m.Params, methodNotFound(m.Method))
				return reader
			}
			reader = c.dispatch(m, meth, b)
		case known && meth.Phase == PhaseAlways:
			reader = c.dispatch(m, meth, b)
		case known && meth.Phase == PhaseHandshake:
			if st != StateStarting {
				c.replyError(b, m.ID, m.Params, c.alreadyInitialized(m))
				return reader
			}
			reader = c.dispatch(m, meth, b)
		case st != StateRunning:
			c.replyError(b, m.ID, nil, c.notInitialized(m))
		case !known:
			c.replyError(b, m.ID, m.Params, methodNotFound(m.Method))
		default:
			reader = c.dispatch(m, meth, b)
		}
	case *Notification:
		if m.Method == r.cfg.Initialized && r.cfg.Initialized != "" {
			switch st {
			case StateStarting:
				c.log.Warn("ignored notification: the client has not sent initialize yet",
					"method", m.Method, "state", st.String())
			case StateInitializing:
				c.state.CompareAndSwap(int32(StateInitializing), int32(StateRunning))
			default:
				c.log.Debug("ignored repeated notification", "method", m.Method)
			}
		}
		n, ok := r.notifications[m.Method]
		if !ok || (n.Phase != PhaseAlways && c.State() != StateRunning) {
			if m.Method != r.cfg.Initialized {
				c.log.Debug("ignored notification", "method", m.Method, "state", c.State().String())
			}
			return reader
		}
		c.notify(n.Handler, m)
	case *Response:
		c.deliverResponse(m)
	}
	return reader
}

func methodNotFound(method string) *Error {
	return NewError(CodeMethodNotFound, "Method not found: "+quote(method)+
		" is not a method this server provides")
}

func (c *Conn) notInitialized(req *Request) *Error {
	if f := c.router.cfg.NotInitialized; f != nil {
		return f(c, req)
	}
	return &Error{Code: CodeNotInitialized, Message: "Not initialized",
		Data: map[string]string{"correlationId": c.opts.CorrelationID}}
}

func (c *Conn) alreadyInitialized(req *Request) *Error {
	if f := c.router.cfg.AlreadyInitialized; f != nil {
		return f(c, req)
	}
	return NewError(CodeInvalidRequest, "Invalid Request: the session is already initialized; "+
		"send initialize once per connection")
}
