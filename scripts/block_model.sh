#!/usr/bin/env bash
# The block filter's model (src/extract/auto/blocks/model.rs) from scratch:
# dumps the filter's rows from WCXB's dev split with the release bench, installs
# the pinned training environment (scripts/requirements-train.txt) in a venv,
# and trains with scripts/train_blocks.py.
#
#   scripts/block_model.sh check     # model.rs must come out byte for byte
#   scripts/block_model.sh retrain   # write model.rs from today's code
#
# The dev split is found at WEBFETCH_WCXB_DIR, else as `wcxb-dev` beside
# WEBFETCH_CORPUS_DIR; without it, `check` says why and exits 0 (skipped).
# WEBFETCH_TRAIN_VENV names the venv (default train-venv in the target
# directory, made when missing).
# `check` exits 0 when model.rs is what training gives, 3 when the blocks are
# not those model.rs was trained on (retrain), 1 when they are but the model
# comes out different, 2 for a wrong environment or ground truth.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  check) flags=(--check) ;;
  retrain) flags=() ;;
  *) echo "usage: $0 check|retrain" >&2; exit 2 ;;
esac

dir=${WEBFETCH_WCXB_DIR:-}
if [ -z "$dir" ] && [ -n "${WEBFETCH_CORPUS_DIR:-}" ]; then
  dir="$(dirname "$WEBFETCH_CORPUS_DIR")/wcxb-dev"
fi
if [ -z "$dir" ] || [ ! -f "$dir/ground-truth.json" ]; then
  echo "skipped: WCXB's dev split not found (set WEBFETCH_WCXB_DIR to its directory)"
  exit 0
fi

target=${CARGO_TARGET_DIR:-target}
venv=${WEBFETCH_TRAIN_VENV:-$target/train-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r scripts/requirements-train.txt

rows="$target/block-rows.tsv"
mkdir -p "$target"
WEBFETCH_WCXB_DIR="$dir" WCXB_BLOCKS="$rows" cargo bench --locked --bench wcxb
"$venv/bin/python" scripts/train_blocks.py "${flags[@]}" "$rows" "$dir/ground-truth.json" \
  src/extract/auto/blocks/model.rs
