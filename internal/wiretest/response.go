package wiretest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// ExpectResult reads the next stdout line and fails t unless it is a success
// response (exactly the members jsonrpc, id and result) whose id is the JSON
// text id byte for byte and whose result is an object. It returns the
// result.
func (p *Proc) ExpectResult(t testing.TB, id string) map[string]any {
	t.Helper()
	line := p.Expect(t)
	res, err := CheckResult(line, id)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ExpectError reads the next stdout line and fails t unless it is an error
// response (see CheckError) with the JSON text id and the code. It returns
// the error object.
func (p *Proc) ExpectError(t testing.TB, id string, code int) map[string]any {
	t.Helper()
	line := p.Expect(t)
	e, err := CheckError(line, id, code)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// CheckResult checks that line is a success response with the JSON text id
// and an object result, and returns the result.
func CheckResult(line, id string) (map[string]any, error) {
	m, err := checkResponse(line, id, "result")
	if err != nil {
		return nil, err
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("result is not an object: %s", clip(line))
	}
	return res, nil
}

// CheckError checks that line is an error response (exactly the members
// jsonrpc, id and error) with the JSON text id, the code, a non-empty
// message, and data that is an object holding a non-empty correlationId
// . It returns the error object.
func CheckError(line, id string, code int) (map[string]any, error) {
	m, err := checkResponse(line, id, "error")
	if err != nil {
		return nil, err
	}
	e, ok := m["error"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("error is not an object: %s", clip(line))
	}
	if got := fmt.Sprint(e["code"]); got != fmt.Sprint(code) {
		return nil, fmt.Errorf("error code %s, want %d: %s", got, code, clip(line))
	}
	if msg, _ := e["message"].(string); msg == "" {
		return nil, fmt.Errorf("error without a message: %s", clip(line))
	}
	data, ok := e["data"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("error.data is not an object: %s", clip(line))
	}
	if cid, _ := data["correlationId"].(string); cid == "" {
		return nil, fmt.Errorf("error.data has no correlationId: %s", clip(line))
	}
	return e, nil
}

// checkResponse checks a response's members and its raw id, and returns it
// decoded with UseNumber.
func checkResponse(line, id, kind string) (map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return nil, fmt.Errorf("response is not a JSON object: %s", clip(line))
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"id", "jsonrpc", kind}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		return nil, fmt.Errorf("response members %v, want %v: %s", keys, want, clip(line))
	}
	if got := string(raw["id"]); got != id {
		return nil, fmt.Errorf("response id %s, want %s (byte for byte): %s", clip(got), clip(id), clip(line))
	}
	v, err := decode([]byte(line))
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
