// Drives the mcprt binary (path in MCPRT_BIN) with the official MCP
// TypeScript SDK client over stdio and checks what a real client sees:
// tools, resources (read, templates, subscribe and updates), prompts,
// completion, logging, progress, and the client answering sampling,
// elicitation and roots requests. MCPRT_REV, when set, is the protocol
// revision the client asks for (the SDK asks for its latest otherwise).
// The binary runs behind tee.mjs, which records both directions to the
// files named in TEE_IN, TEE_OUT, TEE_ERR and TEE_EXIT.
// Exits non-zero, naming the check, on the first failure.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const rev = process.env.MCPRT_REV || LATEST_PROTOCOL_VERSION;
const atLeast = (v) => rev >= v;

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL [${rev}]: ${what}`);
    process.exit(1);
  }
  console.log(`ok [${rev}]: ${what}`);
}

// waitFor resolves once cond() holds, re-checking after every message the
// client handles; it fails the run when that takes more than 10 s.
const waiters = new Set();
function changed() {
  for (const w of waiters) w();
}
function waitFor(cond, what) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => check(false, what + " (not within 10 s)"), 10000);
    const w = () => {
      if (cond()) {
        clearTimeout(timer);
        waiters.delete(w);
        check(true, what);
        resolve();
      }
    };
    waiters.add(w);
    w();
  });
}

// rejects runs p and returns the McpError it fails with.
async function rejects(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return undefined;
}

// structured returns a tool result's structuredContent, or (before
// 2025-06-18, which has none) the JSON of its first text block.
function structured(res) {
  if (atLeast("2025-06-18")) return res.structuredContent;
  return JSON.parse(res.content[0].text);
}

// toolError returns the StructuredError of a tool error result.
function toolError(res) {
  return res.isError ? JSON.parse(res.content[0].text) : undefined;
}

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [fileURLToPath(new URL("tee.mjs", import.meta.url))],
  env: {
    SERVER_BIN: process.env.MCPRT_BIN,
    TEE_IN: process.env.TEE_IN,
    TEE_OUT: process.env.TEE_OUT,
    TEE_ERR: process.env.TEE_ERR,
    TEE_EXIT: process.env.TEE_EXIT,
    MCPRT_SERVER_MODE: "TEST",
    MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED: "true",
    MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED: "true",
    MCPRT_TOOLS_ADMIN_POLICY_MODE: "local_stdio_only",
  },
  stderr: "ignore",
});
if (rev !== LATEST_PROTOCOL_VERSION) {
  // The SDK always asks for its latest revision; ask for rev instead (the
  // server echoes a revision it speaks, and the SDK accepts it).
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg.method === "initialize") msg = { ...msg, params: { ...msg.params, protocolVersion: rev } };
    return send(msg, opts);
  };
}

const client = new Client(
  { name: "mcprt-ts-test", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
let listChanged = 0;
const updated = [];
const logs = [];
let rootsAsked = 0;
let roots = [{ uri: "file:///work/project", name: "project" }];
const sampled = [];
const elicited = [];
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++; changed(); });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); changed(); });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); changed(); });
client.setRequestHandler(ListRootsRequestSchema, () => { rootsAsked++; return { roots }; });
client.setRequestHandler(CreateMessageRequestSchema, (req) => {
  sampled.push(req.params);
  const text = req.params.messages[0].content.text;
  return { role: "assistant", content: { type: "text", text: "echo: " + text }, model: "demo-model", stopReason: "endTurn" };
});
client.setRequestHandler(ElicitRequestSchema, (req) => {
  elicited.push(req.params);
  return { action: "accept", content: { name: "Ada" } };
});
await client.connect(transport);
// wire holds every message the client reads after the handshake, in order.
const wire = [];
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => {
  wire.push(msg);
  onmessage(msg, extra);
};

// Lifecycle and capabilities.
check(client.getServerVersion()?.name === "mcprt", "serverInfo.name is mcprt");
const caps = client.getServerCapabilities();
check(caps?.tools?.listChanged === true, "tools.listChanged advertised");
check(caps?.resources?.subscribe === true && caps?.resources?.listChanged === true, "resources {subscribe, listChanged} advertised");
check(caps?.prompts?.listChanged === true, "prompts.listChanged advertised");
check(caps?.logging !== undefined, "logging advertised");
check((caps?.completions !== undefined) === atLeast("2025-03-26"), "completions advertised from 2025-03-26");
await client.ping();
check(true, "ping");

// listAll follows nextCursor through every page of a list method.
async function listAll(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await client[method](cursor ? { cursor } : undefined);
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

// Tools.
const tools = await listAll("listTools", "tools");
const names = tools.map((t) => t.name);
check(JSON.stringify(names) === JSON.stringify([...names].sort()), "tools/list sorted by name");
for (const n of ["server_ping", "health", "noop", "echo", "sleep", "agent_send_message", "admin_register_tool",
  "demo_touch", "demo_progress", "demo_log", "demo_sample", "demo_elicit", "demo_roots"]) {
  check(names.includes(n), "tools/list has " + n);
}
check(tools.some((t) => t.outputSchema) === atLeast("2025-06-18"), "outputSchema listed exactly from 2025-06-18");

// From 2025-06-18 the SDK validates structuredContent against each
// tool's outputSchema.
const ping = await client.callTool({ name: "server_ping", arguments: {} });
check(!ping.isError && structured(ping).mode === "TEST", "server_ping result");
const health = await client.callTool({ name: "health", arguments: {} });
check(!health.isError && ["healthy", "degraded", "unhealthy"].includes(structured(health).status), "health result");
const echo = await client.callTool({ name: "echo", arguments: { message: "hi" } });
check(!echo.isError && structured(echo).message === "hi", "echo round trip");

const failErr = toolError(await client.callTool({ name: "fail", arguments: { message: "boom" } }));
check(failErr?.code === "INTERNAL" && typeof failErr.retryable === "boolean" && failErr.runId && failErr.correlationId,
  "a failing tool is a tool error with a StructuredError");
const missing = toolError(await client.callTool({ name: "no_such_tool", arguments: {} }));
check(missing?.code === "NOT_FOUND", "unknown tool is NOT_FOUND");

const agent = await client.callTool({ name: "agent_send_message", arguments: { targetAgentId: "counter", message: { type: "inc" } } });
check(!agent.isError && structured(agent).count === 1, "agent_send_message reaches the counter agent");

const reg = await client.callTool({ name: "admin_register_tool", arguments: { name: "dyn_echo", description: "echo", toolType: "echo" } });
check(!reg.isError && structured(reg).registered === true, "admin_register_tool");
await waitFor(() => listChanged >= 1, "notifications/tools/list_changed received");
const dyn = await client.callTool({ name: "dyn_echo", arguments: { message: "x" } });
check(!dyn.isError && structured(dyn).message === "x", "the dynamic tool answers");

// Resources.
const resources = await listAll("listResources", "resources");
const uris = resources.map((r) => r.uri);
for (const u of ["demo://counter", "demo://static/logo", "demo://static/readme"]) {
  check(uris.includes(u), "resources/list has " + u);
}
check(JSON.stringify(uris) === JSON.stringify([...uris].sort()), "resources/list sorted by URI");
const readmeListed = resources.find((r) => r.uri === "demo://static/readme");
check((readmeListed.title === "Demo readme") === atLeast("2025-06-18"), "resource title listed exactly from 2025-06-18");
const templates = await listAll("listResourceTemplates", "resourceTemplates");
check(templates.some((t) => t.uriTemplate === "demo://notes/{name}"), "resources/templates/list has demo://notes/{name}");

const readme = await client.readResource({ uri: "demo://static/readme" });
check(readme.contents.length === 1 && readme.contents[0].mimeType === "text/markdown" &&
  readme.contents[0].text.startsWith("# mcprt demo"), "resources/read of a text resource");
const logo = await client.readResource({ uri: "demo://static/logo" });
check(Buffer.from(logo.contents[0].blob, "base64").subarray(1, 4).toString() === "PNG", "resources/read of a blob resource");
const note = await client.readResource({ uri: "demo://notes/beta" });
check(note.contents[0].uri === "demo://notes/beta" && note.contents[0].text === "The second note.", "resources/read through a template");
const noNote = await rejects(client.readResource({ uri: "demo://notes/delta" }));
check(noNote?.code === -32002 && noNote.data?.code === "NOT_FOUND" && noNote.data?.uri === "demo://notes/delta",
  "resources/read of a missing note is -32002 NOT_FOUND with data.uri");
const noRes = await rejects(client.readResource({ uri: "demo://nothing" }));
check(noRes?.code === -32002 && noRes.data?.correlationId, "resources/read of an unknown URI is -32002 with a correlationId");

await client.subscribeResource({ uri: "demo://counter" });
check(true, "resources/subscribe");
const touched = await client.callTool({ name: "demo_touch", arguments: {} });
check(!touched.isError && structured(touched).notified === 1, "demo_touch tells one subscriber");
await waitFor(() => updated.includes("demo://counter"), "notifications/resources/updated for demo://counter");
const counter = await client.readResource({ uri: "demo://counter" });
check(counter.contents[0].text === String(structured(touched).count), "the counter resource reads the new count");
await client.unsubscribeResource({ uri: "demo://counter" });
const untouched = await client.callTool({ name: "demo_touch", arguments: {} });
check(structured(untouched).notified === 0 && updated.length === 1, "no update after resources/unsubscribe");
const badSub = await rejects(client.subscribeResource({ uri: "demo://nothing" }));
check(badSub?.code === -32002, "resources/subscribe to an unknown URI is -32002");

// Prompts and completion.
const prompts = await listAll("listPrompts", "prompts");
const greetingListed = prompts.find((p) => p.name === "demo_greeting");
check(greetingListed && prompts.some((p) => p.name === "demo_review"), "prompts/list has demo_greeting and demo_review");
check(greetingListed.arguments.some((a) => a.name === "name" && a.required === true), "demo_greeting lists its required argument");
const greeting = await client.getPrompt({ name: "demo_greeting", arguments: { name: "Ada", style: "pirate" } });
check(greeting.messages.length === 2 && greeting.messages[1].role === "assistant" &&
  greeting.messages[1].content.text === "Ahoy, Ada!", "prompts/get renders demo_greeting");
const noName = await rejects(client.getPrompt({ name: "demo_greeting", arguments: {} }));
check(noName?.code === -32602 && /name/.test(noName.message), "prompts/get without a required argument is -32602");
const noPrompt = await rejects(client.getPrompt({ name: "demo_nothing" }));
check(noPrompt?.code === -32602, "prompts/get of an unknown prompt is -32602");
const review = await client.getPrompt({ name: "demo_review" });
const types = review.messages.map((m) => m.content.type);
const wantTypes = ["text", "image", "resource", atLeast("2025-06-18") ? "resource_link" : "text"];
check(JSON.stringify(types) === JSON.stringify(wantTypes), "demo_review content fitted to the revision: " + types);

const style = await client.complete({ ref: { type: "ref/prompt", name: "demo_greeting" }, argument: { name: "style", value: "f" } });
check(JSON.stringify(style.completion.values) === JSON.stringify(["formal"]), "completion/complete of a prompt argument");
const noteName = await client.complete({ ref: { type: "ref/resource", uri: "demo://notes/{name}" }, argument: { name: "name", value: "" } });
check(JSON.stringify(noteName.completion.values) === JSON.stringify(["alpha", "beta", "gamma"]), "completion/complete of a template variable");
const badRef = await rejects(client.complete({ ref: { type: "ref/prompt", name: "demo_nothing" }, argument: { name: "x", value: "" } }));
check(badRef?.code === -32602, "completion/complete of an unknown prompt is -32602");

// The coordination domains: every resource listed and read (templates
// through an instance), every prompt got, their ids completed from live
// data.
const stored = await client.callTool({ name: "memory_store", arguments: { namespace: "ts", key: "k1", value: { note: "from the TS client" } } });
check(!stored.isError, "memory_store");
const domainStatic = ["agents://available", "memory://entries", "policies://", "sessions://active", "traces://recent", "workflows://"];
for (const u of domainStatic) {
  check(uris.includes(u), "resources/list has " + u);
  const r = await client.readResource({ uri: u });
  check(r.contents.length === 1 && r.contents[0].mimeType === "application/json" && typeof JSON.parse(r.contents[0].text) === "object",
    "resources/read " + u + " is a JSON document");
}
const tmplNames = templates.map((t) => t.uriTemplate);
for (const t of ["agents://id/{agentId}", "memory://entries/{namespace}/{key}", "policies://id/{id}", "sessions://id/{id}",
  "traces://id/{traceId}", "workflows://id/{id}"]) {
  check(tmplNames.includes(t), "resources/templates/list has " + t);
}
for (const [u, has] of [["memory://entries/ts/k1", "from the TS client"], ["policies://id/default", "default"],
  ["workflows://id/check-change", "check-change"], ["agents://id/counter", "counter"]]) {
  const r = await client.readResource({ uri: u });
  check(r.contents[0].text.includes(has), "resources/read " + u + " through its template");
}
const noEntry = await rejects(client.readResource({ uri: "memory://entries/ts/nothing" }));
check(noEntry?.code === -32002, "resources/read of a missing memory entry is -32002");
const nsDone = await client.complete({ ref: { type: "ref/resource", uri: "memory://entries/{namespace}/{key}" }, argument: { name: "namespace", value: "t" } });
check(nsDone.completion.values.includes("ts"), "completion of a memory namespace from live data");
const wfDone = await client.complete({ ref: { type: "ref/prompt", name: "run_workflow" }, argument: { name: "workflowId", value: "check" } });
check(JSON.stringify(wfDone.completion.values) === JSON.stringify(["check-change"]), "completion of run_workflow's workflowId");
const agDone = await client.complete({ ref: { type: "ref/prompt", name: "run_agent" }, argument: { name: "agentId", value: "cou" } });
check(agDone.completion.values.includes("counter"), "completion of run_agent's agentId");
const promptNames = prompts.map((p) => p.name);
for (const [name, args] of [["search_memory", { query: "note" }], ["run_workflow", { workflowId: "check-change" }],
  ["list_agents", {}], ["run_agent", { agentId: "counter", task: "count" }]]) {
  check(promptNames.includes(name), "prompts/list has " + name);
  const got = await client.getPrompt({ name, arguments: args });
  check(got.messages.length >= 1 && got.messages[0].content.type === "text", "prompts/get " + name);
}

// Logging: demo_log logs at debug, below the default level, until
// logging/setLevel debug.
await client.callTool({ name: "demo_log", arguments: { message: "unheard" } });
check(logs.length === 0, "no debug message before logging/setLevel");
await client.setLoggingLevel("debug");
await client.callTool({ name: "demo_log", arguments: { message: "heard" } });
await waitFor(() => logs.length === 1, "notifications/message after logging/setLevel debug");
check(logs[0].level === "debug" && logs[0].logger === "demo_log" && logs[0].data.message === "heard", "the message's level, logger and data");
await client.setLoggingLevel("error");
await client.callTool({ name: "demo_log", arguments: { message: "unheard again" } });
check(logs.length === 1, "no debug message after logging/setLevel error");
const badLevel = await rejects(client.setLoggingLevel("verbose"));
check(badLevel?.code === -32602, "logging/setLevel of an unknown level is -32602");

// Progress: the SDK sets _meta.progressToken (the request's id) when
// onprogress is given. The SDK runs progress handlers a tick after the
// message arrives but retires them as soon as the response does, so
// reports read in the same chunk as the response never reach onprogress
// (typescript-sdk issue #2580): check the order on the wire instead.
const progress = [];
const wireFrom = wire.length;
const prog = await client.callTool({ name: "demo_progress", arguments: { steps: 3 } }, undefined,
  { onprogress: (p) => { progress.push(p); } });
check(!prog.isError && structured(prog).reported === 3, "demo_progress reports three steps");
const progWire = wire.slice(wireFrom);
const resultAt = progWire.findIndex((m) => m.result?.structuredContent?.reported === 3 || m.result?.content?.[0]?.text?.includes('"reported":3'));
const reports = progWire.slice(0, resultAt).filter((m) => m.method === "notifications/progress");
check(resultAt > 0 && JSON.stringify(reports.map((m) => [m.params.progress, m.params.total])) === "[[1,3],[2,3],[3,3]]" &&
  reports.every((m) => m.params.progressToken === progWire[resultAt].id) &&
  !progWire.slice(resultAt).some((m) => m.method === "notifications/progress"),
  "notifications/progress 1..3 of 3 with the request's token, all before the result");
check((reports[0].params.message === "step 1 of 3") === atLeast("2025-03-26"), "progress message sent exactly from 2025-03-26");
check(progress.every((p, i) => p.progress === i + 1 && p.total === 3), "onprogress got reports in order");
const noProg = await client.callTool({ name: "demo_progress", arguments: { steps: 2 } });
check(structured(noProg).reported === 0, "no progress without a progressToken");

// Requests to the client.
const sample = await client.callTool({ name: "demo_sample", arguments: { prompt: "hello" } });
check(!sample.isError && structured(sample).text === "echo: hello" && structured(sample).model === "demo-model",
  "demo_sample: the client answered sampling/createMessage");
check(sampled.length === 1 && sampled[0].maxTokens === 100 && sampled[0].systemPrompt === "You are the mcprt demo.",
  "sampling/createMessage params");

const elicit = await client.callTool({ name: "demo_elicit", arguments: { message: "Who are you?" } });
if (atLeast("2025-06-18")) {
  check(!elicit.isError && structured(elicit).action === "accept" && structured(elicit).content.name === "Ada",
    "demo_elicit: the client answered elicitation/create");
  check(elicited.length === 1 && elicited[0].message === "Who are you?" && elicited[0].requestedSchema.required[0] === "name",
    "elicitation/create params");
} else {
  check(toolError(elicit)?.code === "NOT_IMPLEMENTED" && elicited.length === 0, "no elicitation before 2025-06-18");
}

const roots1 = await client.callTool({ name: "demo_roots", arguments: {} });
check(!roots1.isError && structured(roots1).roots[0].uri === "file:///work/project" && rootsAsked === 1,
  "demo_roots: the client answered roots/list");
const rootsCached = await client.callTool({ name: "demo_roots", arguments: {} });
check(structured(rootsCached).roots.length === 1 && rootsAsked === 1, "roots cached while unchanged");
roots = [{ uri: "file:///work/other", name: "other" }, { uri: "file:///work/project" }];
await client.sendRootsListChanged();
const roots2 = await client.callTool({ name: "demo_roots", arguments: {} });
check(structured(roots2).roots.length === 2 && rootsAsked === 2, "roots asked again after notifications/roots/list_changed");

// A request the client gives up on is cancelled (notifications/cancelled):
// no stray response, and the server keeps serving.
const slow = await rejects(client.callTool({ name: "sleep", arguments: { ms: 5000 } }, undefined, { timeout: 100 }));
check(slow !== undefined, "client-side timeout of a slow call");
const after = await client.callTool({ name: "noop", arguments: {} });
check(!after.isError, "noop after a cancelled call");

await client.close();
check(true, "close");
