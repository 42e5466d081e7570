package diskerr

import (
	"errors"
	"syscall"

	"github.com/mcprt/mcprt/core"
)

// Codes of the errors Classify makes.
const (
	CodeFull     core.Code = "STORAGE_FULL"
	CodeIO       core.Code = "STORAGE_IO_ERROR"
	CodeReadOnly core.Code = "STORAGE_READ_ONLY"
	CodeGone     core.Code = "STORAGE_GONE"
)

// Classify returns err wrapped in a *core.Error when it is a storage
// condition (see the package doc); doing says what was being done ("append
// to /data/x.ndjson"). A nil err, an error that already is (or wraps) a
// *core.Error and any other error are returned unchanged.
func Classify(err error, doing string) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	code, ok := CodeOf(err)
	if !ok {
		return err
	}
	return New(code, doing, err)
}

// CodeOf reports the storage code of err's errno, if it has one.
func CodeOf(err error) (core.Code, bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "", false
	}
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
		return CodeFull, true
	case syscall.EIO:
		return CodeIO, true
	case syscall.EROFS, syscall.EACCES, syscall.EPERM:
		return CodeReadOnly, true
	}
	return "", false
}

// New makes the error of a storage condition code met while doing, caused
// by cause (which it wraps).
func New(code core.Code, doing string, cause error) *core.Error {
	var advice string
	retry := false
	switch code {
	case CodeFull:
		advice = "the disk (or the file-size limit) is full; free space and call again — nothing was recorded by this call"
		retry = true
	case CodeIO:
		advice = "the storage device reported an I/O error; call again, and check the disk if it persists — nothing was recorded by this call"
		retry = true
	case CodeReadOnly:
		advice = "the data directory is not writable; make it writable (or point the server at a writable one) — reads still work"
	case CodeGone:
		advice = "the data directory was removed while the server ran; restart the server so it opens a fresh store — nothing was recorded by this call"
	}
	return core.Errorf(code, "%s: %w; %s", doing, cause, advice).WithRetryable(retry)
}
