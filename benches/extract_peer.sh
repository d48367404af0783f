#!/usr/bin/env bash
# Extraction speed beside a peer's, same files, same clock, one run: webfetch
# (`extract_stages rate`, SRD and article mode) and trafilatura (Python) over the
# article-extraction corpus, then over the dense synthetic page of
# benches/extract.rs (1 MiB). MB of HTML per second of one thread's CPU time.
# Needs the corpus (WEBFETCH_CORPUS_DIR) and trafilatura (`pip install
# trafilatura lxml_html_clean`: lxml 6 no longer bundles the cleaner trafilatura
# imports; PYTHON names the interpreter that has them).
#   bash benches/extract_peer.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
"$python" -c 'import trafilatura' 2>/dev/null || { echo "needs trafilatura and lxml_html_clean for $python" >&2; exit 1; }
corpus=${WEBFETCH_CORPUS_DIR:-../shared/corpus/article-extraction}/html
ls "$corpus"/*.html.gz >/dev/null 2>&1 || { echo "no corpus at $corpus" >&2; exit 1; }
cargo build --release --quiet --example extract_stages
bin=target/release/examples/extract_stages
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
for f in "$corpus"/*.html.gz; do gzip -dc "$f" > "$work/corpus/$(basename "$f" .gz)"; done
"$bin" page dense 1 > "$work/dense.html"
echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for set in corpus dense; do
  files=("$work/corpus"/*.html)
  [ "$set" = dense ] && files=("$work/dense.html")
  echo "## $set"
  "$bin" rate "${files[@]}"
  "$python" benches/extract_peer.py "${files[@]}"
done
