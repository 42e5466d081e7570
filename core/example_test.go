package core_test

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcprt/mcprt/core"
)

func ExampleManualClock() {
	clock := core.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	clock.AfterFunc(2*time.Second, func() { fmt.Println("deadline at", clock.Now().Format(time.TimeOnly)) })
	t := clock.AfterFunc(time.Second, func() { fmt.Println("never") })
	fmt.Println("stopped:", t.Stop())
	clock.Advance(time.Second)
	fmt.Println("advanced to", clock.Now().Format(time.TimeOnly))
	clock.Advance(time.Minute) // runs the deadline before returning
	fmt.Println("advanced to", clock.Now().Format(time.TimeOnly))
	// Output:
	// stopped: true
	// advanced to 00:00:01
	// deadline at 00:00:02
	// advanced to 00:01:01
}

func ExampleLimitRepeats() {
	clock := core.NewManualClock(time.Time{})
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	h := slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})
	log := slog.New(core.LimitRepeats(h, clock, 2, time.Minute))
	for range 5 {
		log.Warn("response to an unknown request id")
	}
	clock.Advance(time.Minute)
	log.Warn("response to an unknown request id")
	// Output:
	// {"level":"WARN","msg":"response to an unknown request id"}
	// {"level":"WARN","msg":"response to an unknown request id"}
	// {"level":"WARN","msg":"response to an unknown request id","suppressed":3}
}

func ExampleClip() {
	fmt.Println(core.Clip("naïve café", 9))
	fmt.Println(core.Clip("short", 9))
	// Output:
	// naïve…
	// short
}
