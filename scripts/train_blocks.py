#!/usr/bin/env python3
"""Trains auto mode's block filter and writes its model, or checks that the
model in the repository is what training gives.

The filter reads each leaf block of the whole-page reading (a paragraph,
heading, list item or cell: src/extract/auto/blocks.rs) and drops the ones it
reads as boilerplate. It learns from WCXB's dev split only (never the test
split): a block is content when its words are in the page's gold text (its
phrase for blocks under three words, half its word trigrams otherwise).

A retrain is reproducible byte for byte, because everything it reads is pinned:

- the environment: scripts/requirements-train.txt, exact versions; the script
  refuses to run under others;
- the data: the ground truth must hash to GROUND_TRUTH_SHA256 below (the dev
  split; any other file is refused, the held-out test split included), and the
  blocks' sha256 is written into model.rs's header, so a check can tell a model
  made stale by a change to the readings or features from a retrain that does
  not reproduce;
- the model: scikit-learn's GradientBoostingClassifier, read through its
  documented attributes only (`init_`, `estimators_` and each tree's `tree_`),
  with a fixed seed, folds assigned by a rule written here (not by a library
  version's tie-breaking), and floats written in a fixed format.

Retrain (from the repository's root; the bench finds the dev split through
WEBFETCH_WCXB_DIR, as benches/wcxb.rs says). The dump takes under a minute
once the bench is built; the training, six fits of 100 trees (five for the
cross-validation, one on every page), about eight minutes of one core.
scripts/block_model.sh retrain runs these steps:

    python3 -m venv target/train-venv
    target/train-venv/bin/pip install -r scripts/requirements-train.txt
    WCXB_BLOCKS=target/block-rows.tsv cargo bench --bench wcxb
    target/train-venv/bin/python scripts/train_blocks.py target/block-rows.tsv \
        "$WEBFETCH_WCXB_DIR/ground-truth.json" src/extract/auto/blocks/model.rs

Check that model.rs is what training gives: scripts/block_model.sh check runs
the steps above with `--check`, which trains in memory, writes nothing, and
exits 0 when the result is model.rs byte for byte; 3 when the blocks are not
those model.rs was trained on (retrain); 1 when they are but the model comes
out different (the retrain does not reproduce: a bug to fix); 2 when the
environment is not the pinned one or the ground truth is not the dev split's.
`cargo test --test it wcxb` runs that check where the split and the venv are
present (the venv at WEBFETCH_TRAIN_VENV, else target/train-venv).

The rows are the pages auto mode reads as other than articles, and they must not
depend on the model they train: for a page the classifier calls an article,
whether auto reads it as a thread weighs the thread reading's words after this
filter, so the dump decides that with the filter off (block_rows in
src/extract/auto.rs). A retrain from unchanged code then dumps the rows its
model was trained on, and `check` gives the model back byte for byte.

It prints, per page type auto read the page as, the mean word F1 of the blocks'
text with every block kept and with the filter, where each page's blocks were
judged by trees trained on the other sites' pages (five folds grouped by host):
cross-validated figures, the ones to expect on pages the model never saw; they
are also written into model.rs's header. Each page type gets the threshold that
maximizes that figure, or no filtering when the gain is under MIN_GAIN.
"""

import argparse
import collections
import difflib
import hashlib
import importlib.metadata
import json
import math
import os
import re
import sys
from urllib.parse import urlparse

import numpy as np
from scipy.sparse import csc_matrix, csr_matrix
from sklearn.ensemble import GradientBoostingClassifier

# Must match blocks.rs: the dense features, then the four hashed groups (a unit
# test there reads these three constants and fails when they differ).
DENSE = 54
FEATURES = DENSE + 256 + 512 + 256 + 512
# The dense feature saying the block is the page's <h1> (never dropped).
TAG_H1 = 13
# The model: how many trees, how many leaves each, the fewest blocks a leaf
# holds, and how many of the hashed features (the most common) they may split on.
TREES = 100
LEAVES = 15
MIN_LEAF = 20
MOST_COMMON = 300
FOLDS = 5
SEED = 0
# Thresholds tried (probability of content), and the cross-validated gain in
# mean page F1 a page type needs for its blocks to be filtered at all.
CANDIDATES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
MIN_GAIN = 0.005
# Significant digits of the leaves' values in model.rs: far below anything
# that moves a block across a threshold, and above the last-bit differences
# between two CPUs' maths libraries, so the file is the same on both.
DIGITS = 12
# WCXB's dev split's ground-truth.json. Any other file is refused.
GROUND_TRUTH_SHA256 = "815f49602cdf1a3d1625941223eb3d07e6349cd824ac64d3a12d18cf55a0fa3e"
REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements-train.txt")
# Where model.rs records the blocks it was trained on.
BLOCKS_LINE = re.compile(r"^//! - blocks \(the bench's `WCXB_BLOCKS` rows\): sha256 ([0-9a-f]{64})", re.M)
WORD = re.compile(r"\w+")
# Exit codes of --check.
DIFFERENT = 1
REFUSED = 2
STALE = 3


def fail(code, message):
    print(f"train_blocks.py: {message}", file=sys.stderr)
    sys.exit(code)


def pinned():
    """The pinned versions, by package name."""
    versions = {}
    for line in open(REQUIREMENTS, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            versions[name.strip()] = version.strip()
    return versions


def check_environment():
    """Refuses to train under versions other than the pinned ones: another
    scikit-learn or numpy may grow other trees, and the model would not be the
    one its hashes and figures say."""
    wrong = []
    for name, version in pinned().items():
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found = "missing"
        if found != version:
            wrong.append(f"{name} {found} (pinned: {version})")
    if wrong:
        fail(REFUSED, "not the pinned environment: " + ", ".join(wrong)
             + f"; install it with `pip install -r {os.path.relpath(REQUIREMENTS)}` in a venv")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def recorded_blocks(model_path):
    """The blocks' sha256 model.rs says it was trained on, if it says one."""
    try:
        text = open(model_path, encoding="utf-8").read()
    except FileNotFoundError:
        return None
    found = BLOCKS_LINE.search(text)
    return found.group(1) if found else None


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
    """The benchmark's word F1 of two bags of words."""
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
    """The pages of the rows, in their order, each with its blocks (words and
    features), their labels, its gold words and its host."""
    truth = json.load(open(truth_path, encoding="utf-8"))
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
    """The blocks of `keys`' pages as a sparse matrix, with their labels, their
    weights (the square root of their words) and the page each belongs to."""
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


def folds(keys, hosts):
    """Each page's fold: hosts by decreasing pages (then name), each to the
    fold holding the fewest pages so far (the lowest when several do), so a
    site's pages are judged by trees that never saw that site."""
    count = collections.Counter(hosts)
    fold_of, sizes = {}, [0] * FOLDS
    for host in sorted(count, key=lambda h: (-count[h], h)):
        smallest = min(range(FOLDS), key=lambda f: (sizes[f], f))
        fold_of[host] = smallest
        sizes[smallest] += count[host]
    return [fold_of[h] for h in hosts]


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
    """Gradient-boosted trees grown best first, every block seen by every tree
    (no subsampling, no early stopping: nothing random but the tie-breaks of
    the splitter, which SEED fixes). The features go in sparse, by column:
    scikit-learn's splitter then sorts only the values that are not zero (a
    tenth of them), three times as fast as dense for the same trees."""
    return GradientBoostingClassifier(
        n_estimators=TREES,
        max_leaf_nodes=LEAVES,
        max_depth=None,
        min_samples_leaf=MIN_LEAF,
        learning_rate=0.1,
        random_state=SEED,
    ).fit(csc_matrix(x), y, sample_weight=w)


def exported(model, cols):
    """The fitted model as model.rs holds it, read through scikit-learn's
    documented attributes: the baseline log-odds (the prior of `init_`), and
    each tree of `estimators_` as its nodes from the root, a split being
    (feature index in blocks.rs, threshold, left, right) and a leaf its
    log-odds (the tree's value times the learning rate), rounded to DIGITS."""
    prior = model.init_.predict_proba(np.zeros((1, len(cols)), dtype=np.float32))[0, 1]
    baseline = rounded(math.log(prior / (1 - prior)))
    trees = []
    for estimator in model.estimators_[:, 0]:
        tree = estimator.tree_
        nodes = []
        for i in range(tree.node_count):
            left, right = int(tree.children_left[i]), int(tree.children_right[i])
            if left == -1:
                value = float(tree.value[i, 0, 0]) * model.learning_rate
                nodes.append(("leaf", rounded(value)))
            else:
                feature = int(cols[int(tree.feature[i])])
                nodes.append(("split", feature, float(tree.threshold[i]), left, right))
        trees.append(nodes)
    return baseline, trees


def rounded(value):
    return float(f"{value:.{DIGITS}g}")


def log_odds(baseline, trees, cols, dense):
    """The exported model's log-odds for each row of `dense` (its columns are
    `cols`), walked as blocks.rs's forest walks it (left when the feature, as
    a double, is at most the threshold)."""
    column = {int(c): j for j, c in enumerate(cols)}
    rows = np.arange(dense.shape[0])
    total = np.full(dense.shape[0], baseline)
    for nodes in trees:
        at = np.zeros(dense.shape[0], dtype=np.int64)
        for _ in range(len(nodes)):
            moved = False
            for i, node in enumerate(nodes):
                if node[0] != "split":
                    continue
                here = at == i
                if not here.any():
                    continue
                x = dense[rows[here], column[node[1]]].astype(np.float64)
                at[here] = np.where(x <= node[2], node[3], node[4])
                moved = True
            if not moved:
                break
        leaves = np.array([node[1] if node[0] == "leaf" else 0.0 for node in nodes])
        total += leaves[at]
    return total


def verify(model, baseline, trees, cols, dense):
    """Fails unless the exported trees give what scikit-learn's own
    `decision_function` gives on every block (up to the leaves' rounding)."""
    ours = log_odds(baseline, trees, cols, dense)
    theirs = model.decision_function(dense)
    worst = float(np.max(np.abs(ours - theirs)))
    if worst > 1e-6:
        fail(DIFFERENT, f"the exported trees differ from scikit-learn's by {worst}")


def cross_validate(pages, keys, x, y, w, owner):
    """Each block's probability of content from trees that never saw its site
    (`x`: the blocks' features, the columns trees may split on)."""
    fold = dict(zip(keys, folds(keys, [pages[k]["host"] for k in keys])))
    block_fold = np.array([fold[k] for k in owner])
    probability = np.zeros(len(y))
    for f in range(FOLDS):
        held = block_fold == f
        print(f"fold {f + 1} of {FOLDS}: training", file=sys.stderr, flush=True)
        model = fit(x[~held], y[~held], w[~held])
        probability[held] = model.predict_proba(x[held])[:, 1]
    per_page, at = {}, 0
    for k in keys:
        n = len(pages[k]["blocks"])
        per_page[k] = probability[at:at + n]
        at += n
    return per_page


def thresholds_and_table(pages, keys, per_page):
    """Each page type's threshold, and the table of cross-validated figures."""
    thresholds = {}
    table = [
        f"cross-validated by host ({FOLDS} folds): mean word F1 of the blocks kept, per page",
        "",
        "| auto's page type | pages | every block | filtered | threshold |",
        "| --- | --- | --- | --- | --- |",
    ]
    every_all, filtered_all = 0.0, 0.0
    for page_type in sorted({pages[k]["read_as"] for k in keys}):
        group = [k for k in keys if pages[k]["read_as"] == page_type]
        every = {k: page_f1(pages[k], [1.0] * len(pages[k]["blocks"]), 0.5) for k in group}
        scores = {
            t: {k: page_f1(pages[k], per_page[k], t) for k in group} for t in CANDIDATES
        }
        mean = lambda by_page: sum(by_page[k] for k in group) / len(group)
        best = max(CANDIDATES, key=lambda t: mean(scores[t]))
        if mean(scores[best]) - mean(every) >= MIN_GAIN:
            thresholds[page_type] = best
        kept = scores[best] if page_type in thresholds else every
        shown = f"{best:.2f}" if page_type in thresholds else "off"
        table.append(
            f"| {page_type} | {len(group)} | {mean(every):.3f} | {mean(kept):.3f} | {shown} |"
        )
        every_all += sum(every.values())
        filtered_all += sum(kept.values())
    table.append(
        f"| all | {len(keys)} | {every_all / len(keys):.3f} | {filtered_all / len(keys):.3f} | |"
    )
    return thresholds, table


def render(baseline, trees, thresholds, table, pages, blocks, blocks_sha):
    """model.rs's text."""
    versions = pinned()
    lines = [
        "//! The block filter's model, written by `scripts/train_blocks.py` from",
        f"//! {pages} pages of WCXB's dev split ({blocks} blocks): gradient-boosted trees",
        "//! over blocks.rs's features. Generated: retrain, do not edit.",
        "//!",
        f"//! Trained with scikit-learn {versions['scikit-learn']}, numpy {versions['numpy']} and "
        f"scipy {versions['scipy']}",
        "//! (`scripts/requirements-train.txt`) on:",
        f"//! - blocks (the bench's `WCXB_BLOCKS` rows): sha256 {blocks_sha}",
        f"//! - ground truth (`ground-truth.json`): sha256 {GROUND_TRUTH_SHA256}",
        "//!",
    ]
    lines += [f"//! {line}".rstrip() for line in table]
    lines += [
        "",
        "use super::TreeNode;",
        "use crate::vocabulary::PageType;",
        "",
        "/// The log-odds every block starts from.",
        f"pub(super) const BASELINE: f64 = {baseline!r};",
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
    for nodes in trees:
        out = []
        for node in nodes:
            if node[0] == "leaf":
                out.append(f"TreeNode::Leaf({node[1]!r})")
            else:
                _, feature, threshold, left, right = node
                out.append(f"TreeNode::Split({feature}, {threshold!r}, {left}, {right})")
        lines.append("    &[")
        for i in range(0, len(out), 5):
            lines.append("        " + " ".join(n + "," for n in out[i:i + 5]))
        lines.append("    ],")
    lines += ["];", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("blocks", help="the rows `WCXB_BLOCKS=FILE cargo bench --bench wcxb` wrote")
    parser.add_argument("truth", help="the dev split's ground-truth.json")
    parser.add_argument("model", help="src/extract/auto/blocks/model.rs")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: exit 0 when training gives MODEL byte for byte")
    args = parser.parse_args()
    check_environment()
    truth_sha = sha256(args.truth)
    if truth_sha != GROUND_TRUTH_SHA256:
        fail(REFUSED, f"{args.truth} is not WCXB's dev split's ground truth "
             f"(sha256 {truth_sha}, expected {GROUND_TRUTH_SHA256})")
    blocks_sha = sha256(args.blocks)
    recorded = recorded_blocks(args.model)
    if recorded != blocks_sha:
        message = (f"the blocks (sha256 {blocks_sha}) are not those {args.model} was trained on "
                   f"({recorded or 'none recorded'}): the readings or the block features changed since")
        if args.check:
            fail(STALE, message + "; retrain (see this script's docstring)")
        print(f"NOTE: {message}; training a new model", file=sys.stderr)
    pages = load(args.blocks, args.truth)
    keys = list(pages)
    x, y, w, owner = matrix(pages, keys)
    cols = columns(x)
    x = csr_matrix(x[:, cols], dtype=np.float32)
    per_page = cross_validate(pages, keys, x, y, w, owner)
    thresholds, table = thresholds_and_table(pages, keys, per_page)
    print("\n".join(table))
    print("every page: training", file=sys.stderr, flush=True)
    model = fit(x, y, w)
    baseline, trees = exported(model, cols)
    verify(model, baseline, trees, cols, x.toarray())
    text = render(baseline, trees, thresholds, table, len(keys), len(y), blocks_sha)
    if args.check:
        current = open(args.model, encoding="utf-8").read()
        if current != text:
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(),
                                        args.model, "retrained", lineterm="", n=0)
            print("\n".join(list(diff)[:40]), file=sys.stderr)
            fail(DIFFERENT, f"retraining on the same blocks does not give {args.model}")
        print(f"{args.model} is what training gives, byte for byte")
        return
    with open(args.model, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {args.model}")


if __name__ == "__main__":
    main()
