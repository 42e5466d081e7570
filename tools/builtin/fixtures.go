package builtin

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// echoMessage is both the arguments and the result of the echo fixture
// and of dynamic echo tools. The fixture's input schema and the output
// schema of both are derived from it.
type echoMessage struct {
	Message string `json:"message"`
}

// echoTool answers {message} with {message}.
func echoTool(_ context.Context, _ *mcp.CallToolRequest, in echoMessage) (echoMessage, error) {
	return in, nil
}

// failArgs are the fail fixture's arguments.
type failArgs struct {
	Message string `json:"message" jsonschema:"The text of the error the handler returns."`
}

// sleepArgs are the sleep fixture's arguments. Ms is a float64 because
// the schema's "integer" admits 2.0 and 1e3, which encoding/json refuses
// for a Go integer; the schema guarantees a whole number in range.
type sleepArgs struct {
	Ms           float64 `json:"ms" jsonschema:"How long to sleep, in milliseconds."`
	IgnoreCancel bool    `json:"ignoreCancel,omitempty" jsonschema:"Sleep the whole time even when the call is cancelled or times out."`
}

// sleepResult is the sleep fixture's result.
type sleepResult struct {
	SleptMs int64 `json:"sleptMs"`
}

// bigResultArgs are big_result's arguments; Bytes is a float64 for the
// reason sleepArgs.Ms is.
type bigResultArgs struct {
	Bytes float64 `json:"bytes" jsonschema:"The length of the returned string."`
}

// fixtureTools returns the fixtures of mode TEST. None is read-only or
// essential, so no other mode would admit them (they are registered in
// TEST only). Fixtures that return no object (or none at all) have an
// Out that is not a struct, so they list no output schema.
func fixtureTools(cfg core.Config, clock *core.OffsetClock) []tool {
	fixture := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)}
	}
	tools := []tool{
		typed(mcp.Tool{
			Name:        "noop",
			Description: "TEST fixture: does nothing and returns {}. Takes no arguments.",
			Annotations: fixture("No-op"),
		}, func(context.Context, *mcp.CallToolRequest, struct{}) (any, error) {
			// An empty struct: encodes as {}, costs no allocation, and (as
			// Out is not a struct type) declares no outputSchema.
			return struct{}{}, nil
		}),
		typed(mcp.Tool{
			Name:        "echo",
			Description: "TEST fixture: returns {message} with the message it was given.",
			Annotations: fixture("Echo"),
		}, echoTool),
		typed(mcp.Tool{
			Name: "sleep",
			Description: "TEST fixture: sleeps ms milliseconds, then returns {sleptMs}. When the call is " +
				"cancelled or times out it returns at once with the cancellation's error, unless ignoreCancel " +
				"is true: then it sleeps the whole time regardless (and keeps its concurrency slot).",
			InputSchema: fixtureSleepInput,
			Annotations: fixture("Sleep"),
		}, sleepTool),
		typed(mcp.Tool{
			Name:        "fail",
			Description: "TEST fixture: the handler returns an error with the given message (a plain Go error, so the call fails with INTERNAL).",
			Annotations: fixture("Fail"),
		}, func(_ context.Context, _ *mcp.CallToolRequest, in failArgs) (any, error) {
			return nil, errors.New(in.Message)
		}),
		typed(mcp.Tool{
			Name:        "panic",
			Description: "TEST fixture: the handler panics; the server recovers and the call fails with INTERNAL. Takes no arguments.",
			Annotations: fixture("Panic"),
		}, func(context.Context, *mcp.CallToolRequest, struct{}) (any, error) {
			panic("panic fixture: deliberate panic for testing")
		}),
		typed(mcp.Tool{
			Name: "big_result",
			Description: "TEST fixture: returns a string of bytes 'x' characters, to exercise tools.maxResultBytes " +
				"(the call fails with INTERNAL, reason result_too_large, when the encoded result is over it).",
			InputSchema: bigResultInput(cfg.Tools.MaxResultBytes),
			Annotations: fixture("Big result"),
		}, func(_ context.Context, _ *mcp.CallToolRequest, in bigResultArgs) (string, error) {
			if in.Bytes < 0 || in.Bytes != math.Trunc(in.Bytes) {
				return "", core.Errorf(core.CodeInvalidArgument, "bytes is %v; want a whole length >= 0", in.Bytes)
			}
			return strings.Repeat("x", int(in.Bytes)), nil
		}),
		typed(mcp.Tool{
			Name: "unserializable",
			Description: "TEST fixture: returns NaN, which JSON cannot encode (the call fails with INTERNAL, " +
				"reason result_not_serializable). Takes no arguments.",
			Annotations: fixture("Unserializable"),
		}, func(context.Context, *mcp.CallToolRequest, struct{}) (float64, error) {
			return math.NaN(), nil
		}),
		lookup20Tool(),
	}
	if clock != nil {
		tools = append(tools, typed(mcp.Tool{
			Name: "clock_advance",
			Description: "TEST fixture: moves this process's clock forward by ms milliseconds (expiry, staleness " +
				"and timeouts see the later time) and returns {now}.",
			Annotations: fixture("Advance the clock"),
		}, func(_ context.Context, _ *mcp.CallToolRequest, in clockAdvanceArgs) (clockAdvanceResult, error) {
			if in.Ms < 0 || in.Ms != math.Trunc(in.Ms) {
				return clockAdvanceResult{}, core.Errorf(core.CodeInvalidArgument, "ms is %v; want a whole number of milliseconds >= 0", in.Ms)
			}
			return clockAdvanceResult{Now: clock.Advance(time.Duration(in.Ms) * time.Millisecond)}, nil
		}))
	}
	return tools
}

// clockAdvanceArgs are clock_advance's arguments.
type clockAdvanceArgs struct {
	Ms float64 `json:"ms"`
}

// clockAdvanceResult is clock_advance's result: the clock's new time.
type clockAdvanceResult struct {
	Now time.Time `json:"now"`
}

// sleepTool is the sleep fixture. Its result is an object, but it lists no
// output schema (Out is any), as it never has.
func sleepTool(ctx context.Context, _ *mcp.CallToolRequest, in sleepArgs) (any, error) {
	ms := int64(in.Ms)
	d := time.Duration(ms) * time.Millisecond
	if in.IgnoreCancel {
		time.Sleep(d)
		return sleepResult{SleptMs: ms}, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return sleepResult{SleptMs: ms}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
