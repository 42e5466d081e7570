package envelope

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// strictSeeds are JSON texts (and near misses) the strict check meets.
var strictSeeds = []string{
	`{}`, ` {"a":1} `, `{"a":{"b":[1,2,{"c":null}]},"d":"x\"y"}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
	`{"a":[{"b":1,"b":2}]}`, `[1]`, `"x"`, `{"a":1}{}`, `{"a":1,}`, `{"a" : true , "b" : false}`,
	`{"é":"ü","e":"u"}`, "{\"a\":\"\xff\"}", `{"a":1e5,"b":-0.5E-3}`, `{"k":"<&>"}`, `{"a":{"a":{"a":1}}}`,
}

func deep(n int) string {
	s := ""
	for range n {
		s += `{"a":`
	}
	s += "1"
	for range n {
		s += "}"
	}
	return s
}

// mutate returns s with a few random bytes changed, dropped or repeated.
func mutate(r *rand.Rand, s string) string {
	b := []byte(s)
	const alphabet = `{}[]":,a\ 1-eE.tnul` + "\xff"
	for range 1 + r.IntN(3) {
		if len(b) == 0 {
			break
		}
		i := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b[i] = alphabet[r.IntN(len(alphabet))]
		case 1:
			b = append(b[:i], b[i+1:]...)
		default:
			b = append(b[:i], append([]byte{b[i]}, b[i:]...)...)
		}
	}
	return string(b)
}

// The fast strict scan accepts only what the full check accepts, and
// accepts the ordinary valid objects.
func TestStrictFastPathAgrees(t *testing.T) {
	seeds := append(append([]string(nil), strictSeeds...), deep(MaxDepth-1), deep(MaxDepth), deep(MaxDepth+1))
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,2,{"c":null}]},"d":"x\"y"}`, deep(MaxDepth)} {
		if !strictOK([]byte(s)) {
			t.Errorf("fast path refuses %s", s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50000; i++ {
		s := seeds[i%len(seeds)]
		if i >= len(seeds) {
			s = mutate(r, s)
		}
		if strictOK([]byte(s)) && checkStrictFull("x", []byte(s)) != nil {
			t.Fatalf("fast path accepts %q, the full check refuses it: %v", s, checkStrictFull("x", []byte(s)))
		}
	}
}

func FuzzStrictFastPath(f *testing.F) {
	for _, s := range strictSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strictOK([]byte(s)) && checkStrictFull("x", []byte(s)) != nil {
			t.Fatalf("fast path accepts %q, the full check refuses it", s)
		}
	})
}

// payloadSeeds are valid payloads of each core type, as maps the test
// varies.
func payloadSeeds() map[string]map[string]any {
	return map[string]map[string]any{
		TaskAssignment: {"taskId": "t", "taskRef": "T", "taskDescription": "d", "memoryLogPath": "m", "executionType": "single-step",
			"dependencies": []any{map[string]any{"taskId": "u", "status": "done", "outputs": []any{"a"}}}, "context": map[string]any{}},
		TaskUpdate: {"taskId": "t", "status": "blocked", "progress": 0.5, "currentStep": "s", "notes": "n", "filesModified": []any{"f"},
			"blockers": []any{map[string]any{"type": "x", "description": "d", "severity": "s"}}, "estimatedCompletion": "2025-01-01T00:00:00Z"},
		StateSync: {"entityType": "task", "entityId": "e", "operation": "update", "state": map[string]any{}, "previousState": map[string]any{},
			"syncTimestamp": "2025-01-01T00:00:00.5Z"},
		ErrorReport: {"errorType": "TaskFailure", "errorCode": "E1", "errorMessage": "m", "severity": "low", "context": map[string]any{},
			"stackTrace": "s", "recoverable": true, "suggestedAction": "a", "metadata": map[string]any{}},
		HandoffRequest: {"taskId": "t", "reason": "load_balancing", "sourceAgent": map[string]any{"agentId": "a", "type": "Manager"},
			"targetAgent": map[string]any{"agentId": "b", "type": "AdHoc"}, "handoffContext": map[string]any{}},
		Ack:  {"acknowledgedMessageId": "m", "status": "processed", "timestamp": "2025-01-01T00:00:00Z", "processingTime": 3, "notes": "n"},
		Nack: {"rejectedMessageId": "m", "reason": "r", "errorCode": "E", "timestamp": "2025-01-01T00:00:00Z", "canRetry": false, "suggestedFix": "f"},
	}
}

// oddValues replace a field's value in the variations.
var oddValues = []any{nil, "", "x", 0, 1, -1, 0.0, 1.0, 2, -0.0000001, 1.0000001, true, false, []any{}, []any{1}, []any{"a", nil},
	map[string]any{}, map[string]any{"taskId": 1}, "2025-13-01T00:00:00Z", "2025-01-01t00:00:00z", "2025-01-01T24:00:00Z",
	"single-step", "blocked", "Manager", "processed", "low", "task", "create", "load_balancing", "TaskFailure"}

// The quick payload check accepts only what the schema accepts, and
// accepts the seeds.
func TestPayloadFastPathAgrees(t *testing.T) {
	v := newValidator(t)
	for typ, seed := range payloadSeeds() {
		if v.quick[typ] == nil {
			t.Fatalf("%s has no fast path", typ)
		}
		check := func(m map[string]any) bool {
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			fast := v.quick[typ].acceptsJSON(data)
			slow := schemaError("p", "/payload", v.payloads[typ].Validate(data)) == nil
			if fast && !slow {
				t.Fatalf("%s: fast path accepts %s, the schema refuses it", typ, data)
			}
			return fast
		}
		if !check(seed) {
			t.Errorf("%s: fast path refuses the seed", typ)
		}
		r := rand.New(rand.NewPCG(3, 4))
		keys := make([]string, 0, len(seed))
		for k := range seed {
			keys = append(keys, k)
		}
		for i := 0; i < 3000; i++ {
			m := make(map[string]any, len(seed))
			for k, x := range seed {
				m[k] = x
			}
			for range 1 + r.IntN(2) {
				k := keys[r.IntN(len(keys))]
				switch r.IntN(4) {
				case 0:
					delete(m, k)
				default:
					m[k] = oddValues[r.IntN(len(oddValues))]
				}
			}
			check(m)
		}
	}
}
