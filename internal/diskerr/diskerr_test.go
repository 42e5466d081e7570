package diskerr

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/core"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err       error
		code      core.Code // "" : returned unchanged
		retryable bool
	}{
		{&os.PathError{Op: "write", Path: "/d/f", Err: syscall.ENOSPC}, CodeFull, true},
		{fmt.Errorf("wrapped: %w", syscall.EDQUOT), CodeFull, true},
		{syscall.EFBIG, CodeFull, true},
		{syscall.EIO, CodeIO, true},
		{syscall.EROFS, CodeReadOnly, false},
		{syscall.EACCES, CodeReadOnly, false},
		{syscall.ENOENT, "", false},
		{errors.New("plain"), "", false},
		{core.NewError(core.CodeTimeout, "already a tool error"), "", false},
	} {
		got := Classify(tc.err, "append to /d/f")
		var ce *core.Error
		if tc.code == "" {
			if got != tc.err {
				t.Errorf("%v: changed to %v", tc.err, got)
			}
			continue
		}
		if !errors.As(got, &ce) || ce.Code != tc.code || ce.Retryable != tc.retryable || !errors.Is(got, tc.err) {
			t.Errorf("%v: %v, want %s retryable %v wrapping the cause", tc.err, got, tc.code, tc.retryable)
		}
	}
	if Classify(nil, "x") != nil {
		t.Error("nil is not nil")
	}
}
