#!/usr/bin/env bash
# The fleet bench: 1, 2 and 4 `webfetch serve` instances on
# one Redis, all on loopback; 64 clients make 10,000 calls over 1,000 pages of a
# loopback origin (Zipf, exponent 1, fixed seed), spread round-robin over the
# instances as a load balancer would. Then the same runs with a disk cache per
# instance and no Redis. Prints a Markdown table: calls/s, p50/p99 latency,
# origin requests per distinct page (goal 1.0), robots.txt requests (goal 1),
# peak RSS of every process (serve instances, redis-server, origin, client).
# Asserts nothing. Defaults everywhere (per_origin_in_flight = 8), share_robots
# on in the fleet runs.
# Run from the crate root:  bash benches/fleet.sh [calls] [clients] [pages]
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-10000}
clients=${2:-64}
pages=${3:-1000}
redis_server=${REDIS_SERVER:-/usr/bin/redis-server}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --quiet --bin webfetch --example fleet_load
bin=target/release/webfetch
load=target/release/examples/fleet_load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
peak_mib() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }

# One run: MODE (fleet|disk), N instances. Prints one table row.
run() {
  local mode=$1 n=$2 redis_pid="" origin_pid addrs="" serve_pids=() port
  "$load" origin > "$work/origin.port" &
  origin_pid=$!; pids+=("$origin_pid")
  until [ -s "$work/origin.port" ]; do sleep 0.05; done
  port=$(cat "$work/origin.port"); rm -f "$work/origin.port"
  local fleet=""
  if [ "$mode" = fleet ]; then
    local rport; rport=$(free_port)
    mkdir -p "$work/redis"
    "$redis_server" --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/redis" --maxmemory 256mb --maxmemory-policy allkeys-lru >/dev/null &
    redis_pid=$!; pids+=("$redis_pid")
    until redis-cli -p "$rport" ping >/dev/null 2>&1; do sleep 0.05; done
    head -c 32 /dev/urandom | base64 > "$work/fleet.key"
    chmod 600 "$work/fleet.key"
    fleet="[tools.webfetch.fleet]
redis_url = \"redis://127.0.0.1:$rport/\"
key_file = \"$work/fleet.key\"
share_robots = true"
  fi
  for i in $(seq 1 "$n"); do
    local cache=""
    if [ "$mode" = disk ]; then cache="$work/cache-$i"; rm -rf "$cache"; fi
    cat > "$work/webfetch-$i.toml" <<TOML
[tools.webfetch]
cache_dir = "$cache"
[tools.webfetch.security]
allow_insecure_overrides = true
block_loopback = false
allowed_ports = [$port]
$fleet
TOML
    "$bin" serve --listen 127.0.0.1:0 --config "$work/webfetch-$i.toml" 2> "$work/serve-$i.log" &
    serve_pids+=($!); pids+=($!)
  done
  for i in $(seq 1 "$n"); do
    until grep -q 'listening on' "$work/serve-$i.log" 2>/dev/null; do sleep 0.05; done
    local addr; addr=$(grep -o 'listening on http://[^ ]*' "$work/serve-$i.log" | sed 's#listening on http://##')
    addrs="${addrs:+$addrs,}$addr"
  done
  local out; out=$("$load" run "$port" "$clients" "$calls" "$pages" "$addrs")
  field() { echo "$out" | awk -v k="$1" '{for (i=1;i<NF;i++) if ($i==k) print $(i+1)}'; }
  local rss="" pid
  for pid in "${serve_pids[@]}"; do rss="${rss:+$rss/}$(peak_mib "$pid")"; done
  local redis_rss="-"
  [ -n "$redis_pid" ] && redis_rss=$(peak_mib "$redis_pid")
  printf '| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$mode" "$n" "$(field calls/s)" "$(field p50_ms)" "$(field p99_ms)" "$(field failures)" \
    "$(field origin_per_url)" "$(field robots)" "$rss" "$redis_rss" \
    "$(peak_mib "$origin_pid") / $(field client_rss_mib | cut -d. -f1)"
  for pid in "${serve_pids[@]}" $redis_pid "$origin_pid"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work/redis" "$work"/cache-*
}

echo "$calls calls, $clients clients, $pages pages (Zipf), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| cache | instances | calls/s | p50 ms | p99 ms | failures | origin requests per page | robots.txt requests | serve peak RSS MiB (each) | redis peak RSS MiB | origin / client peak RSS MiB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for n in 1 2 4; do run fleet "$n"; done
for n in 1 2 4; do run disk "$n"; done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
