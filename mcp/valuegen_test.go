package mcp

import (
	"encoding/json"
	"math"
	"reflect"
	"time"
)

// randomValue returns a random value of type t for property tests: every
// kind encoding/json encodes, with nil, empty and extreme values, odd
// strings, and random times and raw JSON. Unexported fields stay zero;
// below depth 0 pointers are nil and slices and maps empty.
func randomValue(r *propRand, t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	pick := r.Intn
	switch t {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(int64(pick(1<<31)), int64(pick(1e9))).In(time.FixedZone("z", 3600*(pick(25)-12)))))
		return v
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte([]string{`null`, `{"k":[1,"x"]}`, `"s"`, `-1.5e3`}[pick(4)]))
		return v
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(pick(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		v.SetInt([]int64{0, 1, -1, int64(pick(1000)), -1 << (bits - 1), 1<<(bits-1) - 1}[pick(6)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint([]uint64{0, 1, uint64(pick(1000)), math.MaxUint64 >> (64 - t.Bits())}[pick(4)])
	case reflect.Float32:
		v.SetFloat([]float64{0, -1.25, math.MaxFloat32, math.SmallestNonzeroFloat32}[pick(4)])
	case reflect.Float64:
		v.SetFloat([]float64{0, -1.25, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21}[pick(5)])
	case reflect.String:
		v.SetString([]string{"", "x", "é", "\u2028", "a\"b<&>", "line\nbreak"}[pick(6)])
	case reflect.Slice:
		if pick(3) == 0 || depth <= 0 {
			if pick(2) == 0 {
				v.Set(reflect.MakeSlice(t, 0, 0))
			}
			return v
		}
		n := 1 + pick(3)
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			s.Index(i).Set(randomValue(r, t.Elem(), depth-1))
		}
		v.Set(s)
	case reflect.Array:
		for i := range t.Len() {
			v.Index(i).Set(randomValue(r, t.Elem(), depth-1))
		}
	case reflect.Map:
		if pick(3) == 0 || depth <= 0 {
			return v
		}
		m := reflect.MakeMap(t)
		for range 1 + pick(2) {
			m.SetMapIndex(randomValue(r, t.Key(), 0), randomValue(r, t.Elem(), depth-1))
		}
		v.Set(m)
	case reflect.Pointer:
		if pick(3) == 0 || depth <= 0 {
			return v
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(randomValue(r, t.Elem(), depth-1))
		v.Set(p)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				v.Field(i).Set(randomValue(r, f.Type, depth-1))
			}
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			if x := []any{nil, 1.5, "s", true, []any{1.0, "x"}, map[string]any{"k": nil}}[pick(6)]; x != nil {
				v.Set(reflect.ValueOf(x))
			}
		}
	}
	return v
}

// checkTypedOutputs generates n values of the result type of every tool
// on s whose outputSchema AddTypedTool derived from that type (the results
// not checked again at run time), encodes each as a call's result is
// encoded, and validates it with kaptinlin alone. It returns the number of
// such tools and the first value that fails, if any.
func checkTypedOutputs(s *Server, seed int64, n int) (tools int, failure string) {
	r := newPropRand(seed)
	for _, rt := range s.tools.all() {
		typ := rt.def.outputType
		if typ == nil || rt.output == nil {
			continue
		}
		tools++
		for range n {
			v := randomValue(r, typ, 5).Interface()
			if !rt.trustsOutput(v) {
				continue // a nil *Out: checked at run time
			}
			e := getEncoder()
			js, err := e.encodeLimited(v, 1<<20)
			js = append([]byte(nil), js...)
			putEncoder(e)
			if err != nil {
				continue // not encodable at all: the call fails before any schema
			}
			inst, err := rt.output.decode(js)
			if err != nil {
				return tools, rt.def.Name + ": the encoded result is not JSON: " + err.Error()
			}
			if res, why := rt.output.evaluate(inst); why != "" || !res.IsValid() {
				return tools, rt.def.Name + ": result " + string(js) + " does not satisfy the outputSchema derived from " +
					typ.String() + ": " + string(rt.outRaw)
			}
		}
	}
	return tools, ""
}
