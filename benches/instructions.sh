#!/usr/bin/env bash
# Instructions per byte (and per tree node) of one extraction over the size series of
# benches/extract.rs (1, 2, 4 and 8 MiB of the dense page and of real pages
# concatenated and repeated), counted by callgrind: a linearity check that
# neither machine load nor the allocator's memory policy moves (issue 17 item 3).
# Needs valgrind and the corpus; takes about two minutes.
#
#   bash benches/instructions.sh [PAGE...]    # default: dense mixed repeated
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --example extract_stages >&2
bin=target/release/examples/extract_stages
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(dense mixed repeated)
for page in "${pages[@]}"; do
    base=""
    line="$page:"
    for mib in 1 2 4 8; do
        log=$(valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
            --collect-atstart=no --toggle-collect='*extract_stages::extraction*' \
            "$bin" once "$page" "$mib" 2>&1)
        bytes=$(grep -oE '[0-9]+ bytes' <<<"$log" | head -1 | cut -d' ' -f1)
        nodes=$(grep -oE '[0-9]+ nodes' <<<"$log" | head -1 | cut -d' ' -f1)
        instr=$(grep -oE 'Collected : [0-9]+' <<<"$log" | grep -oE '[0-9]+$')
        per=$(awk -v i="$instr" -v b="$bytes" 'BEGIN { printf "%.1f", i / b }')
        [ -n "$base" ] || base=$per
        line+=$(awk -v p="$per" -v b="$base" -v m="$mib" -v i="$instr" -v n="$nodes" \
            'BEGIN { printf " %d MiB %s instr/B (%.3f), %.0f instr/node;", m, p, p / b, i / n }')
    done
    echo "$line"
done
