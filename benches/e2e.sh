#!/usr/bin/env bash
# End-to-end latency on loopback for a ~100 KiB page: curl beside the webfetch CLI
# (process per call) and the MCP server (one process, per-call latency), cache miss
# and hit. Prints medians; nothing here is asserted. Run from the crate root:
#   bash benches/e2e.sh [calls]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-30}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

cargo build --release --quiet --bin webfetch --example mcp_latency
bin=target/release/webfetch

# A real ~100 KiB article from the corpus (or a synthetic page without it).
corpus=../shared/corpus/article-extraction/html
page=$(ls -S "$corpus"/*.html.gz 2>/dev/null | while read -r f; do
  size=$(gzip -dc "$f" | wc -c); [ "$size" -ge 90000 ] && [ "$size" -le 130000 ] && { echo "$f"; break; }; done || true)
mkdir -p "$work/site"
if [ -n "$page" ]; then gzip -dc "$page" > "$work/site/page.html"; else
  python3 -c "print('<html><body><article>' + '<p>' + 'word ' * 200 + '</p>' * 100 + '</article></body></html>')" > "$work/site/page.html"; fi
printf 'User-agent: *\nAllow: /\n' > "$work/site/robots.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
server=$!
url="http://127.0.0.1:$port/page.html"
until curl -sf -o /dev/null "$url"; do :; done
cat > "$work/webfetch.toml" <<TOML
[tools.webfetch]
cache_dir = "$work/cache"
[tools.webfetch.security]
allow_insecure_overrides = true
block_loopback = false
allowed_ports = [$port]
TOML
echo "page: $(wc -c < "$work/site/page.html") bytes, $calls calls each"

median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f ms", a[int((NR+1)/2)]}'; }
time_ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo "scale=3; ($e-$s)/1000000" | bc; }

for _ in $(seq "$calls"); do time_ms curl -sf "$url"; done | median | sed 's/^/curl:           /'; echo
for _ in $(seq "$calls"); do time_ms "$bin" fetch "$url" --config "$work/webfetch.toml" --no-cache; done | median | sed 's/^/cli miss:       /'; echo
for _ in $(seq "$calls"); do time_ms "$bin" fetch "$url" --config "$work/webfetch.toml"; done | median | sed 's/^/cli hit:        /'; echo
target/release/examples/mcp_latency "$bin" "$work/webfetch.toml" "$url" "$calls"
if [ -n "${FORGE_TEST_CHROMIUM_PATH:-}" ] || command -v chromium >/dev/null; then
  target/release/examples/mcp_latency "$bin" "$work/webfetch.toml" "$url" "$(( calls < 10 ? calls : 10 ))" browser
fi
