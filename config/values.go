package config

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/core"
)

// text formats v in environment form.
func (s *keySpec) text(v any) string {
	switch v := v.(type) {
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	return ""
}

// allowed says what the key accepts from source ("" for every source).
func (s *keySpec) allowed(source string) string {
	switch s.kind {
	case kindInt:
		return "an integer >= " + strconv.Itoa(s.min) + " and <= " + strconv.Itoa(s.max)
	case kindBool:
		switch {
		case s.reserved:
			return "false (reserved)"
		case source == sourceFile:
			return "true or false"
		case source == sourceEnv:
			return "true, false, 1 or 0"
		}
		return "true or false (env: true, false, 1 or 0)"
	case kindList:
		atLeast := ""
		if s.nonEmpty {
			atLeast = ", at least one"
		}
		switch source {
		case sourceFile:
			return "a JSON array of non-empty strings" + atLeast
		case sourceEnv:
			return "a comma-separated list of names" + atLeast
		}
		return "a list of non-empty strings" + atLeast + " (file: JSON array; env: comma-separated)"
	}
	switch {
	case s.enum != nil:
		return "one of " + strings.Join(s.enum, ", ") + " (case-sensitive)"
	case s.nonEmpty:
		return "a non-empty string"
	case s.envVarName:
		return "empty, or an environment variable name (ASCII letters, digits and _, not starting with a digit)"
	}
	return "any string (may be empty)"
}

// check validates a value of the key's type and returns why it is invalid,
// or "".
func (s *keySpec) check(v any) string {
	switch v := v.(type) {
	case int:
		switch {
		case v < s.min:
			return "must be >= " + strconv.Itoa(s.min)
		case v > s.max && s.max == maxConfigInt:
			return "too large"
		case v > s.max:
			return "must be <= " + strconv.Itoa(s.max)
		}
	case bool:
		if s.reserved && v {
			return "reserved: must be false"
		}
	case string:
		switch {
		case s.enum != nil && v == "":
			return "empty"
		case s.enum != nil && !slices.Contains(s.enum, v):
			for _, e := range s.enum {
				if strings.EqualFold(e, v) {
					return "not one of the allowed values (case-sensitive): did you mean " + e + "?"
				}
			}
			return "not one of the allowed values"
		case s.nonEmpty && v == "":
			return "must not be empty"
		case s.envVarName && v != "" && !isEnvVarName(v):
			return "not an environment variable name"
		}
	case []string:
		if s.nonEmpty && len(v) == 0 {
			return "must not be empty"
		}
		for _, item := range v {
			if item == "" {
				return "contains an empty string"
			}
		}
	}
	return ""
}

// newError returns the *Error of this key.
func (s *keySpec) newError(source, value, reason string) *Error {
	return &Error{
		Key:     s.path,
		Env:     s.env,
		Value:   s.shown(value),
		Allowed: s.allowed(source),
		Source:  source,
		Reason:  reason,
	}
}

// shown is value as an error may show it: shortened, or "[REDACTED]" for
// a secret key.
func (s *keySpec) shown(value string) string {
	if s.secret {
		return core.RedactedValue
	}
	return shorten(value)
}

// decodeJSON converts a file value to the key's type; the reason is "" on
// success.
func (s *keySpec) decodeJSON(raw []byte) (any, string) {
	t := jsonType(raw)
	switch s.kind {
	case kindInt:
		if t != "number" {
			return nil, wrongType(t, "number")
		}
		return parseInteger(string(raw))
	case kindBool:
		if t != "boolean" {
			return nil, wrongType(t, "boolean")
		}
		return raw[0] == 't', ""
	case kindString:
		if t != "string" {
			return nil, wrongType(t, "string")
		}
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, "not a valid JSON string"
		}
		return str, ""
	}
	if t != "array" {
		return nil, wrongType(t, "array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, "not a valid JSON array"
	}
	list := make([]string, 0, len(items))
	for n, item := range items {
		if it := jsonType(item); it != "string" {
			return nil, "wrong JSON type: item " + strconv.Itoa(n) + " is " + article(it) + ", want a string"
		}
		var str string
		if err := json.Unmarshal(item, &str); err != nil {
			return nil, "not a valid JSON string"
		}
		list = append(list, str)
	}
	return list, ""
}

// decodeEnv converts an environment value to the key's type; the reason is
// "" on success.
func (s *keySpec) decodeEnv(value string) (any, string) {
	switch s.kind {
	case kindInt:
		if value == "" {
			return nil, "empty"
		}
		digits := strings.TrimPrefix(value, "-")
		if digits == "" || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return nil, "not an integer"
		}
		return parseInteger(value)
	case kindBool:
		switch value {
		case "true", "1":
			return true, ""
		case "false", "0":
			return false, ""
		case "":
			return nil, "empty"
		}
		return nil, "not a boolean"
	case kindString:
		return value, ""
	}
	list := []string{}
	for item := range strings.SplitSeq(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list, ""
}

// parseInteger parses a JSON number (or a decimal integer) exactly and
// returns it as an int in [-maxConfigInt, maxConfigInt], or the reason it
// is not one. Integral values written with a fraction or an exponent (1.0,
// 1e3) count.
func parseInteger(num string) (any, string) {
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	mant, exp := num, int64(0)
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		mant = num[:i]
		e, err := strconv.ParseInt(strings.TrimPrefix(num[i+1:], "+"), 10, 32)
		if err != nil { // out of range: far too large or far too small
			e = 1 << 31
			if strings.HasPrefix(num[i+1:], "-") {
				e = -(1 << 31)
			}
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	tooLarge := "too large"
	if neg {
		tooLarge = "too small"
	}
	switch {
	case digits == "":
		return 0, ""
	case exp < 0:
		return nil, "not an integer"
	case int64(len(digits))+exp > int64(len(strconv.Itoa(maxConfigInt))):
		return nil, tooLarge
	}
	n, err := strconv.ParseInt(digits+strings.Repeat("0", int(exp)), 10, 64)
	if err != nil || n > maxConfigInt {
		return nil, tooLarge
	}
	if neg {
		n = -n
	}
	return int(n), ""
}

// jsonType names the JSON type of a valid JSON value.
func jsonType(raw []byte) string {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func wrongType(got, want string) string {
	return "wrong JSON type: got " + got + ", want " + article(want)
}

func article(t string) string {
	switch t {
	case "object", "array":
		return "an " + t
	case "null", "nothing":
		return t
	}
	return "a " + t
}

func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// isEnvVarName reports whether v is a portable environment variable name.
func isEnvVarName(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(isASCIIUpper(c) || isASCIILower(c) || c == '_' || (i > 0 && isASCIIDigit(c))) {
			return false
		}
	}
	return v != ""
}

// shorten caps an error value at 256 bytes (on a UTF-8 boundary).
func shorten(v string) string {
	const limit = 256
	if len(v) <= limit {
		return v
	}
	cut := limit
	for cut > 0 && v[cut]&0xC0 == 0x80 {
		cut--
	}
	return v[:cut] + "...(" + strconv.Itoa(len(v)) + " bytes)"
}
