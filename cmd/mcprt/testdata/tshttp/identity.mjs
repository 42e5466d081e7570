// Two MCP sessions of one `mcprt --http` (its endpoint in MCPRT_URL),
// each driven by the official TypeScript SDK client, each with its own
// messaging identity: session A registers http_a; session B is refused
// http_a (another live session holds it, and the error names it), then
// registers http_b; A's message reaches B as from http_a, and one to
// stdio_1 (a stdio session of the Go test) leaves as from http_a too.
// When B's session ends, http_b shows offline. Exits non-zero, naming the
// check, on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MCPRT_URL);

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL [identity]: ${what}`);
    process.exit(1);
  }
  console.log(`ok [identity]: ${what}`);
}

async function connect(name) {
  const c = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  const t = new StreamableHTTPClientTransport(url);
  await c.connect(t);
  return { c, t };
}

// call returns [value, error]: the result's JSON text, as the success or
// as the tool error.
async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args });
  const v = JSON.parse(r.content[0].text);
  return r.isError ? [null, v] : [v, null];
}

const a = await connect("identity-a");
const b = await connect("identity-b");
check(a.t.sessionId && b.t.sessionId && a.t.sessionId !== b.t.sessionId, "two HTTP sessions");

let [v, e] = await call(a.c, "aacp_register_agent", { agentId: "http_a", type: "Manager" });
check(v && v.agentId === "http_a", "A registers http_a: " + JSON.stringify(e));
[v, e] = await call(b.c, "aacp_register_agent", { agentId: "http_a", type: "Implementation" });
check(e && e.code === "E_ROUTING_003" && e.message.includes("held by another live session") && e.message.includes("identity-a"),
  "B is refused http_a, naming the holder: " + JSON.stringify(e));
[v, e] = await call(b.c, "aacp_register_agent", { agentId: "http_b", type: "Implementation" });
check(v && v.agentId === "http_b", "B registers http_b: " + JSON.stringify(e));
[v, e] = await call(b.c, "aacp_send", { receiver: { agentId: "http_a" }, messageType: "CUSTOM_PING", payload: { n: 1 } });
check(v && v.deliveries[0].agentId === "http_a", "B sends to http_a without naming itself: " + JSON.stringify(e));

[v, e] = await call(a.c, "aacp_send", { receiver: { agentId: "http_b" }, messageType: "CUSTOM_HELLO", payload: { from: "A" } });
check(v && v.deliveries.length === 1, "A sends to http_b: " + JSON.stringify(e));
[v, e] = await call(b.c, "aacp_receive", { waitMs: 5000 });
check(v && v.messages.length === 1 && v.messages[0].sender.agentId === "http_a" && v.messages[0].receiver.agentId === "http_b",
  "B receives A's message as http_b, from http_a: " + JSON.stringify(v ?? e));
[v, e] = await call(a.c, "aacp_receive", { waitMs: 5000 });
check(v && v.messages.length === 1 && v.messages[0].sender.agentId === "http_b", "A receives B's message as http_a: " + JSON.stringify(v ?? e));
[v, e] = await call(a.c, "aacp_send", { receiver: { agentId: "stdio_1" }, messageType: "CUSTOM_HELLO", payload: { from: "A" } });
check(v && v.deliveries.length === 1, "A sends to the stdio session's agent: " + JSON.stringify(e));

[v, e] = await call(a.c, "aacp_agents", {});
const seen = Object.fromEntries((v?.agents ?? []).map((x) => [x.agentId, x.presence]));
check(seen.http_a === "online" && seen.http_b === "online" && seen.stdio_1 === "online" && seen.stdio_2 === "online",
  "every identity is registered and online: " + JSON.stringify(seen));
check(!Object.keys(seen).some((id) => id.startsWith("mcprt-")), "no made-up default id in the registry: " + JSON.stringify(seen));

await b.t.terminateSession();
await b.c.close();
let offline = false;
for (let i = 0; i < 100 && !offline; i++) {
  [v, e] = await call(a.c, "aacp_agents", { agentId: "http_b" });
  offline = v?.agents?.[0]?.presence === "offline";
  if (!offline) await new Promise((r) => setTimeout(r, 50));
}
check(offline, "http_b shows offline once its session ended: " + JSON.stringify(v ?? e));
await a.c.close();
