package jsontext

import (
	"bytes"
	"io"
)

// Spaced is an io.Reader over one JSON object, for an encoding/json
// streaming decoder that walks its members with Token: it serves the
// object with a space before each ',', ':' and '}' of the top level
// (whitespace outside strings means nothing in JSON, and member values
// keep their exact bytes). The space spares the decoder an error value it
// would otherwise build and discard at the end of every member name and
// value of compact JSON (encoding/json's scanner reports "invalid
// character after top-level value" to find where a value ends).
//
// Offset maps a position in what it served back to the object, so that a
// member value the decoder read can be sliced from the object itself
// rather than copied. The zero value serves nothing; Reset starts an
// object. A Spaced is not safe for concurrent use.
type Spaced struct {
	b        []byte
	depth    int   // container depth outside strings
	inString bool  // inside a string
	escaped  bool  // after a backslash inside a string
	pending  byte  // the byte owed after an inserted space; 0 when none
	served   int   // bytes served since Reset
	spaces   []int // where the inserted spaces were served, ascending
	// first holds the spaces of an object of a few members, so that a
	// Spaced used once allocates nothing for them.
	first [16]int
}

// Reset starts serving obj.
func (s *Spaced) Reset(obj []byte) {
	spaces := s.spaces[:0]
	*s = Spaced{b: obj}
	if cap(spaces) > len(s.first) {
		s.spaces = spaces
	} else {
		s.spaces = s.first[:0]
	}
}

// Done reports whether everything was served.
func (s *Spaced) Done() bool { return len(s.b) == 0 && s.pending == 0 }

// Offset returns the position in the object of the byte served at
// position served (both counted from Reset): served minus the spaces
// inserted before it.
func (s *Spaced) Offset(served int) int {
	n := 0
	for n < len(s.spaces) && s.spaces[n] < served {
		n++
	}
	return served - n
}

// Read serves the object, spaced.
func (s *Spaced) Read(p []byte) (int, error) {
	n := 0
	if s.pending != 0 && len(p) > 0 {
		p[0], s.pending = s.pending, 0
		n = 1
	}
	for n < len(p) && len(s.b) > 0 {
		lim := min(len(s.b), len(p)-n)
		i, insert := s.scan(s.b[:lim])
		n += copy(p[n:], s.b[:i])
		if !insert {
			s.b = s.b[i:]
			continue
		}
		// s.b[i] gets a space before it; i < lim leaves room for the space.
		s.spaces = append(s.spaces, s.served+n)
		p[n] = ' '
		n++
		if n < len(p) {
			p[n] = s.b[i]
			n++
		} else {
			s.pending = s.b[i]
		}
		s.b = s.b[i+1:]
	}
	s.served += n
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// scan advances the string and depth state over b and returns the number
// of bytes that pass unchanged, and whether the byte after them needs a
// space before it (its state is already accounted for).
func (s *Spaced) scan(b []byte) (int, bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if s.inString {
			if s.escaped {
				s.escaped = false
				continue
			}
			// Jump to the next quote or backslash.
			j := bytes.IndexAny(b[i:], "\"\\")
			if j < 0 {
				return len(b), false
			}
			i += j
			if b[i] == '\\' {
				s.escaped = true
			} else {
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return i, true
			}
		case ',', ':':
			if s.depth == 1 {
				return i, true
			}
		}
	}
	return len(b), false
}
