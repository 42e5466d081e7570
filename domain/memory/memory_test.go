package memory

import (
	"bufio"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestTermsAndIndexText(t *testing.T) {
	if got := Terms(`Hello, WORLD! "café"  x-y_z 42`); !slices.Equal(got, []string{"hello", "world", "café", "x", "y", "z", "42"}) {
		t.Fatalf("Terms = %q", got)
	}
	got := IndexText(json.RawMessage(`{"note":"a\nb","n":[1.5,true,null,"\u00e9"]}`))
	if got != "note a\nb n 1.5 é " {
		t.Fatalf("IndexText = %q", got)
	}
}

func TestReadLineBounded(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+100)
	br := bufio.NewReaderSize(strings.NewReader("a\r\n"+long+"\nb"), 16)
	var lines []string
	var tooLong []bool
	for {
		line, tl, err := readLine(br)
		lines = append(lines, strings.TrimSpace(string(line)))
		tooLong = append(tooLong, tl)
		if err != nil {
			break
		}
	}
	if !slices.Equal(lines, []string{"a", "", "b"}) || !slices.Equal(tooLong, []bool{false, true, false}) {
		t.Fatalf("lines %q tooLong %v", lines, tooLong)
	}
}
