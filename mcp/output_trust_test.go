package mcp

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// A typed tool's result is not checked again against the output schema
// derived from its own type: every value of the type must satisfy that
// schema. This test holds the derivation to it over generated values of
// types with every kind the derivation handles, nil and extreme values
// included, validated by kaptinlin.

type trustInner struct {
	A string  `json:"a"`
	B *int8   `json:"b,omitempty"`
	C []bool  `json:"c"`
	D float64 `json:"d"`
}

type trustOut struct {
	S   string                 `json:"s"`
	I8  int8                   `json:"i8"`
	U16 uint16                 `json:"u16"`
	I   int                    `json:"i"`
	U   uint64                 `json:"u"`
	F   float32                `json:"f"`
	B   bool                   `json:"b"`
	T   time.Time              `json:"t"`
	Raw json.RawMessage        `json:"raw"`
	Any any                    `json:"any"`
	Sl  []string               `json:"sl"`
	Ar  [2]int                 `json:"ar"`
	M   map[string]*trustInner `json:"m"`
	P   *trustInner            `json:"p"`
	In  trustInner             `json:"in"`
	By  []byte                 `json:"by"`
	Om  string                 `json:"om,omitempty"`
	Q   int                    `json:"q,string"`
	trustEmbedded
}

type trustEmbedded struct {
	E string `json:"e"`
}

func TestDerivedOutputSchemaHoldsForEveryValue(t *testing.T) {
	schema, ok, err := deriveOutputSchema(reflect.TypeFor[trustOut]())
	if err != nil || !ok {
		t.Fatalf("derive: ok=%v err=%v", ok, err)
	}
	cs, err := newSchemaCompiler().compile("outputSchema", schema)
	if err != nil {
		t.Fatal(err)
	}
	r := newPropRand(20261127)
	pick := func(n int) int { return r.Intn(n) }
	str := func() string { return []string{"", "x", "é", "\u2028", "a\"b"}[pick(5)] }
	inner := func() *trustInner {
		if pick(3) == 0 {
			return nil
		}
		v := &trustInner{A: str(), D: []float64{0, -1.5, math.MaxFloat64, math.SmallestNonzeroFloat64}[pick(4)]}
		if pick(2) == 0 {
			b := int8([]int{math.MinInt8, math.MaxInt8, 0}[pick(3)])
			v.B = &b
		}
		if pick(2) == 0 {
			v.C = []bool{true, false}
		}
		return v
	}
	for i := range 300 {
		v := trustOut{S: str(), I8: int8([]int{math.MinInt8, math.MaxInt8, 0}[pick(3)]),
			U16: uint16([]int{0, math.MaxUint16}[pick(2)]), I: []int{math.MinInt, math.MaxInt, 0}[pick(3)],
			U: []uint64{0, math.MaxUint64}[pick(2)], F: []float32{0, math.MaxFloat32, -1.25}[pick(3)], B: pick(2) == 0,
			T:   time.Unix(int64(pick(1<<30)), int64(pick(1e9))).In(time.FixedZone("z", 3600*(pick(25)-12))),
			Any: []any{nil, 1, "s", []any{1}, map[string]any{"k": true}}[pick(5)],
			Ar:  [2]int{pick(10), -pick(10)}, P: inner(), Om: str(), Q: pick(100) - 50}
		v.E = str()
		if pick(2) == 0 {
			v.Raw = json.RawMessage(`{"any":["json"]}`)
		}
		if pick(2) == 0 {
			v.Sl = []string{str(), str()}
		}
		if pick(2) == 0 {
			v.M = map[string]*trustInner{"k": inner(), "": inner()}
		}
		if p := inner(); p != nil {
			v.In = *p
		}
		if pick(2) == 0 {
			v.By = []byte{0, 255}
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if problems := cs.validate(js); len(problems) > 0 {
			t.Fatalf("value %d %s does not satisfy the schema derived from its type: %v\nschema %s", i, js, problems, schema)
		}
	}
}
