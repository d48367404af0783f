#!/usr/bin/env bash
# PDF quality and speed (issue 31): webfetch's PDF reader beside poppler's pdftotext
# and PyMuPDF, in the same run, on the pdf-text corpus (400 PDFs: 80 texts x 5
# producers, exact ground truth), scored by shared/tools/pdf_quality.py: word F1,
# 4-word-shingle F1 (reading order), the share of page furniture that survives, s/PDF.
#
#   bash benches/pdf_quality.sh [CORPUS_DIR] [-- extra pdf_quality.py args]
#
# Needs: pdftotext (Debian poppler-utils), python3 with PyMuPDF (a venv is made under
# /tmp/webfetch-pdf-venv when `import pymupdf` fails), and the release example
# `pdf_text` (built here). webfetch is timed as a process per PDF, like pdftotext;
# PyMuPDF runs in-process after a warm-up call (the scorer's rules).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${1:-../shared/corpus/pdf-text}"
shift || true
[ "${1:-}" = "--" ] && shift
tools="$(dirname "$corpus")/../tools"
[ -f "$tools/pdf_quality.py" ] || tools="../shared/tools"
python=python3
if ! $python -c "import pymupdf" 2>/dev/null; then
    venv=/tmp/webfetch-pdf-venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q pymupdf
    python="$venv/bin/python"
fi
cargo build --release --example pdf_text
bin="$PWD/target/release/examples/pdf_text"
nproc_note="$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $(uname -srm), $nproc_note" >&2
$python "$tools/pdf_quality.py" "$corpus" \
    --extractors pdftotext,pymupdf "mdcmd:webfetch=$bin {pdf}" "$@"
