// Package diskerr turns the operating system's storage failures into
// honest tool errors.
//
// A write that fails because the file system is full (ENOSPC, EDQUOT, or
// EFBIG from a file-size limit), read-only (EROFS, or EACCES/EPERM on a
// data file), failing (EIO) or gone (the data directory removed under a
// running server) is a condition of the machine, not a bug: Classify wraps
// such an error in a *core.Error with a stable code, a message naming the
// file and what to do, and Retryable set where trying again later can
// succeed by itself (space returns, a transient I/O error clears). Any
// other error is returned unchanged.
//
// Codes:
//
//	STORAGE_FULL       ENOSPC, EDQUOT, EFBIG       retryable
//	STORAGE_IO_ERROR   EIO                         retryable
//	STORAGE_READ_ONLY  EROFS, EACCES, EPERM        not retryable
//	STORAGE_GONE       the directory was removed   not retryable
//
// The package depends on the standard library and core only.
package diskerr
