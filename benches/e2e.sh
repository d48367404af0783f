#!/usr/bin/env bash
# End-to-end latency and memory on loopback for a ~100 KiB corpus article, side by
# side in one run: curl beside the webfetch CLI (a process per call: cache off and
# cache hit, each with its ratio to curl) and the MCP server (one process, per-call
# latency), first with an empty cache, then with a cache pre-filled to 10,000
# entries. Prints medians (p50) and peak RSS; nothing here is asserted. Run from
# the crate root:
#   bash benches/e2e.sh [calls]
# WEBFETCH_E2E_BIN=path runs another webfetch binary (e.g. an older build to
# compare) instead of building this one; the MCP rows then need the example built.
# The peer MCP server, the reference mcp-server-fetch (Python), runs beside the MCP
# rows when it is on PATH or WEBFETCH_E2E_PEER names it
# (`pip install mcp-server-fetch`; its first call, untimed, installs Readability.js).
set -euo pipefail
export RUST_LOG=${RUST_LOG:-error} # the loopback config warns on every call
cd "$(dirname "$0")/.."
calls=${1:-30}
prefill=${WEBFETCH_E2E_PREFILL:-10000}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

if [ -z "${WEBFETCH_E2E_BIN:-}" ]; then
  cargo build --release --quiet --bin webfetch --example mcp_latency
fi
bin=${WEBFETCH_E2E_BIN:-target/release/webfetch}
latency=target/release/examples/mcp_latency

# A real ~100 KiB article from the corpus (or a synthetic page without it).
corpus=${WEBFETCH_CORPUS_DIR:-../shared/corpus/article-extraction}/html
page=$(ls -S "$corpus"/*.html.gz 2>/dev/null | while read -r f; do
  size=$(gzip -dc "$f" | wc -c); [ "$size" -ge 90000 ] && [ "$size" -le 130000 ] && { echo "$f"; break; }; done || true)
mkdir -p "$work/site"
if [ -n "$page" ]; then gzip -dc "$page" > "$work/site/page.html"; else
  python3 -c "print('<html><body><article>' + '<p>' + 'word ' * 200 + '</p>' * 100 + '</article></body></html>')" > "$work/site/page.html"; fi
printf 'User-agent: *\nAllow: /\n' > "$work/site/robots.txt"
printf 'hello world\n' > "$work/site/small.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
server=$!
url="http://127.0.0.1:$port/page.html"
until curl -sf -o /dev/null "$url"; do :; done
config() { # config FILE CACHE_DIR
  cat > "$1" <<TOML
[tools.webfetch]
cache_dir = "$2"
[tools.webfetch.security]
allow_insecure_overrides = true
block_loopback = false
allowed_ports = [$port]
TOML
}
echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "page: $(wc -c < "$work/site/page.html") bytes ($(basename "${page:-synthetic}")), $calls calls each, binary $bin"

# Wall time of one process in ms, without forking a timer (bash's EPOCHREALTIME).
time_ms() { local s e; s=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || true; e=$EPOCHREALTIME
  echo "$s $e" | awk '{printf "%.3f\n", ($2-$1)*1000}'; }
# CPU time (task-clock: user + system, the process and its children) of one
# process in ms, with perf when there is one: steadier than wall time on a busy
# machine, where wall time is mostly waiting for a core.
cpu_ms() { perf stat -x, -e task-clock -o "$work/perf" -- "$@" >/dev/null 2>&1 || true
  grep task-clock "$work/perf" | cut -d, -f1; }
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
series() { for _ in $(seq "$calls"); do time_ms "$@"; done | median; }
cpu_series() { if command -v perf >/dev/null; then for _ in $(seq "$calls"); do cpu_ms "$@"; done | median; else echo "-"; fi; }
# Peak RSS in MB of one process (the median of 5 runs).
peak_mb() { for _ in 1 2 3 4 5; do /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; done |
  sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[3]/1024}'; }
ratio() { [ "$2" = "-" ] || [ "$1" = "-" ] && { echo "-"; return; }; echo "$1 $2" | awk '{printf "%.2fx", $1/$2}'; }
# row LABEL -- COMMAND...: p50 wall and CPU time, each with its ratio to curl's.
row() { local label=$1 wall cpu; shift 2; wall=$(series "$@"); cpu=$(cpu_series "$@")
  if [ "$label" = curl ]; then curl_wall=$wall; curl_cpu=$cpu; fi
  printf '| %-30s | %8s ms | %6s | %8s ms | %6s |\n' "$label" "$wall" "$(ratio "$wall" "$curl_wall")" "$cpu" "$(ratio "$cpu" "$curl_cpu")"; }

# A cache of $prefill entries: copies of one real entry under distinct keys (the
# keys' hashes are random; the scan and the eviction read names and metadata only).
prefill_cache() { # prefill_cache DIR
  local dir=$1 entry
  config "$work/fill.toml" "$dir"
  "$bin" fetch "http://127.0.0.1:$port/small.txt" --config "$work/fill.toml" >/dev/null
  entry=$(find "$dir" -name '*.json' | head -1)
  python3 - "$dir" "$entry" "$prefill" <<'PY'
import os, sys, shutil, secrets
root, entry, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(n - 1):
    key = secrets.token_hex(32)
    os.makedirs(os.path.join(root, key[:2]), exist_ok=True)
    shutil.copyfile(entry, os.path.join(root, key[:2], key + ".json"))
PY
}

for state in empty prefilled; do
  cache="$work/cache-$state"; mkdir -p "$cache"
  [ "$state" = prefilled ] && prefill_cache "$cache"
  config "$work/$state.toml" "$cache"
  echo
  echo "## cache $state ($(find "$cache" -name '*.json' | wc -l) entries)"
  echo "| call | p50 wall | vs curl | p50 CPU | vs curl |"
  echo "| --- | --- | --- | --- | --- |"
  row curl -- curl -sf "$url"
  row "cli, cache off (--no-cache)" -- "$bin" fetch "$url" --config "$work/$state.toml" --no-cache
  "$bin" fetch "$url" --config "$work/$state.toml" >/dev/null # fill the entry
  row "cli, cache hit" -- "$bin" fetch "$url" --config "$work/$state.toml"
  echo "peak RSS: curl $(peak_mb curl -sf "$url") MB;" \
    "cli cache off $(peak_mb "$bin" fetch "$url" --config "$work/$state.toml" --no-cache) MB;" \
    "cli cache hit $(peak_mb "$bin" fetch "$url" --config "$work/$state.toml") MB;" \
    "cli on a 12-byte text $(peak_mb "$bin" fetch "http://127.0.0.1:$port/small.txt" --config "$work/$state.toml" --no-cache) MB"
  if [ -x "$latency" ]; then
    "$latency" "$bin" "$work/$state.toml" "$url" "$calls"
  fi
done
if [ -x "$latency" ] && { [ -n "${FORGE_TEST_CHROMIUM_PATH:-}" ] || command -v chromium >/dev/null; }; then
  echo
  echo "## browser (force_browser over MCP, the warm standby; the first call launches cold)"
  "$latency" "$bin" "$work/empty.toml" "$url" "$(( calls < 10 ? calls : 10 ))" browser
fi
peer=${WEBFETCH_E2E_PEER:-$(command -v mcp-server-fetch || true)}
if [ -x "$latency" ] && [ -n "$peer" ]; then
  echo
  echo "## peer: $peer (robots.txt and page on every call, no cache)"
  "$latency" peer "$url" "$calls" "$peer" --allow-private-ips 2>/dev/null
fi
