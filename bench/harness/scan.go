package harness

// scanEnvelope reads the top level of one JSON-RPC message without decoding
// it: the integer id (ok is false when there is none, or it is not an
// integer), whether it has an "error" member (an error answer) and whether
// it has a "method" member (a request or notification from the server).
// Nested values are skipped, strings with their escapes; the message is
// trusted to be valid JSON, as the servers measured here write it.
func scanEnvelope(msg []byte) (id int64, ok, isErr, isCall bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return 0, false, false, false
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			return id, ok, isErr, isCall
		}
		keyStart := i + 1
		i = skipString(msg, i)
		key := msg[keyStart : i-1]
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != ':' {
			return id, ok, isErr, isCall
		}
		i = skipSpace(msg, i+1)
		switch string(key) { // no allocation: the compiler compares in place
		case "id":
			id, ok = parseInt(msg, i)
		case "error":
			isErr = true
		case "method":
			isCall = true
		}
		i = skipValue(msg, i)
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != ',' {
			return id, ok, isErr, isCall
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' {
			i++
		}
		return i
	}
}

// parseInt parses the JSON integer at b[i].
func parseInt(b []byte, i int) (int64, bool) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	var n int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if i == start || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
