#!/usr/bin/env bash
# Load on `webfetch serve` over loopback: N concurrent clients (1, 8, 64)
# calling GET /v1/fetch for a ~100 KiB page served locally, the document cache off,
# beside the same client and curl fetching the page directly with the same concurrency. Prints
# pages/s, p50/p95 latency and the server's peak RSS per level; asserts nothing.
# Run from the crate root:  bash benches/serve_load.sh [requests-per-level]
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-300}
work=$(mktemp -d)
serve_pid=""
trap 'kill $server 2>/dev/null || true; [ -n "$serve_pid" ] && kill $serve_pid 2>/dev/null || true; rm -rf "$work"' EXIT

cargo build --release --quiet --bin webfetch --example serve_load
bin=target/release/webfetch
load=target/release/examples/serve_load

# A real ~100 KiB article from the corpus (or a synthetic page without it).
corpus=${WEBFETCH_CORPUS_DIR:-../shared/corpus/article-extraction}/html
page=$(ls -S "$corpus"/*.html.gz 2>/dev/null | while read -r f; do
  size=$(gzip -dc "$f" | wc -c); [ "$size" -ge 90000 ] && [ "$size" -le 130000 ] && { echo "$f"; break; }; done || true)
mkdir -p "$work/site"
if [ -n "$page" ]; then gzip -dc "$page" > "$work/site/page.html"; else
  python3 -c "print('<html><body><article>' + '<p>' + 'word ' * 200 + '</p>' * 100 + '</article></body></html>')" > "$work/site/page.html"; fi
"$load" upstream "$work/site/page.html" > "$work/port" &
server=$!
until [ -s "$work/port" ]; do sleep 0.05; done
port=$(cat "$work/port")
url="http://127.0.0.1:$port/page.html"
cat > "$work/webfetch.toml" <<TOML
[tools.webfetch]
cache_dir = ""
[tools.webfetch.security]
allow_insecure_overrides = true
block_loopback = false
allowed_ports = [$port]
TOML
encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$url")
echo "page: $(wc -c < "$work/site/page.html") bytes, $requests requests per level, $(nproc) cores"

for n in 1 8 64; do
  "$bin" serve --listen 127.0.0.1:0 --config "$work/webfetch.toml" 2> "$work/serve.log" &
  serve_pid=$!
  until grep -q 'listening on' "$work/serve.log" 2>/dev/null; do sleep 0.05; done
  addr=$(grep -o 'listening on http://[^ ]*' "$work/serve.log" | sed 's#listening on http://##')
  printf 'serve  '
  "$load" "$addr" "/v1/fetch?url=$encoded&max_chunk_tokens=600" "$n" "$requests" | tr -d '\n'
  echo "  peak RSS $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' /proc/$serve_pid/status)"
  kill -TERM "$serve_pid"; wait "$serve_pid" || true; serve_pid=""
  printf 'direct '
  "$load" "127.0.0.1:$port" "/page.html" "$n" "$requests"
  s=$(date +%s%N)
  seq "$requests" | xargs -P "$n" -I{} curl -sf -o /dev/null "$url" || echo "(some curl calls failed)"
  e=$(date +%s%N)
  echo "curl   concurrency $(printf '%3d' "$n"): $(echo "scale=1; $requests * 1000000000 / ($e - $s)" | bc) pages/s (a process per request)"
done
