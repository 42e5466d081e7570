//go:build !unix

package store

import "os"

// identity returns what identifies the file at path here: its size and
// modification time are not stable, so only its existence is checked.
func identity(path string) (fileID, error) {
	_, err := os.Stat(path)
	return fileID{}, err
}

// writable reports whether path (or, when it does not exist yet, dir) is
// writable by its permission bits.
func writable(dir, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		fi, err = os.Stat(dir)
	}
	return err == nil && fi.Mode().Perm()&0o200 != 0
}
