#!/usr/bin/env python3
"""The PDF quality table of benches/pdf_quality.sh, from one scorer run.

Reads the scorer's per-PDF results (`pdf_quality.py --out`), the corpus's
ground truth and the saved outputs (`--save`), and prints one Markdown table:
per producer and overall, for every extractor, word F1, 4-shingle F1, the share
of page furniture found as a whole output line ("furniture kept"; the same test
as the scorer's `furn`, split by producer), the same share counting only the
furniture strings that are not the document's title, and seconds per PDF.

    pdf_quality_table.py RESULTS.json CORPUS_DIR SAVED_DIR [INPROCESS.tsv [WORKER.tsv]]

INPROCESS.tsv (optional): `producer<TAB>seconds per PDF` lines, webfetch's
in-process times, shown as a row of their own; WORKER.tsv the same with each PDF
read in a worker process (as the front doors read them).
"""
import json
import re
import sys
from pathlib import Path

ORDER = ["chromium", "libreoffice", "pdflatex", "groff", "reportlab"]
PAGE_NUMBER = re.compile(r"Page \d+ of \d+|-?\d+-?")
IN_PROCESS = {"pymupdf"}
SHOWN = {
    "pymupdf": "PyMuPDF `get_text`",
    "webfetch-as-text": "webfetch, scored as plain text",
}
# Diagnostic extractors: shown in the F1 rows only.
F1_ONLY = {"webfetch-as-text"}
LABEL = {"pdflatex": "pdflatex (two columns)", "groff": "groff (no ToUnicode)"}


def lines_of(text):
    return {re.sub(r"\s+", " ", line).strip() for line in text.splitlines()}


def markdown_to_lines(text):
    """A Markdown heading `# T` is the line `T` for the furniture test, as the
    scorer's Markdown stripping makes it."""
    return "\n".join(re.sub(r"^\s{0,3}#{1,6}\s+", "", line) for line in text.splitlines())


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def cell(value, digits):
    return "(none)" if value is None else f"{value:.{digits}f}"


def main():
    results = json.loads(Path(sys.argv[1]).read_text("utf8"))
    truth = json.loads((Path(sys.argv[2]) / "ground-truth.json").read_text("utf8"))
    saved = Path(sys.argv[3])
    def times(index):
        found = {}
        if len(sys.argv) > index and Path(sys.argv[index]).is_file():
            for line in Path(sys.argv[index]).read_text().splitlines():
                producer, seconds = line.split("\t")
                if seconds:
                    found[producer] = float(seconds)
        return found

    inprocess = times(4)
    worker = times(5)
    names = list(results["extractors"])
    producers = sorted(
        {row["producer"] for name in names for row in results["extractors"][name]["pages"]},
        key=lambda p: (ORDER + [p]).index(p),
    )

    def non_title_kept(name, row):
        """The share of the furniture strings that are not the title, found
        as a whole output line (None: the PDF has no such furniture)."""
        gold = truth[row["key"]]
        title = re.sub(r"\s+", " ", gold.get("title") or "").strip()
        furniture = [re.sub(r"\s+", " ", f).strip() for f in gold.get("furniture") or []]
        # The running title is the title cut at a word boundary; page numbers stay.
        furniture = [f for f in furniture if PAGE_NUMBER.fullmatch(f) or not title.startswith(f)]
        if not furniture:
            return None
        path = saved / name / f"{row['key']}.txt"
        text = path.read_text("utf8") if path.is_file() else ""
        found = lines_of(markdown_to_lines(text))
        return sum(1 for f in furniture if f in found) / len(furniture)

    header = ["extractor", "metric"] + [LABEL.get(p, p) for p in producers] + ["all"]
    out = ["| " + " | ".join(header) + " |", "| --- | --- |" + " ---: |" * (len(producers) + 1)]

    def row(name, metric, values, digits):
        out.append(f"| {name} | {metric} | " + " | ".join(cell(v, digits) for v in values) + " |")

    metrics = [
        ("word F1", lambda n, r: r["wf"], 3),
        ("4-shingle F1", lambda n, r: r["sf"], 3),
        ("furniture kept", lambda n, r: r["furn"], 2),
        ("furniture kept, title aside", non_title_kept, 2),
        ("s/PDF (process per PDF)", lambda n, r: r["seconds"], 3),
    ]
    for metric, value, digits in metrics:
        for name in names:
            if name in F1_ONLY and "F1" not in metric:
                continue
            rows = results["extractors"][name]["pages"]
            label = metric
            if name in IN_PROCESS:
                label = metric.replace("process per PDF", "in-process")
            values = [mean(value(name, r) for r in rows if r["producer"] == p) for p in producers]
            values.append(mean(value(name, r) for r in rows))
            row(SHOWN.get(name, name), label, values, digits)
        if metric == "furniture kept":
            # The floor: the ground truth's own text keeps the running titles
            # that are the title (it is typeset as the first line).
            def gold_kept(r):
                gold = truth[r["key"]]
                furniture = gold.get("furniture") or []
                if not furniture:
                    return None
                found = lines_of(gold["text"])
                return sum(1 for f in furniture if re.sub(r"\s+", " ", f).strip() in found) / len(
                    furniture
                )

            rows = results["extractors"]["webfetch"]["pages"]
            values = [mean(gold_kept(r) for r in rows if r["producer"] == p) for p in producers]
            values.append(mean(gold_kept(r) for r in rows))
            row("(ground truth)", metric, values, 2)
        if metric.startswith("s/PDF") and inprocess:
            values = [inprocess.get(p) for p in producers] + [inprocess.get("all")]
            row("webfetch", "s/PDF (in-process)", values, 3)
        if metric.startswith("s/PDF") and worker:
            values = [worker.get(p) for p in producers] + [worker.get("all")]
            row("webfetch", "s/PDF (in-process, a PDF worker per PDF)", values, 3)
    failures = {
        name: sum(1 for r in results["extractors"][name]["pages"] if r["error"]) for name in names
    }
    print("\n".join(out))
    print("\nfailures: " + ", ".join(f"{name} {n}" for name, n in failures.items()))


if __name__ == "__main__":
    main()
