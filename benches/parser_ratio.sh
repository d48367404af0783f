#!/usr/bin/env bash
# Instructions per byte of parsing alone, for peer HTML parsers and for webfetch's
# whole extraction, on the 1 MiB dense page and the real pages of
# benches/extract.rs, counted by callgrind; prints each pass's dense-over-real
# ratio (the target is at most 2x for the whole extraction). The peers
# live in benches/parser_ratio/, a crate of their own that neither the main build
# nor CI compiles. Needs valgrind and the corpus (WEBFETCH_CORPUS_DIR); about two
# minutes, most of it building.
#
#   bash benches/parser_ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --example extract_stages >&2
(cd benches/parser_ratio && cargo build --release >&2)
stages=target/release/examples/extract_stages
peers=benches/parser_ratio/target/release/parser-ratio
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The peer parses, each a function of benches/parser_ratio/src/main.rs.
passes=(scan html5gum_tokens tl_dom lol_html_stream html5ever_rcdom scraper_html)
# Instructions per byte: the first count of lines matching PATTERN in a profile.
per_byte() {
    local file=$1 pattern=$2 bytes=$3 inclusive=$4
    callgrind_annotate --inclusive="$inclusive" "$file" 2>/dev/null |
        awk -v p="$pattern" -v b="$bytes" 'index($0, p) && !n++ { gsub(",", "", $1); v = $1 } END { print v / b }'
}
declare -A cost
for page in dense repeated mixed; do
    "$stages" page "$page" 1 >"$out/$page.html"
    bytes=$(stat -c %s "$out/$page.html")
    valgrind --tool=callgrind --callgrind-out-file="$out/$page.peers" "$peers" "$out/$page.html" >/dev/null 2>&1
    valgrind --tool=callgrind --callgrind-out-file="$out/$page.ours" --collect-atstart=no \
        --toggle-collect='*extract_stages::extraction*' "$stages" once "$page" 1 >/dev/null 2>&1
    for pass in "${passes[@]}"; do
        cost[$page.$pass]=$(per_byte "$out/$page.peers" "parser_ratio::$pass " "$bytes" yes)
    done
    cost[$page.webfetch]=$(per_byte "$out/$page.ours" "PROGRAM TOTALS" "$bytes" no)
done

printf '%-46s %7s %9s %7s %9s %9s\n' "pass (instructions per byte, 1 MiB)" dense repeated mixed "d/repeat" "d/mixed"
for pass in "${passes[@]}" webfetch; do
    case $pass in
        scan) label="memchr for '<' (all per byte)" ;;
        html5gum_tokens) label="html5gum 0.9, owned tokens, no tree" ;;
        tl_dom) label="tl 0.7 (not HTML5-conformant)" ;;
        lol_html_stream) label="lol_html 2, every element, no tree" ;;
        html5ever_rcdom) label="html5ever 0.40 into RcDom" ;;
        scraper_html) label="scraper 0.29 (html5ever into ego-tree)" ;;
        webfetch) label="webfetch: decode, parse, clean, Markdown" ;;
    esac
    awk -v l="$label" -v d="${cost[dense.$pass]}" -v r="${cost[repeated.$pass]}" -v m="${cost[mixed.$pass]}" \
        'BEGIN { printf "%-46s %7.1f %9.1f %7.1f %8.2fx %8.2fx\n", l, d, r, m, d / r, d / m }'
done
