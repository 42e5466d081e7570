// Drives an mcprt binary serving Streamable HTTP (its endpoint in
// MCPRT_URL) with the official MCP TypeScript SDK client and its
// StreamableHTTPClientTransport, and checks what a real client sees.
//
// TSHTTP_MODE=session runs one whole session: initialize (a session id),
// tools (structured results, tool errors), resources (list, read,
// templates, subscribe and notifications/resources/updated, unsubscribe),
// prompts, completion, logging, progress, the client answering sampling,
// elicitation and roots requests, a call the client abandons, and finally
// terminateSession (DELETE), after which the old session id gets 404.
// TSHTTP_MODE=auth checks the bearer token (MCPRT_TOKEN): 401 without it or
// with a wrong one, a working session with it.
//
// Every HTTP exchange goes through a recording fetch, which parses the
// event streams itself, so that checks can rest on what the server sent
// rather than on what the SDK passed on; each message either side sent is
// appended to TSHTTP_RECORD as a JSON line {session, from, via, status,
// msg}, for cmd/mcprt/tshttp_test.go to validate against the official
// schema.
// Exits non-zero, naming the check, on the first failure.
import { appendFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.env.MCPRT_URL);
const mode = process.env.TSHTTP_MODE;
const recordFile = process.env.TSHTTP_RECORD;

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL [${mode}]: ${what}`);
    process.exit(1);
  }
  console.log(`ok [${mode}]: ${what}`);
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

// rejects runs p and returns the error it fails with.
async function rejects(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return undefined;
}

// toolError returns the StructuredError of a tool error result.
function toolError(res) {
  return res.isError ? JSON.parse(res.content[0].text) : undefined;
}

function record(ex, from, via, msg) {
  appendFileSync(recordFile, JSON.stringify({ session: ex.session, from, via, status: ex.status, msg }) + "\n");
}

// exchanges holds one entry per HTTP request: its method, the session id
// and the message it sent, the response's status and content type, and,
// for an event stream, its events (each {id, event, retry, data, msg});
// done resolves once an event stream has been read to its end.
const exchanges = [];

// readEvents parses the event stream body into ex.events, recording each
// message; it resolves when the stream ends or breaks.
async function readEvents(body, ex) {
  const via = ex.method === "GET" ? "get" : "post-sse";
  let buf = "";
  const flush = (block) => {
    const ev = { data: "" };
    const data = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line === "" || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "id" || field === "event") ev[field] = value;
      else if (field === "retry") ev.retry = Number(value);
    }
    ev.data = data.join("\n");
    if (ev.data !== "") {
      ev.msg = JSON.parse(ev.data);
      record(ex, "server", via, ev.msg);
    }
    ex.events.push(ev);
    changed();
  };
  try {
    for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let m;
      while ((m = /\r\n\r\n|\n\n|\r\r/.exec(buf))) {
        flush(buf.slice(0, m.index));
        buf = buf.slice(m.index + m[0].length);
      }
    }
  } catch (e) {
    ex.broken = String(e);
  }
}

async function recordingFetch(input, init = {}) {
  const method = init.method ?? "GET";
  const ex = { method, sessionId: new Headers(init.headers).get("mcp-session-id"), events: [], done: Promise.resolve() };
  if (method === "POST") ex.request = JSON.parse(init.body);
  exchanges.push(ex);
  const res = await fetch(input, init);
  ex.status = res.status;
  ex.contentType = res.headers.get("content-type") ?? "";
  ex.session = ex.sessionId ?? res.headers.get("mcp-session-id");
  if (method === "POST") record(ex, "client", "post", ex.request);
  changed();
  if (!res.body || res.status === 202 || res.status === 204) return res;
  const init2 = { status: res.status, statusText: res.statusText, headers: res.headers };
  if (ex.contentType.startsWith("text/event-stream")) {
    const [mine, theirs] = res.body.tee();
    ex.done = readEvents(mine, ex);
    return new Response(theirs, init2);
  }
  const text = await res.text();
  try {
    record(ex, "server", res.ok ? "post-json" : "http-error", JSON.parse(text));
  } catch {
    record(ex, "server", "not-json", text); // the schema check reports it
  }
  return new Response(text, init2);
}

// rawPost sends one message with the given headers, outside the SDK.
async function rawPost(msg, headers) {
  const res = await recordingFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(msg),
  });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}

// newTransport returns an SDK transport to MCPRT_URL that fetches through
// recordingFetch; newClient a client that collects its transport's errors.
function newTransport(opts = {}) {
  return new StreamableHTTPClientTransport(url, { fetch: recordingFetch, ...opts });
}
function newClient(capabilities = {}) {
  const c = new Client({ name: "mcprt-tshttp-test", version: "1.0.0" }, { capabilities });
  c.errors = []; // what the transport reported through onerror
  c.onerror = (e) => c.errors.push(String(e));
  return c;
}

if (mode === "session") {
  await session();
} else if (mode === "auth") {
  await bearer();
} else {
  check(false, "TSHTTP_MODE is session or auth, not " + mode);
}
process.exit(0); // the SDK may keep a reconnection timer; the checks are done

async function session() {
  const transport = newTransport();
  const client = newClient({ sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
  const updated = [];
  const logs = [];
  let rootsAsked = 0;
  let roots = [{ uri: "file:///work/project", name: "project" }];
  const sampled = [];
  const elicited = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); changed(); });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); changed(); });
  client.setRequestHandler(ListRootsRequestSchema, () => { rootsAsked++; return { roots }; });
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    sampled.push(req.params);
    return { role: "assistant", content: { type: "text", text: "echo: " + req.params.messages[0].content.text },
      model: "demo-model", stopReason: "endTurn" };
  });
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    elicited.push(req.params);
    return { action: "accept", content: { name: "Ada" } };
  });

  // Lifecycle: initialize opens a session, whose id the SDK then sends
  // with every request, and the GET stream opens after initialized.
  await client.connect(transport);
  const sid = transport.sessionId;
  check(/^[\x21-\x7e]+$/.test(sid ?? ""), "initialize answered with an Mcp-Session-Id of visible ASCII: " + sid);
  check(transport.protocolVersion === LATEST_PROTOCOL_VERSION, "negotiated the SDK's latest revision " + LATEST_PROTOCOL_VERSION);
  const init = exchanges[0];
  check(init.method === "POST" && init.request.method === "initialize" && init.sessionId === null && init.status === 200,
    "initialize was a POST without a session id, answered 200");
  check(client.getServerVersion()?.name === "mcprt", "serverInfo.name is mcprt");
  const caps = client.getServerCapabilities();
  check(caps?.tools && caps?.resources?.subscribe === true && caps?.prompts && caps?.logging && caps?.completions,
    "tools, resources.subscribe, prompts, logging and completions advertised");
  await waitFor(() => exchanges.some((e) => e.method === "GET" && e.status === 200 && e.sessionId === sid),
    "the SDK opened the GET event stream of the session");
  const get = exchanges.find((e) => e.method === "GET");
  check(get.contentType.startsWith("text/event-stream"), "the GET stream is text/event-stream");
  let getEnded = false;
  get.done.then(() => { getEnded = true; changed(); });
  await waitFor(() => get.events.length > 0, "the GET stream begins with an event");
  check(get.events[0].id && get.events[0].data === "" && get.events[0].retry > 0,
    "the GET stream begins with a priming event (id, retry, no data)");
  await client.ping();
  check(true, "ping");

  // Tools: the SDK checks structuredContent against each outputSchema.
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const names = tools.map((t) => t.name);
  for (const n of ["server_ping", "echo", "fail", "sleep", "noop", "demo_touch", "demo_progress", "demo_log",
    "demo_sample", "demo_elicit", "demo_roots"]) {
    check(names.includes(n), "tools/list has " + n);
  }
  check(tools.find((t) => t.name === "echo")?.outputSchema, "echo lists an outputSchema");
  const sent = exchanges.filter((e) => e.method === "POST" && e.request?.method === "tools/list");
  check(sent.every((e) => e.sessionId === sid && e.status === 200 && e.contentType.startsWith("application/json")),
    "tools/list sent with the session id and answered with one JSON body");
  const ping = await client.callTool({ name: "server_ping", arguments: {} });
  check(!ping.isError && ping.structuredContent?.mode === "TEST", "server_ping's structuredContent");
  const echo = await client.callTool({ name: "echo", arguments: { message: "hi over HTTP" } });
  check(!echo.isError && echo.structuredContent?.message === "hi over HTTP" &&
    JSON.parse(echo.content[0].text).message === "hi over HTTP", "echo: structuredContent and its text block agree");
  const failErr = toolError(await client.callTool({ name: "fail", arguments: { message: "boom" } }));
  check(failErr?.code === "INTERNAL" && typeof failErr.retryable === "boolean" && failErr.correlationId,
    "a failing tool is a tool error (isError) with a StructuredError");
  const missing = toolError(await client.callTool({ name: "no_such_tool", arguments: {} }));
  check(missing?.code === "NOT_FOUND", "an unknown tool is a NOT_FOUND tool error");
  const badSteps = toolError(await client.callTool({ name: "demo_progress", arguments: { steps: 0 } }));
  check(badSteps?.code === "INVALID_ARGUMENT" && badSteps.details?.errors?.[0]?.path === "/steps",
    "arguments against the inputSchema are an INVALID_ARGUMENT tool error naming /steps");

  // Resources.
  const resources = (await client.listResources()).resources.map((r) => r.uri);
  for (const u of ["demo://counter", "demo://static/logo", "demo://static/readme"]) {
    check(resources.includes(u), "resources/list has " + u);
  }
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  check(templates.some((t) => t.uriTemplate === "demo://notes/{name}"), "resources/templates/list has demo://notes/{name}");
  const readme = await client.readResource({ uri: "demo://static/readme" });
  check(readme.contents[0].mimeType === "text/markdown" && readme.contents[0].text.startsWith("# mcprt demo"),
    "resources/read of a text resource");
  const logo = await client.readResource({ uri: "demo://static/logo" });
  check(Buffer.from(logo.contents[0].blob, "base64").subarray(1, 4).toString() === "PNG", "resources/read of a blob resource");
  const note = await client.readResource({ uri: "demo://notes/beta" });
  check(note.contents[0].uri === "demo://notes/beta" && note.contents[0].text === "The second note.",
    "resources/read through a template");
  const noNote = await rejects(client.readResource({ uri: "demo://notes/delta" }));
  check(noNote?.code === -32002 && noNote.data?.code === "NOT_FOUND", "resources/read of a missing note is -32002 NOT_FOUND");

  // A second session subscribes too: having no request in progress, it
  // can hear of the update on its GET stream only.
  const otherTransport = newTransport();
  const other = newClient();
  const otherUpdated = [];
  other.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { otherUpdated.push(n.params.uri); changed(); });
  await other.connect(otherTransport);
  const otherSid = otherTransport.sessionId;
  check(otherSid && otherSid !== sid, "a second session has an id of its own");
  await other.subscribeResource({ uri: "demo://counter" });
  await client.subscribeResource({ uri: "demo://counter" });
  check(true, "resources/subscribe");
  const badSub = await rejects(client.subscribeResource({ uri: "demo://nothing" }));
  check(badSub?.code === -32002, "resources/subscribe to an unknown URI is -32002");
  const touched = await client.callTool({ name: "demo_touch", arguments: {} });
  check(!touched.isError && touched.structuredContent.notified === 2, "demo_touch tells both subscribed sessions");
  await waitFor(() => updated.includes("demo://counter"), "notifications/resources/updated for demo://counter");
  const where = get.events.some((e) => e.msg?.method === "notifications/resources/updated") ? "its GET stream" : "demo_touch's POST stream";
  check(true, "the calling session's update came on " + where);
  await waitFor(() => otherUpdated.includes("demo://counter"), "the second session's notifications/resources/updated");
  const otherGet = exchanges.find((e) => e.method === "GET" && e.sessionId === otherSid);
  check(otherGet?.events.some((e) => e.msg?.method === "notifications/resources/updated" && e.msg.params.uri === "demo://counter"),
    "the second session's update came on its GET stream");
  await otherTransport.terminateSession();
  await other.close();
  check(other.errors.length === 0, "no transport errors in the second session: " + JSON.stringify(other.errors));
  const counter = await client.readResource({ uri: "demo://counter" });
  check(counter.contents[0].text === String(touched.structuredContent.count), "the counter resource reads the new count");
  await client.unsubscribeResource({ uri: "demo://counter" });
  const untouched = await client.callTool({ name: "demo_touch", arguments: {} });
  check(untouched.structuredContent.notified === 0 && updated.length === 1, "no update after resources/unsubscribe");

  // Prompts and completion.
  const prompts = (await client.listPrompts()).prompts;
  check(prompts.some((p) => p.name === "demo_greeting") && prompts.some((p) => p.name === "demo_review"),
    "prompts/list has demo_greeting and demo_review");
  const greeting = await client.getPrompt({ name: "demo_greeting", arguments: { name: "Ada", style: "pirate" } });
  check(greeting.messages[1]?.content.text === "Ahoy, Ada!", "prompts/get renders demo_greeting");
  const review = await client.getPrompt({ name: "demo_review" });
  check(JSON.stringify(review.messages.map((m) => m.content.type)) === '["text","image","resource","resource_link"]',
    "prompts/get renders demo_review's four content types");
  const noPrompt = await rejects(client.getPrompt({ name: "demo_nothing" }));
  check(noPrompt?.code === -32602, "prompts/get of an unknown prompt is -32602");
  const style = await client.complete({ ref: { type: "ref/prompt", name: "demo_greeting" }, argument: { name: "style", value: "f" } });
  check(JSON.stringify(style.completion.values) === '["formal"]', "completion/complete of a prompt argument");
  const noteName = await client.complete({ ref: { type: "ref/resource", uri: "demo://notes/{name}" }, argument: { name: "name", value: "" } });
  check(JSON.stringify(noteName.completion.values) === '["alpha","beta","gamma"]', "completion/complete of a template variable");
  const badRef = await rejects(client.complete({ ref: { type: "ref/prompt", name: "demo_nothing" }, argument: { name: "x", value: "" } }));
  check(badRef?.code === -32602, "completion/complete of an unknown prompt is -32602");

  // Logging: demo_log logs at debug, below the default level, until
  // logging/setLevel debug; the message then travels on the call's own
  // event stream, before its response.
  await client.callTool({ name: "demo_log", arguments: { message: "unheard" } });
  check(logs.length === 0, "no debug message before logging/setLevel");
  await client.setLoggingLevel("debug");
  const heard = await client.callTool({ name: "demo_log", arguments: { message: "heard" } });
  check(!heard.isError, "demo_log after logging/setLevel debug");
  await waitFor(() => logs.length === 1, "notifications/message after logging/setLevel debug");
  check(logs[0].level === "debug" && logs[0].logger === "demo_log" && logs[0].data.message === "heard",
    "the message's level, logger and data");
  await client.setLoggingLevel("error");
  await client.callTool({ name: "demo_log", arguments: { message: "unheard again" } });
  check(logs.length === 1, "no debug message after logging/setLevel error");
  const badLevel = await rejects(client.setLoggingLevel("verbose"));
  check(badLevel?.code === -32602, "logging/setLevel of an unknown level is -32602");

  // Progress. The SDK runs progress handlers a tick after a message
  // arrives but retires them as soon as the response arrives, so reports
  // read in the same chunk as the response may never reach onprogress
  // (typescript-sdk issue #2580). What the server sent is checked on the
  // call's own event stream, as the recording fetch parsed it; onprogress
  // must have seen an in-order prefix-free subsequence of it.
  const progress = [];
  const prog = await client.callTool({ name: "demo_progress", arguments: { steps: 3 } }, undefined,
    { onprogress: (p) => { progress.push(p); } });
  check(!prog.isError && prog.structuredContent.reported === 3, "demo_progress reports three steps");
  const progEx = exchanges.find((e) => e.request?.method === "tools/call" && e.request.params.name === "demo_progress" &&
    e.request.params._meta?.progressToken !== undefined);
  await progEx.done;
  const token = progEx.request.params._meta.progressToken;
  const msgs = progEx.events.filter((e) => e.msg).map((e) => e.msg);
  check(progEx.contentType.startsWith("text/event-stream") && !progEx.broken, "demo_progress answered with an event stream");
  check(progEx.events[0].id && progEx.events[0].data === "", "the POST stream begins with a priming event");
  check(JSON.stringify(msgs.map((m) => m.method ? [m.method, m.params.progressToken === token, m.params.progress, m.params.total] : ["result", m.id === progEx.request.id])) ===
    JSON.stringify([["notifications/progress", true, 1, 3], ["notifications/progress", true, 2, 3], ["notifications/progress", true, 3, 3], ["result", true]]),
    "the stream carried progress 1, 2, 3 of 3 with the call's token, then the response, and nothing else");
  check(msgs[0].params.message === "step 1 of 3", "the progress message");
  check(progress.every((p, i) => p.total === 3 && (i === 0 || p.progress > progress[i - 1].progress) && p.progress >= 1 && p.progress <= 3),
    `onprogress saw ${progress.length} of the 3 reports, in order`);
  const noProg = await client.callTool({ name: "demo_progress", arguments: { steps: 2 } });
  check(noProg.structuredContent.reported === 0, "no progress without a progressToken");
  const noProgEx = exchanges.findLast((e) => e.request?.method === "tools/call" && e.request.params.name === "demo_progress");
  check(noProgEx.contentType.startsWith("application/json"), "a call that sends nothing first is answered with one JSON body");

  // Requests to the client: each travels on the call's event stream and
  // the SDK answers it with a POST of its own.
  const sample = await client.callTool({ name: "demo_sample", arguments: { prompt: "hello" } });
  check(!sample.isError && sample.structuredContent.text === "echo: hello" && sample.structuredContent.model === "demo-model",
    "demo_sample: the client answered sampling/createMessage");
  check(sampled.length === 1 && sampled[0].maxTokens === 100 && sampled[0].systemPrompt === "You are the mcprt demo.",
    "sampling/createMessage params");
  const sampleEx = exchanges.findLast((e) => e.request?.params?.name === "demo_sample");
  await sampleEx.done;
  const sampleReq = sampleEx.events.find((e) => e.msg?.method === "sampling/createMessage")?.msg;
  check(sampleReq !== undefined, "sampling/createMessage came on demo_sample's own stream");
  const answer = exchanges.find((e) => e.request && e.request.id === sampleReq.id && e.request.result);
  check(answer?.sessionId === sid, "the client answered with a POST of the session");
  await waitFor(() => answer.status !== undefined, "the server answered the client's answer");
  check(answer.status === 202, "the client's answer got 202: " + answer.status);

  const elicit = await client.callTool({ name: "demo_elicit", arguments: { message: "Who are you?" } });
  check(!elicit.isError && elicit.structuredContent.action === "accept" && elicit.structuredContent.content.name === "Ada",
    "demo_elicit: the client answered elicitation/create");
  check(elicited.length === 1 && elicited[0].message === "Who are you?" && elicited[0].requestedSchema.required[0] === "name",
    "elicitation/create params");

  const roots1 = await client.callTool({ name: "demo_roots", arguments: {} });
  check(!roots1.isError && roots1.structuredContent.roots[0].uri === "file:///work/project" && rootsAsked === 1,
    "demo_roots: the client answered roots/list");
  roots = [{ uri: "file:///work/other", name: "other" }, { uri: "file:///work/project" }];
  await client.sendRootsListChanged();
  const roots2 = await client.callTool({ name: "demo_roots", arguments: {} });
  check(roots2.structuredContent.roots.length === 2 && rootsAsked === 2, "roots asked again after notifications/roots/list_changed");

  // A call the client gives up on is cancelled (notifications/cancelled)
  // and its POST ends; the session serves on.
  const slow = await rejects(client.callTool({ name: "sleep", arguments: { ms: 5000 } }, undefined, { timeout: 200 }));
  check(slow !== undefined, "client-side timeout of a slow call");
  const after = await client.callTool({ name: "noop", arguments: {} });
  check(!after.isError, "noop after a cancelled call");
  const slowEx = exchanges.find((e) => e.request?.params?.name === "sleep");
  check(slowEx !== undefined, "the slow call was POSTed");
  await waitFor(() => slowEx.status !== undefined, "the cancelled call's POST was answered");
  check(slowEx.status === 204, "the cancelled call's POST ended 204: " + slowEx.status);

  // The transport reported no error during the session, except the SDK's
  // own complaint about the 204 (it expects a body for every request).
  const unexpected = client.errors.filter((e) => !/Unexpected content type: null/.test(e));
  check(unexpected.length === 0, "no transport errors: " + JSON.stringify(client.errors));

  // Termination: DELETE ends the session; its id is then unknown.
  await transport.terminateSession();
  const del = exchanges.findLast((e) => e.method === "DELETE");
  check(del?.status === 204 && del.sessionId === sid, "terminateSession sent DELETE with the session id, answered 204");
  check(transport.sessionId === undefined, "the SDK forgot the session id");
  await waitFor(() => getEnded, "the GET stream ended with the session");
  const stale = await rawPost({ jsonrpc: "2.0", id: 1, method: "ping" },
    { "mcp-session-id": sid, "mcp-protocol-version": LATEST_PROTOCOL_VERSION });
  check(stale.status === 404 && stale.body?.error?.data?.code === "NOT_FOUND" && stale.body.error.data.httpStatus === 404,
    "a request with the ended session's id gets 404 NOT_FOUND: " + JSON.stringify(stale.body));
  // The SDK, told to resume the ended session, sees the same 404.
  const resumed = newClient();
  await resumed.connect(newTransport({ sessionId: sid }));
  const gone = await rejects(resumed.ping());
  check(gone instanceof StreamableHTTPError && gone.code === 404, "the SDK resuming the ended session gets 404: " + gone);
  await resumed.close();
  await client.close();
  check(true, "close");
}

async function bearer() {
  const token = process.env.MCPRT_TOKEN;
  check(token?.length > 0, "MCPRT_TOKEN is set");

  // Without the header, and with a wrong token: 401 with a Bearer challenge.
  const anon = newClient();
  const refused = await rejects(anon.connect(newTransport()));
  check(refused instanceof StreamableHTTPError && refused.code === 401, "initialize without a token gets 401: " + refused);
  const initMsg = { jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
  const bare = await rawPost(initMsg, {});
  check(bare.status === 401 && /^Bearer\b/.test(bare.headers.get("www-authenticate") ?? "") &&
    bare.body?.error?.data?.code === "UNAUTHORIZED" && bare.headers.get("mcp-session-id") === null,
  "401 carries WWW-Authenticate: Bearer, an UNAUTHORIZED body and no session id");
  const wrong = newClient();
  const refusedWrong = await rejects(wrong.connect(newTransport({ requestInit: { headers: { Authorization: "Bearer not-" + token } } })));
  check(refusedWrong instanceof StreamableHTTPError && refusedWrong.code === 401, "a wrong token gets 401: " + refusedWrong);

  // With the header on every request (POST, GET and DELETE alike).
  const headers = { Authorization: "Bearer " + token };
  const transport = newTransport({ requestInit: { headers } });
  const client = newClient();
  await client.connect(transport);
  const sid = transport.sessionId;
  check(sid !== undefined, "initialize with the token opened a session");
  await waitFor(() => exchanges.some((e) => e.method === "GET" && e.sessionId === sid && e.status === 200),
    "the GET stream opened with the token");
  const tools = await client.listTools();
  check(tools.tools.some((t) => t.name === "echo"), "tools/list with the token");
  const echo = await client.callTool({ name: "echo", arguments: { message: "authorized" } });
  check(echo.structuredContent?.message === "authorized", "tools/call with the token");

  // The token is checked on every request, not only at initialize.
  const ping = { jsonrpc: "2.0", id: 99, method: "ping" };
  const sessionHeaders = { "mcp-session-id": sid, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
  const noToken = await rawPost(ping, sessionHeaders);
  check(noToken.status === 401, "a request of the session without the token gets 401");
  const withToken = await rawPost(ping, { ...sessionHeaders, ...headers });
  check(withToken.status === 200 && withToken.body?.id === 99 && withToken.body.result !== undefined,
    "the same request with the token is answered");
  check(client.errors.length === 0, "no transport errors with the token: " + JSON.stringify(client.errors));

  await transport.terminateSession();
  check(exchanges.findLast((e) => e.method === "DELETE")?.status === 204, "terminateSession with the token: 204");
  const stale = await rawPost(ping, { ...sessionHeaders, ...headers });
  check(stale.status === 404, "the ended session's id gets 404 with the token");
  await client.close();
  check(true, "close");
}
