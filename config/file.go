package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcprt/mcprt/core"
)

// maxConfigFileBytes bounds the configuration file, so that a path such
// as /dev/zero cannot exhaust memory.
const maxConfigFileBytes = 1 << 20

// fileAllowed is Error.Allowed for a file that cannot be used at all.
const fileAllowed = "a readable JSON object file (UTF-8, at most 1048576 bytes)"

// configNode is one object level of the file: its keys in order, and for
// each key the nested level (nil for a value key).
type configNode struct {
	keys     []string
	children map[string]*configNode
}

// insert adds the value key at path, and the objects above it, to the
// tree rooted at n.
func (n *configNode) insert(path string) {
	segs := strings.Split(path, ".")
	for _, seg := range segs[:len(segs)-1] {
		child, ok := n.children[seg]
		if !ok {
			child = &configNode{children: map[string]*configNode{}}
			n.keys = append(n.keys, seg)
			n.children[seg] = child
		}
		n = child
	}
	last := segs[len(segs)-1]
	n.keys = append(n.keys, last)
	n.children[last] = nil
}

// applyFile reads the file at path and applies its values to the section
// values work.
func (l *loader) applyFile(work []reflect.Value, sources map[string]string, path string) error {
	data, reason := readConfigFile(path)
	if reason != "" {
		return fileError(path, reason)
	}
	values := make(map[string][]byte)
	if err := walkObject(path, data, "", l.root, values); err != nil {
		return err
	}
	for i := range l.specs {
		s := &l.specs[i]
		raw, ok := values[s.path]
		if !ok {
			continue
		}
		v, reason := s.decodeJSON(raw)
		if reason == "" {
			reason = s.check(v)
		}
		if reason != "" {
			return s.newError(sourceFile, compactJSON(raw), reason)
		}
		s.set(work[s.section], v)
		sources[s.path] = sourceFile
	}
	return nil
}

// readConfigFile returns the file's bytes once they are known to be one
// JSON object, or the reason they are not.
func readConfigFile(path string) ([]byte, string) {
	// Stat before opening: opening a FIFO would wait for a writer.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, "not a regular file (" + core.FileKind(st.Mode()) + "); give a JSON file"
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "cannot read: " + err.Error()
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFileBytes+1))
	if err != nil {
		return nil, "cannot read: " + err.Error()
	}
	if len(data) > maxConfigFileBytes {
		return nil, "larger than " + strconv.Itoa(maxConfigFileBytes) + " bytes"
	}
	if !utf8.Valid(data) {
		return nil, "not valid UTF-8"
	}
	var probe json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		reason := "not valid JSON: " + err.Error()
		var syn *json.SyntaxError
		// The offset of an early end is the end: no position to give.
		if errors.As(err, &syn) && syn.Offset >= 1 && !strings.Contains(syn.Error(), "unexpected end") {
			line, col := lineColumn(data, syn.Offset-1)
			reason += " (line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ")"
		}
		return nil, reason
	}
	if t := jsonType(data); t != "object" {
		return nil, "the top level is " + article(t) + ", not an object"
	}
	return data, ""
}

// lineColumn converts the byte offset of a byte of data into its 1-based
// line and column.
func lineColumn(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// walkObject checks one object level of the (valid JSON) file named file:
// every key
// is known at this level and appears once, and every section is an
// object. Value keys land in values, keyed by path, still as JSON.
func walkObject(file string, data []byte, prefix string, node *configNode, values map[string][]byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return fileError(file, "not valid JSON: "+err.Error())
	}
	seen := make(map[string]bool, len(node.keys))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fileError(file, "not valid JSON: "+err.Error())
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fileError(file, "not valid JSON: "+err.Error())
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		child, known := node.children[key]
		switch {
		case !known:
			return &Error{
				Key:     path,
				Value:   redactIfSecret(key, shorten(compactJSON(raw))),
				Allowed: "one of " + strings.Join(node.keys, ", ") + suggest(key, node.keys, strings.ToLower),
				Source:  sourceFile,
				Reason:  "unknown key",
			}
		case seen[key]:
			env := ""
			if child == nil {
				env = EnvName(path)
			}
			return &Error{
				Key:     path,
				Env:     env,
				Value:   shorten(compactJSON(raw)),
				Allowed: "each key at most once",
				Source:  sourceFile,
				Reason:  "duplicate key",
			}
		}
		seen[key] = true
		if child == nil {
			values[path] = raw
			continue
		}
		if t := jsonType(raw); t != "object" {
			return &Error{
				Key:     path,
				Value:   shorten(compactJSON(raw)),
				Allowed: "a JSON object with keys " + strings.Join(child.keys, ", "),
				Source:  sourceFile,
				Reason:  wrongType(t, "object"),
			}
		}
		if err := walkObject(file, raw, path, child, values); err != nil {
			return err
		}
	}
	return nil
}

// fileError is the *Error of a file that cannot be used at all.
func fileError(path, reason string) *Error {
	return &Error{Key: "config", Env: envConfig, Value: path, Allowed: fileAllowed, Source: sourceFile, Reason: reason}
}

// compactJSON returns a valid JSON value without insignificant space.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
