#!/usr/bin/env python3
"""Trains auto mode's block filter and writes its model.

The filter reads each leaf block of the whole-page reading (a paragraph,
heading, list item or cell: src/extract/auto/blocks.rs) and drops the ones it
reads as boilerplate. It learns from WCXB's dev split only (never the test
split): a block is content when its words are in the page's gold text (its
phrase for blocks under three words, half its word trigrams otherwise).

    # 1. the rows: every leaf block of the dev pages auto mode reads whole
    WCXB_BLOCKS=/tmp/blocks.tsv cargo bench --bench wcxb
    # 2. train, cross-validate by site, write the model
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scikit-learn
    /tmp/venv/bin/python scripts/train_blocks.py /tmp/blocks.tsv \
        "$WEBFETCH_WCXB_DIR/ground-truth.json" src/extract/auto/blocks/model.rs

The model is scikit-learn's gradient-boosted trees (deterministic: a fixed
seed for its early-stopping split), written out as Rust. It prints, per page
type auto read the page as, the mean word F1 of the blocks' text with every
block kept and with the filter, where each page's filter was trained on the
other sites' pages (five folds grouped by host): the figure to expect on pages
it never saw. Each page type gets the threshold that maximizes that figure,
or no filtering when the gain is under MIN_GAIN.
"""

import collections
import json
import math
import re
import sys
from urllib.parse import urlparse

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold

# Must match blocks.rs: the dense features, then the four hashed groups (a unit
# test there reads these three constants and fails when they differ).
DENSE = 54
FEATURES = DENSE + 256 + 512 + 256 + 512
# The dense feature saying the block is the page's <h1> (never dropped).
TAG_H1 = 13
# The model: how many trees, how many leaves each, and how many of the hashed
# features (the most common) they may split on.
TREES = 100
LEAVES = 15
MOST_COMMON = 300
FOLDS = 5
# Thresholds tried (probability of content), and the cross-validated gain in
# mean page F1 a page type needs for its blocks to be filtered at all.
CANDIDATES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
MIN_GAIN = 0.005
WORD = re.compile(r"\w+")


def words(text):
    return [w.lower() for w in WORD.findall(text)]


def label(tokens, gold_joined, gold_trigrams):
    """1 when the block's words are in the gold: its phrase for short blocks,
    half its word trigrams for longer ones."""
    if len(tokens) < 3:
        return int(f" {' '.join(tokens)} " in gold_joined)
    trigrams = [tuple(tokens[i:i + 3]) for i in range(len(tokens) - 2)]
    found = sum(1 for t in trigrams if t in gold_trigrams)
    return int(found * 2 >= len(trigrams))


def f1(predicted, gold):
    if not gold:
        return 1.0 if not predicted else 0.0
    if not predicted:
        return 0.0
    counts = collections.Counter(gold)
    overlap = 0
    for w in predicted:
        if counts[w] > 0:
            counts[w] -= 1
            overlap += 1
    if overlap == 0:
        return 0.0
    p = overlap / len(predicted)
    r = overlap / len(gold)
    return 2 * p * r / (p + r)


def load(rows_path, truth_path):
    truth = json.load(open(truth_path))
    pages = collections.OrderedDict()
    for line in open(rows_path, encoding="utf-8"):
        page, gold_type, read_as, text, feats = line.rstrip("\n").split("\t")
        pages.setdefault(page, {"type": gold_type, "read_as": read_as, "blocks": []})
        row = [(int(i), float(x)) for i, x in (f.split(":") for f in feats.split())]
        pages[page]["blocks"].append((words(text), row))
    for page, data in pages.items():
        gold = words(truth[page]["main_content"])
        data["gold"] = gold
        data["host"] = urlparse(truth[page].get("url") or "").hostname or page
        joined = f" {' '.join(gold)} "
        trigrams = {tuple(gold[i:i + 3]) for i in range(len(gold) - 2)}
        data["labels"] = [label(t, joined, trigrams) for t, _ in data["blocks"]]
    return pages


def matrix(pages, keys):
    data, indices, indptr, y, weight, owner = [], [], [0], [], [], []
    for key in keys:
        page = pages[key]
        for (tokens, row), lab in zip(page["blocks"], page["labels"]):
            for i, x in row:
                indices.append(i)
                data.append(x)
            indptr.append(len(indices))
            y.append(lab)
            weight.append(math.sqrt(max(len(tokens), 1)))
            owner.append(key)
    x = csr_matrix((data, indices, indptr), shape=(len(y), FEATURES))
    return x, np.array(y), np.array(weight), owner


def page_f1(page, probabilities, threshold):
    """The page's F1 with the blocks under `threshold` dropped (nothing dropped
    when that would drop 90% of the text, as blocks.rs does)."""
    kept = [
        t
        for (t, row), p in zip(page["blocks"], probabilities)
        if p >= threshold or any(i == TAG_H1 for i, _ in row)
    ]
    every = [w for t, _ in page["blocks"] for w in t]
    if len(" ".join(w for t in kept for w in t)) * 10 < len(" ".join(every)):
        kept_words = every
    else:
        kept_words = [w for t in kept for w in t]
    return f1(kept_words, page["gold"])


def columns(x):
    """The dense features and the MOST_COMMON hashed ones (trees split on few)."""
    freq = np.asarray((x[:, DENSE:] != 0).sum(axis=0)).ravel()
    top = np.sort(np.argsort(-freq, kind="stable")[:MOST_COMMON]) + DENSE
    return np.concatenate([np.arange(DENSE), top])


def fit(x, y, w):
    return HistGradientBoostingClassifier(
        max_iter=TREES,
        max_leaf_nodes=LEAVES,
        learning_rate=0.1,
        early_stopping=True,
        validation_fraction=0.1,
        random_state=0,
    ).fit(x, y, sample_weight=w)


def main():
    rows_path, truth_path, out_path = sys.argv[1:4]
    pages = load(rows_path, truth_path)
    keys = list(pages)
    hosts = [pages[k]["host"] for k in keys]
    x, y, w, owner = matrix(pages, keys)
    cols = columns(x)
    dense = x[:, cols].toarray().astype(np.float32)
    owner = np.array(owner)
    probability = np.zeros(len(y))
    for train, _ in GroupKFold(n_splits=FOLDS).split(keys, groups=hosts):
        mask = np.isin(owner, [keys[i] for i in train])
        model = fit(dense[mask], y[mask], w[mask])
        probability[~mask] = model.predict_proba(dense[~mask])[:, 1]
    per_page, at = {}, 0
    for k in keys:
        n = len(pages[k]["blocks"])
        per_page[k] = probability[at:at + n]
        at += n
    thresholds = {}
    print(f"cross-validated by host ({FOLDS} folds): word F1 of the blocks kept")
    print("| auto's page type | pages | every block | filtered | threshold |")
    print("| --- | --- | --- | --- | --- |")
    for page_type in sorted({pages[k]["read_as"] for k in keys}):
        group = [k for k in keys if pages[k]["read_as"] == page_type]
        scores = {
            t: sum(page_f1(pages[k], per_page[k], t) for k in group) / len(group)
            for t in CANDIDATES
        }
        every = sum(page_f1(pages[k], [1.0] * len(pages[k]["blocks"]), 0.5) for k in group)
        every /= len(group)
        best = max(CANDIDATES, key=scores.get)
        if scores[best] - every >= MIN_GAIN:
            thresholds[page_type] = best
        shown = f"{best:.2f}" if page_type in thresholds else "off"
        filtered = scores[best] if page_type in thresholds else every
        print(f"| {page_type} | {len(group)} | {every:.3f} | {filtered:.3f} | {shown} |")
    model = fit(dense, y, w)
    write(out_path, model, cols, thresholds, len(keys), len(y))


def write(path, model, cols, thresholds, pages, blocks):
    """The model as Rust: each tree's nodes, split features named by their index
    in blocks.rs, leaves' values in log-odds."""
    lines = [
        "//! The block filter's model, written by `scripts/train_blocks.py` from",
        f"//! {pages} pages of WCXB's dev split ({blocks} blocks): gradient-boosted trees",
        "//! over blocks.rs's features. Generated: retrain, do not edit.",
        "",
        "use super::TreeNode;",
        "use crate::vocabulary::PageType;",
        "",
        "/// The log-odds every block starts from.",
        f"pub(super) const BASELINE: f64 = {float(np.ravel(model._baseline_prediction)[0])!r};",
        "",
        "/// The log-odds under which a block of a page read as `page_type` is",
        "/// boilerplate; `None` where filtering did not pay on the dev split.",
        "pub(super) fn threshold(page_type: PageType) -> Option<f64> {",
        "    match page_type {",
    ]
    for page_type in sorted(thresholds):
        t = thresholds[page_type]
        lines.append(f"        PageType::{page_type.capitalize()} => Some({math.log(t / (1 - t))!r}),")
    lines += ["        _ => None,", "    }", "}", "", "/// The trees, each its nodes from the root.",
              "#[rustfmt::skip]", "pub(super) const TREES: &[&[TreeNode]] = &["]
    for predictors in model._predictors:
        nodes = predictors[0].nodes
        out = []
        for node in nodes:
            if node["is_leaf"]:
                out.append(f"TreeNode::Leaf({float(node['value'])!r})")
            else:
                feature = int(cols[int(node["feature_idx"])])
                out.append(
                    f"TreeNode::Split({feature}, {float(node['num_threshold'])!r}, "
                    f"{int(node['left'])}, {int(node['right'])})"
                )
        lines.append("    &[")
        for i in range(0, len(out), 5):
            lines.append("        " + " ".join(n + "," for n in out[i:i + 5]))
        lines.append("    ],")
    lines += ["];", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
