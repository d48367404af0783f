#!/usr/bin/env bash
# Instructions per byte (and per tree node) of one extraction over the size series of
# benches/extract.rs (1, 2, 4 and 8 MiB of the dense page and of real pages
# concatenated and repeated), counted by callgrind: a linearity check that
# neither machine load nor the allocator's memory policy moves.
# Needs valgrind and the corpus; takes about two minutes.
#
#   bash benches/instructions.sh [PAGE...]    # default: dense mixed repeated
#   bash benches/instructions.sh --stages     # 1 MiB, per stage, dense over real
#
# --stages splits one 1 MiB extraction of the dense page and of the median real
# page repeated into html5gum's tokenizer (its own instructions), html5ever's tree
# builder with our sink, the rest of the parse (the bridge, the limiter,
# allocation) and everything after the parse, each in instructions per byte and
# dense over real: the lower bound on the dense-over-real ratio of any pipeline
# that keeps a stage is that stage's ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --example extract_stages >&2
bin=target/release/examples/extract_stages
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One extraction of PAGE at MIB MiB under callgrind, its profile in FILE; prints
# the page's bytes, its nodes and the instructions of the extraction.
profile() {
    local page=$1 mib=$2 file=$3 log
    log=$(valgrind --tool=callgrind --callgrind-out-file="$file" \
        --collect-atstart=no --toggle-collect='*extract_stages::extraction*' \
        "$bin" once "$page" "$mib" 2>&1)
    echo "$(grep -oE '[0-9]+ bytes' <<<"$log" | head -1 | cut -d' ' -f1)" \
        "$(grep -oE '[0-9]+ nodes' <<<"$log" | head -1 | cut -d' ' -f1)" \
        "$(grep -oE 'Collected : [0-9]+' <<<"$log" | grep -oE '[0-9]+$')"
}

# Inclusive instructions of the function named by PATTERN in a profile.
function_cost() {
    local file=$1 pattern=$2
    callgrind_annotate --inclusive=yes "$file" 2>/dev/null |
        awk -v p="$pattern" 'index($0, p) { gsub(",", "", $1); if ($1 > m) m = $1 } END { print m + 0 }'
}

if [ "${1:-}" = --stages ]; then
    declare -A per
    for page in dense repeated; do
        read -r bytes _ total < <(profile "$page" 1 "$out/$page")
        parse=$(function_cost "$out/$page" 'webfetch::extract::dom::parse_within ')
        tree=$(function_cost "$out/$page" '<html5ever::tree_builder::TreeBuilder<Handle,Sink> as html5ever::tokenizer::interface::TokenSink>::process_token ')
        tokenizer=$(callgrind_annotate "$out/$page" 2>/dev/null |
            awk '/\?\?\?:html5gum::/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
        for stage in total parse tree tokenizer; do
            per[$page.$stage]=$(awk -v i="${!stage}" -v b="$bytes" 'BEGIN { print i / b }')
        done
        per[$page.bridge]=$(awk -v p="${per[$page.parse]}" -v t="${per[$page.tree]}" -v k="${per[$page.tokenizer]}" 'BEGIN { print p - t - k }')
        per[$page.after]=$(awk -v a="${per[$page.total]}" -v p="${per[$page.parse]}" 'BEGIN { print a - p }')
    done
    printf '%-44s %8s %8s %8s\n' "stage (instructions per byte, 1 MiB)" dense real ratio
    for stage in tokenizer tree bridge after total; do
        case $stage in
            tokenizer) label="html5gum's tokenizer (own instructions)" ;;
            tree) label="html5ever's tree builder with our sink" ;;
            bridge) label="rest of the parse (bridge, limiter, malloc)" ;;
            after) label="after the parse (survey, convert, drop)" ;;
            total) label="extraction" ;;
        esac
        awk -v l="$label" -v d="${per[dense.$stage]}" -v r="${per[repeated.$stage]}" \
            'BEGIN { printf "%-44s %8.1f %8.1f %7.2fx\n", l, d, r, d / r }'
    done
    exit 0
fi

pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(dense mixed repeated)
for page in "${pages[@]}"; do
    base=""
    line="$page:"
    for mib in 1 2 4 8; do
        read -r bytes nodes instr < <(profile "$page" "$mib" "$out/cg")
        per=$(awk -v i="$instr" -v b="$bytes" 'BEGIN { printf "%.1f", i / b }')
        [ -n "$base" ] || base=$per
        line+=$(awk -v p="$per" -v b="$base" -v m="$mib" -v i="$instr" -v n="$nodes" \
            'BEGIN { printf " %d MiB %s instr/B (%.3f), %.0f instr/node;", m, p, p / b, i / n }')
    done
    echo "$line"
done
