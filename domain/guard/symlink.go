package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinkHops bounds the symbolic links followed while resolving one path
// (Linux's own limit is 40).
const maxLinkHops = 40

// SetWorkspaceRoot sets the directory that changed paths are relative to
// ("" for none): Check then follows symbolic links under it (see CheckIn).
// Call it before the Service is shared.
func (s *Service) SetWorkspaceRoot(root string) { s.root = root }

// workspace resolves changed paths against a workspace root on disk. The
// zero value (no root) resolves nothing: paths are judged as spelled.
type workspace struct {
	root string // the root with its own links resolved; "" for none
	err  error  // why the root could not be resolved
}

// openWorkspace resolves root's own symbolic links once per check. A root
// that cannot be resolved makes every path a violation (fail closed).
func openWorkspace(root string) workspace {
	if root == "" {
		return workspace{}
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return workspace{root: root, err: fmt.Errorf("workspace root %s cannot be resolved: %w", root, err)}
	}
	return workspace{root: abs}
}

// real returns where the normalised path p really is, relative to the
// workspace root: every symbolic link among its existing components is
// followed (also a dangling one, since writing through it creates its
// target). ok is false when p already names its real location or there is
// no root. A location outside the root, a link loop or an unreadable
// component is an error: such a path cannot be judged, so it is refused.
func (w workspace) real(p string) (rel string, ok bool, err error) {
	if w.root == "" {
		return "", false, nil
	}
	if w.err != nil {
		return "", false, w.err
	}
	cur, todo, hops := w.root, strings.Split(p, "/"), 0
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, seg)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err):
			cur = next // not there yet: the rest is taken as spelled
			continue
		case err != nil:
			return "", false, fmt.Errorf("%s cannot be inspected: %w", p, err)
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", false, fmt.Errorf("%s goes through more than %d symbolic links (a loop?)", p, maxLinkHops)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, fmt.Errorf("the symbolic link %s cannot be read: %w", next, err)
		}
		target = filepath.ToSlash(target)
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	r, err := filepath.Rel(w.root, cur)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false, fmt.Errorf("%s is a symbolic link to %s, outside the workspace root %s", p, cur, w.root)
	}
	r = filepath.ToSlash(r)
	if r == "." {
		return "", false, fmt.Errorf("%s is a symbolic link to the workspace root itself", p)
	}
	return r, r != p, nil
}

// isNotDir reports an ENOTDIR: a component below a regular file, which
// cannot exist.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
