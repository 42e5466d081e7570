// Package idle holds Group, a count of running jobs whose waiters wait on
// a channel: a wait that gives up (its context is done) leaves nothing
// behind, unlike a goroutine parked in sync.WaitGroup.Wait.
//
// It imports the standard library only, so the jsonrpc and core packages
// may use it. A Group is safe for concurrent use; its zero value is an idle
// group ready to use, and it must not be copied after first use.
package idle
