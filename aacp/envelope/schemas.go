package envelope

// The JSON Schemas (draft 2020-12) of the envelope and of the payload of
// each core message type. Agent objects are written out in place rather
// than through $ref so that every validation error carries the full path of
// the offending value.

const agentSchema = `{"type":"object","required":["agentId","type"],"additionalProperties":false,
 "properties":{"agentId":{"type":"string","minLength":1},"type":{"type":"string"}}}`

const envelopeSchema = `{
 "type":"object",
 "required":["version","messageId","timestamp","sender","receiver","messageType","priority","payload"],
 "additionalProperties":false,
 "properties":{
  "seq":{"type":"integer","minimum":0},
  "ack":{"type":"integer","minimum":0},
  "version":{"type":"string"},
  "messageId":{"type":"string","minLength":1,"maxLength":128},
  "requestId":{"type":"string"},
  "correlationId":{"type":"string"},
  "timestamp":{"type":"string","format":"date-time"},
  "sender":` + agentSchema + `,
  "receiver":` + agentSchema + `,
  "messageType":{"type":"string"},
  "priority":{"enum":["HIGH","NORMAL","LOW"]},
  "payload":{"type":"object"},
  "metadata":{"type":"object","additionalProperties":false,"properties":{
   "retryCount":{"type":"integer","minimum":0},
   "ttl":{"type":"integer","minimum":1},
   "tags":{"type":"array","maxItems":32,"items":{"type":"string","minLength":1,"maxLength":64}}}}
 }}`

const sID = `{"type":"string","minLength":1}`
const sText = `{"type":"string"}`
const sStamp = `{"type":"string","format":"date-time"}`
const sStrings = `{"type":"array","items":{"type":"string"}}`

// payloadSchemas maps each core message type to the schema of its payload.
// Only the required fields and the enumerations are binding; optional
// fields are checked for their type when present, and fields the protocol
// does not name are allowed (later minor versions may add some).
var payloadSchemas = map[string]string{
	TaskAssignment: `{"type":"object",
 "required":["taskId","taskRef","taskDescription","memoryLogPath","executionType"],
 "properties":{"taskId":` + sID + `,"taskRef":` + sID + `,"taskDescription":` + sID + `,"memoryLogPath":` + sID + `,
  "executionType":{"enum":["single-step","multi-step"]},
  "dependencies":{"type":"array","items":{"type":"object","required":["taskId"],
   "properties":{"taskId":` + sID + `,"status":` + sText + `,"outputs":` + sStrings + `}}},
  "context":{"type":"object"}}}`,
	TaskUpdate: `{"type":"object",
 "required":["taskId","status","progress"],
 "properties":{"taskId":` + sID + `,
  "status":{"enum":["in_progress","blocked","pending_review","completed","failed"]},
  "progress":{"type":"number","minimum":0,"maximum":1},
  "currentStep":` + sText + `,"notes":` + sText + `,"filesModified":` + sStrings + `,
  "blockers":{"type":"array","items":{"type":"object","properties":{"type":` + sText + `,"description":` + sText + `,"severity":` + sText + `}}},
  "estimatedCompletion":` + sStamp + `}}`,
	StateSync: `{"type":"object",
 "required":["entityType","entityId","operation","state","syncTimestamp"],
 "properties":{"entityType":{"enum":["agent","task","memory_log","configuration"]},
  "entityId":` + sID + `,"operation":{"enum":["create","update","delete"]},
  "state":{"type":"object"},"previousState":{"type":"object"},"syncTimestamp":` + sStamp + `}}`,
	ErrorReport: `{"type":"object",
 "required":["errorType","errorMessage","severity"],
 "properties":{"errorType":{"enum":["TaskFailure","ValidationError","SystemError","DependencyError"]},
  "errorCode":` + sText + `,"errorMessage":` + sID + `,
  "severity":{"enum":["critical","high","medium","low"]},
  "context":{"type":"object"},"stackTrace":` + sText + `,"recoverable":{"type":"boolean"},
  "suggestedAction":` + sText + `,"metadata":{"type":"object"}}}`,
	HandoffRequest: `{"type":"object",
 "required":["taskId","reason","sourceAgent","targetAgent","handoffContext"],
 "properties":{"taskId":` + sID + `,
  "reason":{"enum":["context_window_limit","specialization_required","load_balancing"]},
  "sourceAgent":{"type":"object","required":["agentId","type"],"properties":{"agentId":` + sID + `,"type":{"enum":["Manager","Implementation","AdHoc"]}}},
  "targetAgent":{"type":"object","required":["agentId","type"],"properties":{"agentId":` + sID + `,"type":{"enum":["Manager","Implementation","AdHoc"]}}},
  "handoffContext":{"type":"object"}}}`,
	Ack: `{"type":"object",
 "required":["acknowledgedMessageId","status","timestamp"],
 "properties":{"acknowledgedMessageId":` + sID + `,
  "status":{"enum":["received","processed","queued"]},
  "timestamp":` + sStamp + `,"processingTime":{"type":"number","minimum":0},"notes":` + sText + `}}`,
	Nack: `{"type":"object",
 "required":["rejectedMessageId","reason","timestamp"],
 "properties":{"rejectedMessageId":` + sID + `,"reason":` + sID + `,"errorCode":` + sText + `,
  "timestamp":` + sStamp + `,"canRetry":{"type":"boolean"},"suggestedFix":` + sText + `}}`,
}
