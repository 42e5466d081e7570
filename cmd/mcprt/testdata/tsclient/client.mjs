// Drives the mcprt binary (path in MCPRT_BIN) with the official MCP
// TypeScript SDK client over stdio and checks what a real client sees.
// Exits non-zero, naming the check, on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function check(cond, what) {
  if (!cond) {
    console.error("FAIL: " + what);
    process.exit(1);
  }
  console.log("ok: " + what);
}

const transport = new StdioClientTransport({
  command: process.env.MCPRT_BIN,
  env: {
    MCPRT_SERVER_MODE: "TEST",
    MCPRT_TOOLS_ADMIN_REGISTRATION_ENABLED: "true",
    MCPRT_SECURITY_DYNAMIC_REGISTRATION_ENABLED: "true",
    MCPRT_TOOLS_ADMIN_POLICY_MODE: "local_stdio_only",
  },
  stderr: "ignore",
});
const client = new Client({ name: "mcprt-ts-test", version: "1.0.0" });
let listChanged = 0;
client.setNotificationHandler(
  (await import("@modelcontextprotocol/sdk/types.js")).ToolListChangedNotificationSchema,
  () => { listChanged++; },
);
await client.connect(transport);

check(client.getServerVersion()?.name === "mcprt", "serverInfo.name is mcprt");
check(client.getServerCapabilities()?.tools?.listChanged === true, "tools.listChanged advertised");
await client.ping();
check(true, "ping");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check(JSON.stringify(names) === JSON.stringify([...names].sort()), "tools/list sorted by name");
for (const n of ["server_ping", "health", "noop", "echo", "sleep", "agent_send_message", "admin_register_tool"]) {
  check(names.includes(n), "tools/list has " + n);
}

// The SDK validates structuredContent against each tool's outputSchema.
const ping = await client.callTool({ name: "server_ping", arguments: {} });
check(!ping.isError && ping.structuredContent.mode === "TEST", "server_ping result");
const health = await client.callTool({ name: "health", arguments: {} });
check(!health.isError && ["healthy", "degraded", "unhealthy"].includes(health.structuredContent.status), "health result");
const echo = await client.callTool({ name: "echo", arguments: { message: "hi" } });
check(!echo.isError && echo.structuredContent.message === "hi", "echo round trip");

const fail = await client.callTool({ name: "fail", arguments: { message: "boom" } });
const failErr = JSON.parse(fail.content[0].text);
check(fail.isError && failErr.code === "INTERNAL" && failErr.retryable === true && failErr.runId && failErr.correlationId,
  "a failing tool is a tool error with a StructuredError");
const missing = await client.callTool({ name: "no_such_tool", arguments: {} });
check(missing.isError && JSON.parse(missing.content[0].text).code === "NOT_FOUND", "unknown tool is NOT_FOUND");

const agent = await client.callTool({ name: "agent_send_message", arguments: { targetAgentId: "counter", message: { type: "inc" } } });
check(!agent.isError && agent.structuredContent.count === 1, "agent_send_message reaches the counter agent");

const reg = await client.callTool({ name: "admin_register_tool", arguments: { name: "dyn_echo", description: "echo", toolType: "echo" } });
check(!reg.isError && reg.structuredContent.registered === true, "admin_register_tool");
const dyn = await client.callTool({ name: "dyn_echo", arguments: { message: "x" } });
check(!dyn.isError && dyn.structuredContent.message === "x", "the dynamic tool answers");
await new Promise((r) => setTimeout(r, 100));
check(listChanged >= 1, "notifications/tools/list_changed received");

// A request the client gives up on is cancelled (notifications/cancelled):
// no stray response, and the server keeps serving.
let timedOut = false;
try {
  await client.callTool({ name: "sleep", arguments: { ms: 5000 } }, undefined, { timeout: 100 });
} catch (e) {
  timedOut = true;
}
check(timedOut, "client-side timeout of a slow call");
const after = await client.callTool({ name: "noop", arguments: {} });
check(!after.isError, "noop after a cancelled call");

await client.close();
check(true, "close");
