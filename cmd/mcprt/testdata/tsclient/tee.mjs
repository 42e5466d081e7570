// Runs the mcprt binary (SERVER_BIN) with this process's stdin and stdout,
// recording every byte the client sends to TEE_IN and every byte the
// server writes to TEE_OUT (its stderr goes to TEE_ERR), and, when it
// ends, its exit code (or the signal that ended it) to TEE_EXIT.
// client.mjs starts it in place of the binary, so that
// cmd/mcprt/tsclient_test.go can check every stdout line against the
// official schema.
import { spawn } from "node:child_process";
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";

const env = { ...process.env };
for (const k of ["SERVER_BIN", "TEE_IN", "TEE_OUT", "TEE_ERR", "TEE_EXIT"]) {
  delete env[k];
}
const inFd = openSync(process.env.TEE_IN, "w");
const outFd = openSync(process.env.TEE_OUT, "w");
const errFd = openSync(process.env.TEE_ERR, "w");
const child = spawn(process.env.SERVER_BIN, [], { stdio: ["pipe", "pipe", errFd], env });

process.stdin.on("data", (chunk) => {
  writeSync(inFd, chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.stdin.on("error", () => {}); // the server may be gone already
child.stdout.on("data", (chunk) => {
  writeSync(outFd, chunk);
  process.stdout.write(chunk);
});
child.on("close", (code, signal) => {
  closeSync(inFd);
  closeSync(outFd);
  writeFileSync(process.env.TEE_EXIT, signal ? "signal " + signal : String(code));
  process.exitCode = code ?? 1;
  process.stdin.destroy();
});
