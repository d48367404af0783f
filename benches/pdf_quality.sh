#!/usr/bin/env bash
# PDF quality and speed: webfetch's PDF reader beside poppler's pdftotext
# and PyMuPDF's get_text, in one run, on the pdf-text corpus (400 PDFs: 80 texts x 5
# producers, exact ground truth) scored by the corpus's pdf_quality.py: word F1,
# 4-word-shingle F1 (reading order), the share of page furniture (running heads, page
# numbers) that survives, seconds per PDF. Prints one table, per producer and overall.
#
#   bash benches/pdf_quality.sh [CORPUS_DIR] [-- extra pdf_quality.py args]
#
# CORPUS_DIR: the pdf-text corpus (ground-truth.json and pdf/), else
# $WEBFETCH_PDF_CORPUS_DIR, else ../shared/corpus/pdf-text. The scorer:
# $WEBFETCH_PDF_SCORER, else tools/pdf_quality.py two levels above the corpus.
# Peers run when present and are skipped with a message otherwise: pdftotext
# (Debian's poppler-utils) on PATH; PyMuPDF importable by $WEBFETCH_PDF_PYTHON, else
# python3 (`python3 -m venv /tmp/pdfvenv && /tmp/pdfvenv/bin/pip install pymupdf`,
# then WEBFETCH_PDF_PYTHON=/tmp/pdfvenv/bin/python).
#
# webfetch is the release example `pdf_text` (built here): timed as a process per
# PDF like pdftotext, and in-process per producer (`pdf_text --time`), which is how
# PyMuPDF is timed (after a warm-up call, the scorer's rule); and in-process with
# each PDF read in a worker process of the release `webfetch` (`pdf_text --time
# --worker`), as the front doors read PDFs. Run it on an idle
# machine: the timings are wall clock. WEBFETCH_PDF_KEEP=DIR keeps the scorer's
# per-PDF JSON and each extractor's output there.
#
# A table row per extractor and metric; "(ground truth)" is what the corpus's own
# text scores for furniture: its first line is the title, which the running title
# of chromium and pdflatex repeats, so the floor is not zero. "title aside" counts
# only the furniture strings that are not (a prefix of) the title.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${WEBFETCH_PDF_CORPUS_DIR:-../shared/corpus/pdf-text}"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then corpus="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
if [ ! -f "$corpus/ground-truth.json" ]; then
    echo "pdf-text corpus not found at $corpus: skipped (set WEBFETCH_PDF_CORPUS_DIR)" >&2
    exit 0
fi
scorer="${WEBFETCH_PDF_SCORER:-$corpus/../../tools/pdf_quality.py}"
if [ ! -f "$scorer" ]; then
    echo "scorer pdf_quality.py not found at $scorer: skipped (set WEBFETCH_PDF_SCORER)" >&2
    exit 0
fi

python="${WEBFETCH_PDF_PYTHON:-python3}"
peers=()
if command -v pdftotext >/dev/null; then
    peers+=(pdftotext)
else
    echo "pdftotext not on PATH: its rows are skipped (apt-get install poppler-utils)" >&2
fi
if "$python" -c "import pymupdf" 2>/dev/null; then
    peers+=(pymupdf)
else
    echo "PyMuPDF not importable by $python: its rows are skipped (set WEBFETCH_PDF_PYTHON)" >&2
fi

cargo build --release --quiet --example pdf_text --bin webfetch
bin="$PWD/target/release/examples/pdf_text"
webfetch="$PWD/target/release/webfetch"
if [ -n "${WEBFETCH_PDF_KEEP:-}" ]; then
    work="$WEBFETCH_PDF_KEEP" # the scorer's JSON and every extractor's text are kept here
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg) at start" >&2
# webfetch's output is Markdown: the scorer drops its syntax first, and with it
# any `<...>` run (as an HTML tag) and every `\`, which cost a document quoting
# code words that plain-text output keeps; the same output scored as plain
# text is a diagnostic row.
extractors=("mdcmd:webfetch=$bin {pdf}" "cmd:webfetch-as-text=$bin {pdf}")
[ ${#peers[@]} -gt 0 ] && extractors=("$(IFS=,; echo "${peers[*]}")" "${extractors[@]}")
"$python" "$scorer" "$corpus" --extractors "${extractors[@]}" \
    --out "$work/results.json" --save "$work/saved" "$@" >"$work/scorer.txt"

# webfetch in-process, per producer: every PDF of the producer read in one process;
# then the same with each PDF read in a worker process.
per_pdf() { "$bin" --time "$@" 2>&1 >/dev/null | sed -n 's/.*PDFs, \([0-9.]*\) s\/PDF$/\1/p'; }
: >"$work/inprocess.tsv"
: >"$work/worker.tsv"
for producer in chromium libreoffice pdflatex groff reportlab all; do
    if [ "$producer" = all ]; then
        mapfile -t pdfs < <(ls "$corpus"/pdf/*.pdf)
    else
        mapfile -t pdfs < <(ls "$corpus"/pdf/*-"$producer".pdf 2>/dev/null)
    fi
    [ ${#pdfs[@]} -gt 0 ] || continue
    printf '%s\t%s\n' "$producer" "$(per_pdf "${pdfs[@]}")" >>"$work/inprocess.tsv"
    printf '%s\t%s\n' "$producer" "$(per_pdf --worker "$webfetch" "${pdfs[@]}")" >>"$work/worker.tsv"
done

echo "load $(cut -d' ' -f1-3 /proc/loadavg) at end" >&2
python3 benches/pdf_quality_table.py "$work/results.json" "$corpus" "$work/saved" \
    "$work/inprocess.tsv" "$work/worker.tsv"
