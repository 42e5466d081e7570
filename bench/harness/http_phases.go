package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The measured phases over Streamable HTTP, and the end of a run.

// Sequential makes n calls on the first session, one after the other,
// each sent when the answer to the previous one has been read. Each
// latency runs from starting the POST to having read its whole answer.
// Call Handshake first.
func (s *HTTPServer) Sequential(n int) (Phase, error) {
	if len(s.sessions) == 0 {
		return Phase{}, fmt.Errorf("harness: %s: Sequential before Handshake", s.name)
	}
	ph := Phase{Calls: n, InFlight: 1, Latencies: make([]time.Duration, n)}
	var c httpCaller
	cpu0, err := s.cpuSample()
	if err != nil {
		return Phase{}, err
	}
	start := time.Now()
	for i := range n {
		t0 := time.Now()
		if err := s.call(&c, s.sessions[0]); err != nil {
			return Phase{}, fmt.Errorf("harness: %s: %w", s.name, err)
		}
		ph.Latencies[i] = time.Since(t0)
	}
	ph.Elapsed = time.Since(start)
	cpu1, err := s.cpuSample()
	if err != nil {
		return Phase{}, err
	}
	ph.setCPU(cpu0, cpu1)
	ph.summarize()
	return ph, nil
}

// maxHTTPClients bounds Concurrent's clients, and so the connections the
// HTTP client keeps.
const maxHTTPClients = 1024

// Concurrent makes n calls from clients goroutines (at most 1,024), client
// i making one call at a time on session i mod the sessions Handshake
// opened, over a keep-alive connection of its own, until n calls have been
// made: clients calls are in flight. Each latency runs from starting the
// POST to having read its whole answer. Call Handshake first.
func (s *HTTPServer) Concurrent(n, clients int) (Phase, error) {
	if len(s.sessions) == 0 {
		return Phase{}, fmt.Errorf("harness: %s: Concurrent before Handshake", s.name)
	}
	clients = min(max(clients, 1), maxHTTPClients)
	ph := Phase{Calls: n, InFlight: clients, Latencies: make([]time.Duration, n)}
	var (
		next     atomic.Int64
		failed   atomic.Bool
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	cpu0, err := s.cpuSample()
	if err != nil {
		return Phase{}, err
	}
	start := time.Now()
	for w := range clients {
		sess := s.sessions[w%len(s.sessions)]
		wg.Go(func() {
			var c httpCaller
			for !failed.Load() {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t0 := time.Now()
				if err := s.call(&c, sess); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
				ph.Latencies[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	ph.Elapsed = time.Since(start)
	if firstErr != nil {
		return Phase{}, fmt.Errorf("harness: %s: %w", s.name, firstErr)
	}
	cpu1, err := s.cpuSample()
	if err != nil {
		return Phase{}, err
	}
	ph.setCPU(cpu0, cpu1)
	ph.summarize()
	return ph, nil
}

// Close ends the sessions the way a client does (a DELETE for each that
// has an id; errors are ignored, a server need not allow it), then sends
// the server SIGTERM and waits up to grace for it to exit, killing it
// after that. It returns the process's exit error (nil for exit status 0).
func (s *HTTPServer) Close(grace time.Duration) error {
	for _, sess := range s.sessions {
		if sess.id == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, grace)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
		if err == nil {
			req.Header = sess.header
			if resp, err := s.client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		cancel()
	}
	s.client.CloseIdleConnections()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = s.cmd.Process.Kill()
	}
	select {
	case <-s.waited:
	case <-time.After(grace):
		_ = s.cmd.Process.Kill()
		<-s.waited
		return fmt.Errorf("harness: %s did not exit within %v of SIGTERM; killed", s.name, grace)
	}
	return s.werr
}
