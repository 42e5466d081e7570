package envelope

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaptinlin/jsonschema"
	"github.com/mcprt/mcprt/core"
)

// Validator checks envelopes and payloads. Its schemas are compiled once,
// by NewValidator; it is immutable afterwards and safe for concurrent use.
type Validator struct {
	maxBytes int
	envelope *jsonschema.Schema
	payloads map[string]*jsonschema.Schema
	quick    map[string]*quick // payload schemas' fast paths
}

// NewValidator compiles the schemas. maxBytes is the size limit of one
// encoded envelope; zero or negative means DefaultMaxBytes.
func NewValidator(maxBytes int) (*Validator, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	compile := func(name, src string) (*jsonschema.Schema, error) {
		c := jsonschema.NewCompiler()
		c.SetAssertFormat(true)
		s, err := c.Compile([]byte(src))
		if err != nil {
			return nil, fmt.Errorf("compile the %s schema: %w", name, err)
		}
		return s, nil
	}
	v := &Validator{maxBytes: maxBytes, payloads: make(map[string]*jsonschema.Schema, len(payloadSchemas)),
		quick: make(map[string]*quick, len(payloadSchemas))}
	var err error
	if v.envelope, err = compile("envelope", envelopeSchema); err != nil {
		return nil, err
	}
	for typ, src := range payloadSchemas {
		if v.payloads[typ], err = compile(typ+" payload", src); err != nil {
			return nil, err
		}
		if q := compileQuick(src); q != nil {
			v.quick[typ] = q
		}
	}
	return v, nil
}

// MaxBytes is the size limit of one encoded envelope.
func (v *Validator) MaxBytes() int { return v.maxBytes }

// Parse decodes and validates one encoded envelope (without its trailing
// newline). Every rejection is a *core.Error with a catalogue code; its
// message says what was wrong and what would be right, and Details holds
// "path" (a JSON pointer into the envelope) when one value is at fault.
func (v *Validator) Parse(data []byte) (*Envelope, error) {
	if len(data) > v.maxBytes {
		return nil, Errorf(CodeTooLarge, "the envelope is %d bytes; the limit is %d bytes: send a smaller payload", len(data), v.maxBytes).
			WithDetail("sizeBytes", len(data)).WithDetail("limitBytes", v.maxBytes)
	}
	if err := checkStrict("the envelope", data); err != nil {
		return nil, err
	}
	if err := schemaError("the envelope", "", v.envelope.Validate(data)); err != nil {
		return nil, err
	}
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, Errorf(CodeMalformedJSON, "the envelope does not decode (%v); send an envelope of the documented shape", err)
	}
	if err := v.check(&env, false); err != nil {
		return nil, err
	}
	return &env, nil
}

// Validate checks an envelope built in Go: the rules Parse applies after
// decoding, including the payload's schema and the size of the encoding.
func (v *Validator) Validate(env *Envelope) error {
	_, err := v.Encode(nil, env)
	return err
}

// Encode validates env as Validate does and returns dst with env's
// encoding (AppendJSON) appended, so that a sender that checks an
// envelope need not encode it again to write it.
func (v *Validator) Encode(dst []byte, env *Envelope) ([]byte, error) {
	if err := v.check(env, true); err != nil {
		return dst, err
	}
	n := len(dst)
	dst, err := AppendJSON(dst, env)
	if err != nil {
		return dst[:n], Errorf(CodeMalformedJSON, "the envelope cannot be encoded (%v); use a payload that is a JSON object", err)
	}
	if size := len(dst) - n; size > v.maxBytes {
		return dst[:n], Errorf(CodeTooLarge, "the envelope is %d bytes; the limit is %d bytes: send a smaller payload", size, v.maxBytes).
			WithDetail("sizeBytes", size).WithDetail("limitBytes", v.maxBytes)
	}
	return dst, nil
}

// check applies the rules JSON Schema does not express. full also checks
// the payload's well-formedness, which Parse has already done.
func (v *Validator) check(env *Envelope, full bool) error {
	if env.Version != Version {
		return Errorf(CodeUnsupportedVersion, "version %s is not supported; this agent speaks %q", quoteClip(env.Version), Version).WithDetail("path", "/version")
	}
	if err := CheckID("messageId", env.MessageID); err != nil {
		return err.WithDetail("path", "/messageId")
	}
	if env.RequestID != "" {
		if err := CheckID("requestId", env.RequestID); err != nil {
			return err.WithDetail("path", "/requestId")
		}
	}
	if env.CorrelationID != "" {
		if err := CheckID("correlationId", env.CorrelationID); err != nil {
			return err.WithDetail("path", "/correlationId")
		}
	}
	t, err := time.Parse(time.RFC3339Nano, env.Timestamp)
	if err != nil || !strings.HasSuffix(env.Timestamp, "Z") || t.IsZero() {
		return Errorf(CodeSchema, "timestamp %s is not an RFC 3339 UTC time; want e.g. \"2025-11-12T10:30:45.123Z\"", quoteClip(env.Timestamp)).WithDetail("path", "/timestamp")
	}
	if err := CheckAgentID(env.Sender.AgentID); err != nil && env.Sender.AgentID != SystemAgentID {
		return err.WithDetail("path", "/sender/agentId")
	}
	if !env.Sender.Type.Valid() {
		return Errorf(CodeInvalidEnum, "sender type %s is not an agent type; want Manager, Implementation or AdHoc", quoteClip(string(env.Sender.Type))).WithDetail("path", "/sender/type")
	}
	if err := CheckReceiver(env.Receiver); err != nil {
		return err
	}
	if !ValidType(env.MessageType) {
		return Errorf(CodeInvalidEnum, "messageType %s is unknown; want one of %s, or CUSTOM_ followed by upper-case letters, digits and '_'",
			quoteClip(env.MessageType), strings.Join(CoreTypes(), ", ")).WithDetail("path", "/messageType")
	}
	if env.Priority.Rank() > 2 {
		return Errorf(CodeInvalidEnum, "priority %s is unknown; want HIGH, NORMAL or LOW", quoteClip(string(env.Priority))).WithDetail("path", "/priority")
	}
	if env.Metadata.RetryCount < 0 || env.Metadata.TTL < 0 {
		return Errorf(CodeSchema, "metadata.retryCount and metadata.ttl must not be negative; got %d and %d", env.Metadata.RetryCount, env.Metadata.TTL).WithDetail("path", "/metadata")
	}
	if err := CheckTags(env.Metadata.Tags); err != nil {
		return err
	}
	return v.payload(env.MessageType, env.Payload, full)
}

// CheckReceiver returns an error unless r addresses one agent (a valid id
// and a type, which may be AnyType or empty when the broker fills it in)
// or a broadcast ("*" with an agent type or "*").
func CheckReceiver(r Agent) *core.Error {
	if r.AgentID == Broadcast {
		if r.Type != AnyType && r.Type != "" && !r.Type.Valid() {
			return Errorf(CodeInvalidEnum, "receiver type %s is unknown; a broadcast wants Manager, Implementation, AdHoc or \"*\"", quoteClip(string(r.Type))).WithDetail("path", "/receiver/type")
		}
		return nil
	}
	if err := CheckAgentID(r.AgentID); err != nil {
		return err.WithDetail("path", "/receiver/agentId")
	}
	if r.Type != "" && r.Type != AnyType && !r.Type.Valid() {
		return Errorf(CodeInvalidEnum, "receiver type %s is unknown; want Manager, Implementation or AdHoc", quoteClip(string(r.Type))).WithDetail("path", "/receiver/type")
	}
	return nil
}

// CheckTags returns an E_VALIDATION_004 error when tags break the limits:
// at most MaxTags tags of 1 to MaxTagBytes bytes each.
func CheckTags(tags []string) *core.Error {
	if len(tags) > MaxTags {
		return Errorf(CodeSchema, "metadata.tags has %d tags; want at most %d", len(tags), MaxTags).WithDetail("path", "/metadata/tags")
	}
	for i, t := range tags {
		if t == "" || len(t) > MaxTagBytes {
			return Errorf(CodeSchema, "tag %d %s is %d bytes; want 1 to %d bytes", i, quoteClip(t), len(t), MaxTagBytes).WithDetail("path", fmt.Sprintf("/metadata/tags/%d", i))
		}
	}
	return nil
}

// ValidatePayload checks payload against the schema of messageType: a
// core type's required fields and enumerations; for a custom type, only
// that the payload is a JSON object.
func (v *Validator) ValidatePayload(messageType string, payload json.RawMessage) error {
	if !ValidType(messageType) {
		return Errorf(CodeInvalidEnum, "messageType %s is unknown; want one of %s, or CUSTOM_ followed by upper-case letters, digits and '_'",
			quoteClip(messageType), strings.Join(CoreTypes(), ", ")).WithDetail("path", "/messageType")
	}
	return v.payload(messageType, payload, true)
}

func (v *Validator) payload(messageType string, payload json.RawMessage, strict bool) error {
	if len(payload) == 0 {
		return Errorf(CodeMissingField, "the payload is missing; send a JSON object").WithDetail("path", "/payload")
	}
	if len(payload) > v.maxBytes {
		return Errorf(CodeTooLarge, "the payload is %d bytes; the limit is %d bytes: send a smaller payload", len(payload), v.maxBytes).
			WithDetail("sizeBytes", len(payload)).WithDetail("limitBytes", v.maxBytes)
	}
	if strict {
		if err := checkStrict("the payload", payload); err != nil {
			if p := firstNonSpace(payload); p != '{' && json.Valid(payload) {
				return Errorf(CodeInvalidType, "the payload is not a JSON object; send an object ({...})").WithDetail("path", "/payload")
			}
			return err
		}
	}
	s, ok := v.payloads[messageType]
	if !ok {
		return nil // custom: any object
	}
	if q := v.quick[messageType]; q != nil {
		if q.acceptsJSON(payload) {
			return nil
		}
	}
	return schemaError("the "+messageType+" payload", "/payload", s.Validate([]byte(payload)))
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// issue is one schema violation, mapped to a catalogue code.
type issue struct {
	code core.Code
	path string
	msg  string
	// nullish: the value checked was null, which is also how the schema
	// library checks an absent field; such an issue is dropped when the
	// field is reported missing.
	nullish bool
}

// schemaError turns a failed evaluation into the error of its most
// telling issue (missing field, then wrong type, then bad enumeration
// value, then anything else, each by path), naming the others in
// details.issues. It returns nil for a valid result.
func schemaError(what, prefix string, r *jsonschema.EvaluationResult) error {
	if r == nil || r.IsValid() {
		return nil
	}
	var all []issue
	collect(r, prefix, &all)
	missing := make(map[string]bool)
	for _, is := range all {
		if is.code == CodeMissingField {
			missing[is.path] = true
		}
	}
	all = slices.DeleteFunc(all, func(is issue) bool { return is.nullish && missing[is.path] })
	if len(all) == 0 {
		return Errorf(CodeSchema, "%s does not match its schema; compare it with the documented shape", what)
	}
	slices.SortFunc(all, func(a, b issue) int {
		if c := strings.Compare(string(a.code), string(b.code)); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	all = slices.CompactFunc(all, func(a, b issue) bool { return a.path == b.path && a.code == b.code })
	first := all[0]
	if first.path == "/correlationId" || first.path == "/requestId" {
		first.code = CodeInvalidCorrelationID
	}
	e := Errorf(first.code, "%s: %s", what, first.msg).WithDetail("path", first.path)
	if len(all) > 1 {
		var more []string
		for _, is := range all[1:min(len(all), 10)] {
			more = append(more, fmt.Sprintf("%s %s: %s", is.code, is.path, is.msg))
		}
		e = e.WithDetail("issues", more)
	}
	return e
}

// collect walks the evaluation tree; instance locations in it are
// relative to the parent node.
func collect(r *jsonschema.EvaluationResult, base string, out *[]issue) {
	path := base + r.InstanceLocation
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e := r.Errors[k]
		prop := strings.Trim(fmt.Sprint(e.Params["property"]), "'")
		switch e.Keyword {
		case "properties", "items", "prefixItems", "$ref", "allOf", "anyOf", "oneOf":
			// containers: the cause is reported further down
		case "required":
			// One missing property comes as "property", several as
			// "properties" ("'a', 'b'"): one issue each.
			props := []string{prop}
			if _, one := e.Params["property"]; !one {
				props = props[:0]
				for p := range strings.SplitSeq(fmt.Sprint(e.Params["properties"]), ",") {
					props = append(props, strings.Trim(strings.TrimSpace(p), "'"))
				}
			}
			for _, p := range props {
				*out = append(*out, issue{CodeMissingField, path + "/" + p, fmt.Sprintf("the required field %q is missing at %s; add it", p, orRoot(path)), false})
			}
		case "additionalProperties":
			*out = append(*out, issue{CodeSchema, path + "/" + prop, fmt.Sprintf("unknown field %q at %s; remove it (keys are case-sensitive)", prop, orRoot(path)), false})
		case "type":
			nullish := fmt.Sprint(e.Params["received"]) == "null"
			*out = append(*out, issue{CodeInvalidType, path, fmt.Sprintf("%s is %v; want %v", orRoot(path), e.Params["received"], e.Params["expected"]), nullish})
		case "enum", "const":
			var received any = "null"
			if r, ok := e.Params["received"].(string); ok {
				received = strconv.Quote(r)
			} else if e.Params["received"] != nil {
				received = e.Params["received"]
			}
			*out = append(*out, issue{CodeInvalidEnum, path, fmt.Sprintf("%s is %v; want one of %v", orRoot(path), received, e.Params["expected"]), e.Params["received"] == nil})
		case "schema":
			// the false schema under additionalProperties: reported above
		default:
			*out = append(*out, issue{CodeSchema, path, fmt.Sprintf("%s: %s", orRoot(path), e.Error()), false})
		}
	}
	for _, d := range r.Details {
		collect(d, path, out)
	}
}

func orRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
