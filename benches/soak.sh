#!/usr/bin/env bash
# Soak of the long-lived servers: 10,000 mixed calls (hits, misses,
# redirects, robots.txt refusals, errors of each family, a browser render every
# 50th call when Chromium is found) against `webfetch mcp` over stdio, then against
# `webfetch serve` over MCP/HTTP, from a loopback site. Prints the RSS / open fds /
# threads curve every 500 calls; fails on any wrong response or on a Chromium
# process or profile left behind. Not part of CI (about 5-10 minutes per front).
# Run from the crate root:  bash benches/soak.sh [calls]   (PROFILE=debug to skip the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-10000}
profile=${PROFILE:-release}
flag=$([ "$profile" = release ] && echo --release || true)
cargo build $flag --quiet --bin webfetch --example soak
chromium=${FORGE_TEST_CHROMIUM_PATH:-$(command -v chromium || true)}
[ -z "$chromium" ] && [ -x /usr/lib/chromium/chromium ] && chromium=/usr/lib/chromium/chromium
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), profile $profile, chromium ${chromium:-none}"
for front in stdio serve; do
  "target/$profile/examples/soak" "target/$profile/webfetch" "$front" "$calls" $chromium
done
