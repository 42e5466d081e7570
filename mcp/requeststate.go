package mcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// requestState is opaque to the client and never trusted: the server
// signs what it hands out with HMAC-SHA-256 and refuses anything whose
// signature does not verify, that has expired, or that was made for
// another method or target. Its text is base64url(payload) "."
// base64url(mac).

// MinRequestStateKeyBytes is the shortest key accepted for signing
// requestState.
const MinRequestStateKeyBytes = 32

// maxRequestStateBytes bounds a requestState the server makes (and so one
// it accepts).
const maxRequestStateBytes = 256 << 10

// MaxInputResponsesBytes bounds the inputResponses of one request, in
// bytes of JSON. The answers of every round travel back in requestState,
// which is at most 256 KiB of base64 (about 192 KiB of JSON with the
// handler's state), so more could never be carried to the next round.
const MaxInputResponsesBytes = 128 << 10

// statePayload is what a requestState carries.
type statePayload struct {
	Version int                        `json:"v"`
	Method  string                     `json:"m"`
	Target  string                     `json:"t"`
	Expires int64                      `json:"exp"` // Unix milliseconds
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	State   []byte                     `json:"s,omitempty"`
}

// stateSealer signs and verifies requestState.
type stateSealer struct {
	key   []byte
	ttl   time.Duration
	clock core.Clock
}

// newStateSealer uses key, or a random key when key is nil (then only this
// process accepts its state).
func newStateSealer(key []byte, ttl time.Duration, clock core.Clock) *stateSealer {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
	}
	return &stateSealer{key: key, ttl: ttl, clock: clock}
}

func (s *stateSealer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)
}

// seal makes the requestState of a round.
func (s *stateSealer) seal(method, target string, answers map[string]json.RawMessage, state []byte) (string, error) {
	payload, err := json.Marshal(statePayload{Version: 1, Method: method, Target: target,
		Expires: s.clock.Now().Add(s.ttl).UnixMilli(), Answers: answers, State: state})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	out := enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(payload))
	if len(out) > maxRequestStateBytes {
		// The client's answers of every round so far, with the handler's
		// state, do not fit: the client sent too much input.
		return "", invalidParams("the inputResponses of this request and its earlier rounds, with the tool's state, " +
			"exceed the 256 KiB a requestState may carry; answer with smaller results")
	}
	return out, nil
}

// stateError is -32602 for a requestState the server refuses.
func stateError(why string) *jsonrpc.Error {
	return invalidParams("requestState " + why + "; send the request again without requestState and inputResponses " +
		"to start over")
}

// open verifies a requestState and returns what it carries.
func (s *stateSealer) open(method, target, text string) (*statePayload, *jsonrpc.Error) {
	if len(text) > maxRequestStateBytes {
		return nil, stateError("is longer than any this server makes")
	}
	enc := base64.RawURLEncoding
	body, sig, found := strings.Cut(text, ".")
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if !found || err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return nil, stateError("failed its integrity check: it was changed, or made by another server " +
			"(replicas must share stateless.requestStateKeyEnvVar)")
	}
	var p statePayload
	if json.Unmarshal(payload, &p) != nil || p.Version != 1 {
		return nil, stateError("is not in a format this server reads")
	}
	switch {
	case p.Method != method || p.Target != target:
		return nil, stateError("was made for " + p.Method + " of " + jsontext.Quote(p.Target) + ", not for this request")
	case s.clock.Now().UnixMilli() > p.Expires:
		return nil, stateError("has expired (stateless.requestStateTtlMs)")
	}
	return &p, nil
}

// parseInputRound reads inputResponses and requestState from the params
// of a request that may ask for input.
func (s *Server) parseInputRound(req *jsonrpc.Request, r *statelessReq) (*inputRound, *jsonrpc.Error) {
	params := req.Params
	in := &inputRound{}
	targetKey := "name"
	if req.Method == MethodResourcesRead {
		targetKey = "uri"
	}
	in.target, _ = jsontext.String(jsontext.Member(params, targetKey))
	if raw := jsontext.Member(params, "requestState"); len(raw) > 0 {
		text, ok := jsontext.String(raw)
		if !ok {
			return nil, invalidParams("requestState must be the string of the input_required result, unchanged")
		}
		p, err := s.states.open(r.method, in.target, text)
		if err != nil {
			return nil, err
		}
		in.responses, in.state = p.Answers, p.State
	}
	if raw := jsontext.Member(params, "inputResponses"); len(raw) > 0 {
		if len(raw) > MaxInputResponsesBytes {
			return nil, invalidParams("inputResponses is " + strconv.Itoa(len(raw)) + " bytes of JSON; the limit is " +
				strconv.Itoa(MaxInputResponsesBytes) + " bytes: answer the input requests with smaller results")
		}
		var bad string
		isObj := jsontext.EachMember(raw, func(key, value []byte) bool {
			var k string
			if json.Unmarshal(key, &k) != nil || !isObject(value) {
				bad = string(key)
				return false
			}
			if in.responses == nil {
				in.responses = map[string]json.RawMessage{}
			}
			in.responses[k] = append(json.RawMessage(nil), value...)
			return true
		})
		switch {
		case !isObj:
			return nil, invalidParams("inputResponses must be an object that maps the keys of inputRequests to the client's results")
		case bad != "":
			return nil, invalidParams("inputResponses[" + jsontext.Clip(bad, jsontext.MaxEcho) +
				"] must be an object: the client's result for that input request")
		}
	}
	return in, nil
}
