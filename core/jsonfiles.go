package core

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The rule every directory of definitions follows (agent.dir,
// workflow.dir, guard.policiesDir): its *.json entries are the files to
// load, sorted by name; an entry named *.json that is a directory (or a
// link to one) is skipped; any other entry named *.json that is not a
// regular file (a FIFO, a socket, a device) is an error naming it, found
// without opening it, since opening a FIFO waits for a writer.

// JSONFiles returns the paths of the regular *.json files directly in
// dir, sorted by name, skipping directories named *.json. A missing dir
// holds none. An entry that is neither (a FIFO, a socket, a device, a
// dangling link) is an INVALID_ARGUMENT *Error naming it, as is a dir that
// cannot be read.
func JSONFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, Errorf(CodeInvalidArgument, "cannot read the directory %s: %v; make it a readable directory", dir, err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		st, err := os.Stat(p) // follows a link
		switch {
		case err != nil:
			return nil, Errorf(CodeInvalidArgument, "%s cannot be used: %v; remove it or make it a regular JSON file", p, err)
		case st.IsDir():
			continue
		case !st.Mode().IsRegular():
			return nil, notRegular(p, st.Mode())
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// ReadRegularFile reads the regular file at path, at most limit bytes
// (more is an error). A path that is not a regular file is refused before
// it is opened, naming it. Errors are INVALID_ARGUMENT *Error values that
// name the path.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, Errorf(CodeInvalidArgument, "%s cannot be read: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Errorf(CodeInvalidArgument, "%s cannot be opened: %v", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Errorf(CodeInvalidArgument, "%s cannot be read: %v", path, err)
	}
	if int64(len(data)) > limit {
		return nil, Errorf(CodeInvalidArgument, "%s is larger than the limit of %d bytes", path, limit)
	}
	return data, nil
}

func notRegular(path string, m fs.FileMode) *Error {
	return NewError(CodeInvalidArgument, fmt.Sprintf("%s is not a regular file (%s); give a JSON file", path, FileKind(m))).
		WithDetail("file", path)
}

// FileKind names the type of a non-regular file (directory, symbolic
// link, named pipe, socket, device) for a message.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "type " + m.Type().String()
}
