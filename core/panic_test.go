package core

import (
	"errors"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	plain := errors.New("plain")
	tests := []struct {
		name      string
		fn        func() (int, error)
		want      int
		wantErr   error
		wantPanic string
	}{
		{"value", func() (int, error) { return 7, nil }, 7, nil, ""},
		{"error", func() (int, error) { return 3, plain }, 3, plain, ""},
		{"panic", func() (int, error) { panic("boom") }, 0, nil, "boom"},
		{"panic with error", func() (int, error) { panic(plain) }, 0, nil, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Guard(tt.fn)
			if v != tt.want {
				t.Errorf("value %d, want %d", v, tt.want)
			}
			var pe *PanicError
			switch {
			case tt.wantPanic == "":
				if err != tt.wantErr || errors.As(err, &pe) {
					t.Errorf("err %v, want %v", err, tt.wantErr)
				}
			case !errors.As(err, &pe):
				t.Fatalf("err %v, want a *PanicError", err)
			case !strings.Contains(pe.Error(), tt.wantPanic) || len(pe.Stack) == 0:
				t.Errorf("PanicError %q with %d stack bytes, want %q and a stack", pe.Error(), len(pe.Stack), tt.wantPanic)
			}
		})
	}
}
