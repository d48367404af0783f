#!/usr/bin/env bash
# The modern MCP front door's targets, measured (nothing here is asserted), run
# from the crate root:
#   bash benches/mcp_modern.sh [base-commit]
# 1. examples/mcp_modern.rs: a batch of 20 pages on 20 loopback origins (200 ms
#    each), a batch of 10 pages on one origin at per_origin_in_flight = 2, and 50
#    cancels timed from notifications/cancelled to the origin's connection closed.
# 2. tools/call latency with structured output beside the same call without it:
#    a release build of base-commit (default: the last commit before structured
#    output) in a temporary worktree, alternated with this build, five rounds of
#    examples/mcp_latency each (medians of cache misses and hits). BASE_BIN, when
#    set, is that build's binary, already built.
# 3. The MCP Inspector's CLI (npm @modelcontextprotocol/inspector) lists the tools
#    and calls web_fetch_batch, as a third client.
set -euo pipefail
export RUST_LOG=${RUST_LOG:-error}
cd "$(dirname "$0")/.."
base=${1:-6b85bef}
work=$(mktemp -d)
trap 'kill $site 2>/dev/null || true; git worktree remove --force "$work/base" 2>/dev/null || true; rm -rf "$work"' EXIT

cargo build --release --quiet --bin webfetch --example mcp_modern --example mcp_latency
bin=target/release/webfetch
echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== targets"
target/release/examples/mcp_modern "$bin"

echo "== tools/call latency: $base (no structured output) vs this build"
base_bin=${BASE_BIN:-}
if [ -z "$base_bin" ]; then
  git worktree add --quiet --detach "$work/base" "$base"
  (cd "$work/base" && CARGO_TARGET_DIR="$work/base-target" cargo build --release --quiet --bin webfetch)
  base_bin="$work/base-target/release/webfetch"
fi
mkdir -p "$work/site"
python3 -c "print('<html><body><article>' + ''.join('<h2>Part %d</h2><p>%s</p>' % (i, 'word ' * 120) for i in range(40)) + '</article></body></html>')" > "$work/site/page.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
site=$!
url="http://127.0.0.1:$port/page.html"
until curl -sf -o /dev/null "$url"; do :; done
cat > "$work/config.toml" <<TOML
[tools.webfetch]
cache_dir = "$work/cache"
[tools.webfetch.security]
allow_insecure_overrides = true
block_loopback = false
allowed_ports = [$port]
TOML
for round in 1 2 3 4 5; do
  echo "-- round $round: base"
  target/release/examples/mcp_latency "$base_bin" "$work/config.toml" "$url" 100
  echo "-- round $round: this build"
  target/release/examples/mcp_latency "$bin" "$work/config.toml" "$url" 100
done

echo "== MCP Inspector CLI"
# The server's command line follows `--`: the Inspector has a `--config` of its own.
inspector=(npx --yes @modelcontextprotocol/inspector --cli)
server=(-- "$PWD/$bin" mcp --config "$work/config.toml")
"${inspector[@]}" --method tools/list "${server[@]}" | python3 -c 'import json,sys; print("tools:", [t["name"] for t in json.load(sys.stdin)["tools"]])'
"${inspector[@]}" --method tools/call --tool-name web_fetch_batch --tool-arg "urls=[\"$url\"]" "${server[@]}" \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); print("batch via the Inspector:", [i["response"]["final_url"] for i in r["structuredContent"]["results"]])'
