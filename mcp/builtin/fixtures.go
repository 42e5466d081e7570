package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// echoResult is the result of the echo fixture and of dynamic echo tools.
type echoResult struct {
	Message string `json:"message"`
}

// sleepResult is the sleep fixture's result.
type sleepResult struct {
	SleptMs int64 `json:"sleptMs"`
}

// echoHandler answers {message} with {message}.
func echoHandler(_ context.Context, args json.RawMessage) (any, error) {
	var in echoResult
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, badArguments(err)
	}
	return in, nil
}

// fixtureTools returns the TEST fixtures of SPEC §8.3. None is read-only,
// so READONLY would never list them (they are registered in TEST only).
func fixtureTools() []mcp.Tool {
	fixture := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)}
	}
	return []mcp.Tool{
		{
			Name:        "noop",
			Description: "TEST fixture: does nothing and returns {}. Takes no arguments.",
			InputSchema: emptyInput,
			Annotations: fixture("No-op"),
			Handler: func(context.Context, json.RawMessage) (any, error) {
				return struct{}{}, nil
			},
		},
		{
			Name:         "echo",
			Description:  "TEST fixture: returns {message} with the message it was given.",
			InputSchema:  fixtureEchoInput,
			OutputSchema: echoOutput,
			Annotations:  fixture("Echo"),
			Handler:      echoHandler,
		},
		{
			Name: "sleep",
			Description: "TEST fixture: sleeps ms milliseconds, then returns {sleptMs}. When the call is " +
				"cancelled or times out it returns at once with the cancellation's error, unless ignoreCancel " +
				"is true: then it sleeps the whole time regardless (and keeps its concurrency slot).",
			InputSchema: fixtureSleepInput,
			Annotations: fixture("Sleep"),
			Handler:     sleepHandler,
		},
		{
			Name:        "fail",
			Description: "TEST fixture: the handler returns an error with the given message (a plain Go error, so the call fails with INTERNAL).",
			InputSchema: fixtureFailInput,
			Annotations: fixture("Fail"),
			Handler: func(_ context.Context, args json.RawMessage) (any, error) {
				var in struct {
					Message string `json:"message"`
				}
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, badArguments(err)
				}
				return nil, errors.New(in.Message)
			},
		},
		{
			Name:        "panic",
			Description: "TEST fixture: the handler panics; the server recovers and the call fails with INTERNAL. Takes no arguments.",
			InputSchema: emptyInput,
			Annotations: fixture("Panic"),
			Handler: func(context.Context, json.RawMessage) (any, error) {
				panic("panic fixture: deliberate panic for testing")
			},
		},
		{
			Name: "big_result",
			Description: "TEST fixture: returns a string of bytes 'x' characters, to exercise tools.maxResultBytes " +
				"(the call fails with INTERNAL, reason result_too_large, when the encoded result is over it).",
			InputSchema: fixtureBigResultInput,
			Annotations: fixture("Big result"),
			Handler: func(_ context.Context, args json.RawMessage) (any, error) {
				var in struct {
					Bytes int `json:"bytes"`
				}
				if err := decodeNumbers(args, &in); err != nil {
					return nil, err
				}
				if in.Bytes < 0 {
					return nil, core.Errorf(core.CodeInvalidArgument, "bytes is %d; want a length >= 0", in.Bytes)
				}
				return strings.Repeat("x", in.Bytes), nil
			},
		},
		{
			Name: "unserializable",
			Description: "TEST fixture: returns NaN, which JSON cannot encode (the call fails with INTERNAL, " +
				"reason result_not_serializable). Takes no arguments.",
			InputSchema: emptyInput,
			Annotations: fixture("Unserializable"),
			Handler: func(context.Context, json.RawMessage) (any, error) {
				return math.NaN(), nil
			},
		},
	}
}

// sleepHandler is the sleep fixture.
func sleepHandler(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		Ms           int64 `json:"ms"`
		IgnoreCancel bool  `json:"ignoreCancel"`
	}
	if err := decodeNumbers(args, &in); err != nil {
		return nil, err
	}
	d := time.Duration(in.Ms) * time.Millisecond
	if in.IgnoreCancel {
		time.Sleep(d)
		return sleepResult{SleptMs: in.Ms}, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return sleepResult{SleptMs: in.Ms}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// decodeNumbers decodes args into v, accepting integers written with a
// fraction or exponent (2.0, 1e3), which JSON Schema's "integer" admits
// but encoding/json refuses for Go integer fields.
func decodeNumbers(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return badArguments(err)
	}
	for k, x := range m {
		if f, ok := x.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			m[k] = int64(f)
		}
	}
	norm, err := json.Marshal(m)
	if err != nil {
		return badArguments(err)
	}
	if err := json.Unmarshal(norm, v); err != nil {
		return badArguments(err)
	}
	return nil
}
