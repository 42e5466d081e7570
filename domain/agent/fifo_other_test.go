//go:build !unix

package agent

import "errors"

func mkfifo(string) error { return errors.New("FIFOs need a Unix system") }
