// Package fuzz holds the go test -fuzz targets of mcprt: no
// input may crash, hang or corrupt the server. Each target checks its
// subject against a small, independent reference written in the test, so a
// finding is either a crash or a disagreement about what the input means.
//
//   - FuzzFramer feeds arbitrary bytes to jsonrpc.NewFramer through readers
//     that split the input at points derived from it (one byte at a time,
//     halves, random sizes, data delivered together with io.EOF, a read
//     error at the end), under several line limits derived from the input
//     (tiny ones, exactly the longest line and one less, and one above the
//     whole input). Next must terminate, and its lines, ErrLineTooLong and
//     ErrPartialLine reports must equal those of a reference splitter:
//     split on '\n', strip one trailing '\r', report lines over the limit,
//     drop lines of only spaces and tabs, and report a fragment at the end
//     of the input that holds anything but spaces, tabs and CRs. (A blank
//     fragment longer than the limit may be reported as partial: the
//     framer discards it unread.)
//   - FuzzDecode feeds an arbitrary line to jsonrpc.Decode (and to
//     jsonrpc.DecodeBatch and DecodeElement for a line holding an array).
//     The result must match a reference classifier built on
//     map[string]json.RawMessage plus a json.Decoder.Token scan for
//     duplicate and case-variant envelope keys: -32700 exactly for input
//     that is not valid UTF-8 or not valid JSON, -32600 for every other
//     rejection, the echoed id only when the envelope has exactly one id of
//     a valid type, and ids kept byte for byte.
//   - FuzzSession feeds arbitrary bytes as the whole input of an in-process
//     mcp Session (maxMessageBytes 4096). A first byte 0x01 or 0x02 is
//     replaced by a valid initialize (revision 2025-03-26, with batches, or
//     2025-11-25) and notifications/initialized, so the fuzzer reaches the
//     RUNNING state. Serve must return once the input is exhausted, and
//     the output must hold only compact JSON-RPC responses, each error
//     carrying an integer code, a string message and a non-empty
//     data.correlationId, and no more response lines than input lines that
//     call for one.
//   - FuzzToolCall turns arbitrary bytes into the params (or the name and
//     arguments) of a tools/call sent to a TEST-mode server with the
//     fixture tools: exactly one compact response (a -32602 error, or a
//     CallToolResult whose tool errors carry the full StructuredError) and
//     exactly one final completion record per call.
//   - FuzzResourcesRead and FuzzPromptsGet build resources/read and
//     prompts/get params from the input the same way, against a TEST
//     server with demo resources and prompts: each request gets one
//     compact response matching an independent reference (-32602 for a
//     bad params shape, else the demo contents exactly, or -32002 with
//     data {code: NOT_FOUND, uri}), every error with the right
//     data.correlationId.
//
// Seed inputs are added in code (f.Add) and committed under
// testdata/fuzz/<FuzzName>/ in the go test fuzz v1 format; plain go test
// runs every seed as a regression test. To fuzz:
//
//	make fuzz-short                       # each target for FUZZTIME inputs (20000x)
//	make fuzz                             # each target for LONGFUZZTIME (5m)
//	go test -run='^$' -fuzz='^FuzzDecode$' -fuzztime=1m ./fuzz
//
// A failing input is written to testdata/fuzz/<FuzzName>/; commit it with
// the fix so it stays a regression test.
package fuzz
