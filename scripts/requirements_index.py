#!/usr/bin/env python3
"""Regenerate docs/requirements.md, the index of the SRD requirement ids the code cites.

The code cites requirement ids of the WebFetch SRD (`FR-WF-07e`, `T-WF-ROB-03`,
`IT-WF-HTTP-05`, `NFR-WF-SEC-06`, ...) in comments and in test names
(`fn t_wf_rob_03_...`, `fn fr_wf_11_...`). This script finds every citation in
src/, tests/, benches/, fuzz/ and python/ and writes, per id: its summary, the
source files that cite it, and the tests that cite it (directly, or through a
verification id of SRD section 6 that checks it).

The summaries and the catalog of SRD ids (id, section, the ids a test id
verifies) live in docs/requirements-summaries.tsv, kept by hand. The SRD itself
is not needed: `--srd FILE` only checks the catalog against it, and
`--srd FILE --emit-catalog` prints an updated catalog (summaries kept).

Usage:
    python3 scripts/requirements_index.py            # rewrite docs/requirements.md
    python3 scripts/requirements_index.py --check    # exit 1 if the doc is stale
    python3 scripts/requirements_index.py --srd SRD.md [--emit-catalog]

Python 3 standard library only.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join("docs", "requirements.md")
CATALOG = os.path.join("docs", "requirements-summaries.tsv")
SCAN_DIRS = ("src", "tests", "benches", "fuzz", "python")
SCAN_EXTS = (".rs", ".py", ".sh")
SKIP_DIRS = {"target", "corpus", "fixtures", "golden", "artifacts", "seeds",
             "__pycache__", ".venv", "node_modules"}
NOT_IN_SRD = "-"

# A full id: FR-WF-07e, FR-WF-ROBOTS-SCOPE-01, FR-WF-04-PREC, FR-ERR-JSON-02, T-WF-INFRA-01.
ID_RE = re.compile(r"\b(?:FR|NFR|T|IT)-[A-Z]+(?:-[A-Z0-9][A-Za-z0-9]*)+")
# What may follow a full id as an abbreviated id: "FR-WF-13e, 13f", "FR-WF-OUT-02, 02a",
# "FR-WF-03a, OUT-01", "FR-WF-07a1/07a2", "FR-WF-CCH-KEY-01..02", "FR-WF-05e1, 06-LITERAL".
CONT_RE = re.compile(
    r"(\s*(?:,|/|;)\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+|\s*(?:\.\.|–)\s*)"
    r"((?:[A-Z]+-)*[0-9]{2}[a-z]?[0-9]?(?:-[A-Z]+)?)(?![A-Za-z0-9-])")
FULL_PREFIX_RE = re.compile(r"(?:FR|NFR|T|IT)-")
# A family id written without its "FR-WF-": "(EXT-EMPTY-02)", "CHARSET-02". Counted only
# when FR-WF- plus it is a known id.
BARE_RE = re.compile(r"(?<![A-Za-z0-9-])(?:[A-Z][A-Z0-9]*-)+[0-9]{2}[a-z]?[0-9]?(?:-[A-Z]+)?(?![A-Za-z0-9-])")
NAME_ID_RE = re.compile(r"(?:^|_)((?:fr|nfr|t|it)_wf_[a-z0-9_]+)")
COMPONENT_RE = re.compile(r"^(\d{2})([a-z]?)(\d?)$")


# ---------------------------------------------------------------------------
# The catalog

class Catalog:
    def __init__(self):
        self.sections = {}   # key -> title
        self.ids = {}        # id -> (section, summary, verifies list)
        self.order = []      # file order, for --emit-catalog
        self.header = []     # leading comment lines

    @classmethod
    def load(cls, path):
        cat = cls()
        if not os.path.exists(path):
            return cat
        with open(path, encoding="utf-8") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    if not cat.ids and not cat.sections:
                        cat.header.append(line)
                    continue
                cols = line.split("\t")
                if cols[0] == "section":
                    if len(cols) < 3:
                        warn(f"{path}:{lineno}: a section row needs a key and a title")
                        continue
                    cat.sections[cols[1]] = cols[2]
                    continue
                cols += [""] * (4 - len(cols))
                rid, section, summary, verifies = cols[:4]
                if rid in cat.ids:
                    warn(f"{path}:{lineno}: {rid} is listed twice")
                cat.ids[rid] = (section, summary.strip(), verifies.split())
                cat.order.append(rid)
        return cat

    def known(self):
        return set(self.ids)


# ---------------------------------------------------------------------------
# Citations

class Ref:
    __slots__ = ("rid", "path", "line", "kind", "func", "by_name")

    def __init__(self, rid, path, line, kind, func, by_name):
        self.rid, self.path, self.line = rid, path, line
        self.kind, self.func, self.by_name = kind, func, by_name


def warn(msg):
    print(f"requirements_index: warning: {msg}", file=sys.stderr)


def split_id(rid):
    return rid.split("-")


def resolve(candidates, known):
    """The first candidate that is a known id, else the first candidate (unknown)."""
    for c in candidates:
        if c in known:
            return c, True
    return candidates[0], False


def continuation_candidates(base, cont):
    """Full ids an abbreviation `cont` written after `base` may stand for, best first."""
    b, c = split_id(base), split_id(cont)
    out = []
    if COMPONENT_RE.match(c[0]):
        out.append("-".join(b[:-1] + c))        # FR-WF-OUT-01, 02 -> FR-WF-OUT-02
        out.append("-".join(b[:2] + c))         # FR-WF-ROBOTS-UA-01, 08b -> FR-WF-08b
        out.append("-".join(["FR", "WF"] + c))  # T-WF-CHK-01, 15a1 -> FR-WF-15a1
    else:
        for i in range(2, len(b)):
            if b[i] == c[0]:                    # FR-WF-CCH-READ-01, READ-02
                out.append("-".join(b[:i] + c))
        for k in range(len(b) - 1, 1, -1):      # FR-WF-ROBOTS-FETCH-01, UA-02
            out.append("-".join(b[:k] + c))     # FR-WF-03a, OUT-01
        out.append("-".join(["FR", "WF"] + c))
    seen, uniq = set(), []
    for x in out:
        if x not in seen:
            seen.add(x)
            uniq.append(x)
    return uniq


def expand_range(start, end):
    """'01'..'04' -> 01 02 03 04; '10f'..'10h' -> 10f 10g 10h; else the two ends."""
    ms, me = COMPONENT_RE.match(start), COMPONENT_RE.match(end)
    if not ms or not me:
        return [end]
    if not ms.group(3) and not me.group(3):
        if ms.group(2) == "" and me.group(2) == "":
            a, z = int(ms.group(1)), int(me.group(1))
            if a < z <= a + 40:
                return ["%02d" % n for n in range(a + 1, z + 1)]
        elif ms.group(1) == me.group(1) and ms.group(2) and me.group(2):
            a, z = ord(ms.group(2)), ord(me.group(2))
            if a < z <= a + 26:
                return [ms.group(1) + chr(n) for n in range(a + 1, z + 1)]
    return [end]


def ids_in_line(text, known, where):
    """Every id a line cites, abbreviations and ranges expanded."""
    found = []
    starts = [(m, False) for m in ID_RE.finditer(text)]
    starts += [(m, True) for m in BARE_RE.finditer(text)
               if not FULL_PREFIX_RE.match(m.group(0)) and "FR-WF-" + m.group(0) in known]
    starts.sort(key=lambda x: x[0].start())
    consumed = -1
    for m, bare in starts:
        if m.start() < consumed:
            continue
        rid = "FR-WF-" + m.group(0) if bare else m.group(0)
        if rid not in known:                    # "FR-WF-07e-style": trim to a known id
            parts = split_id(rid)
            for k in range(len(parts) - 1, 2, -1):
                if "-".join(parts[:k]) in known:
                    rid = "-".join(parts[:k])
                    break
        found.append(rid)
        prev, pos = rid, m.end()
        while True:
            c = CONT_RE.match(text, pos)
            if not c or FULL_PREFIX_RE.match(text, c.start(2)):
                break
            sep, cont = c.group(1).strip(), c.group(2)
            if sep in ("..", "–"):
                last = split_id(prev)[-1]
                for comp in expand_range(last, split_id(cont)[-1] if "-" in cont and
                                         COMPONENT_RE.match(split_id(cont)[-1]) else cont):
                    rid2, ok = resolve(continuation_candidates(prev, comp), known)
                    found.append(rid2)
                    if not ok:
                        warn(f"{where}: range '{prev}{sep}{cont}' gives {rid2}, "
                             "which the catalog does not know")
                    prev = rid2
            else:
                rid2, ok = resolve(continuation_candidates(prev, cont), known)
                if not ok:
                    warn(f"{where}: '{prev}{c.group(1)}{cont}' read as {rid2}, "
                         "which the catalog does not know")
                found.append(rid2)
                prev = rid2
            pos = c.end()
        consumed = pos
    return found


def name_forms(known):
    """(underscore form, id) pairs a function name may start with, longest first.

    Full forms (`fr_wf_robots_size_01`) may appear anywhere at a `_` boundary; short forms
    drop `fr_wf_` from a family id (`robots_size_01`, `chk_list_03`) and count only at the
    start of the name (after `test_` in Python).
    """
    full, short = [], []
    for rid in known:
        us = rid.lower().replace("-", "_")
        full.append((us, rid))
        parts = split_id(rid)
        if rid.startswith("FR-WF-") and len(parts) >= 4 and parts[2].isalpha() \
                and COMPONENT_RE.match(parts[-1]):
            short.append(("_".join(p.lower() for p in parts[2:]), rid))
    return (sorted(full, key=lambda x: -len(x[0])), sorted(short, key=lambda x: -len(x[0])))


def ids_in_name(name, forms, known, where):
    """Ids a function name carries: fr_wf_11_browser_... -> FR-WF-11,
    chk_head_01_03_heading_text -> FR-WF-CHK-HEAD-01 and FR-WF-CHK-HEAD-03."""
    full, short = forms
    low = name.lower()
    out = []

    def more(rid, rest):
        # "_01_03_..." after a family id: further ids of the same family
        while True:
            m = re.match(r"_(\d{2}[a-z]?\d?)(?=_|$)", rest)
            if not m:
                return
            nxt = "-".join(split_id(rid)[:-1] + [m.group(1)])
            if nxt not in known:
                return
            out.append(nxt)
            rest = rest[m.end():]

    for m in NAME_ID_RE.finditer(low):
        tail = m.group(1)
        best = next(((us, rid) for us, rid in full
                     if tail == us or tail.startswith(us + "_")), None)
        if best:
            out.append(best[1])
            more(best[1], tail[len(best[0]):])
            continue
        warn(f"{where}: function {name} starts like an id but names no known id")
    if not out:
        head = low[5:] if low.startswith("test_") else low
        best = next(((us, rid) for us, rid in short
                     if head == us or head.startswith(us + "_")), None)
        if best:
            out.append(best[1])
            more(best[1], head[len(best[0]):])
    return out


# ---------------------------------------------------------------------------
# Where a line is: the function around it, test or not

RUST_FN_RE = re.compile(
    r"^(\s*)(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
    r"(?:extern\s+\"C\"\s+)?fn\s+(\w+)")
RUST_TEST_ATTR_RE = re.compile(r"^\s*#\[(?:[\w:]+::)?test\b|^\s*#\[rstest\b|^\s*#\[[\w:]*test\(")
RUST_MOD_RE = re.compile(r"^(\s*)(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*\{")
RUST_PROPTEST_RE = re.compile(r"^(\s*)proptest!\s*\{")
CFG_TEST_RE = re.compile(r"#\[cfg\((?:(?:all|any)\((?:[^()]|\([^()]*\))*?)?(?<!not\()\btest\b")
PY_DEF_RE = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def preceding_block(lines, i):
    """Index of the first line of the attribute/comment block just above line i."""
    j = i
    while j > 0:
        s = lines[j - 1].strip()
        if s.startswith(("///", "//", "#[", "#![")) and not s.startswith("//!") or \
                (s.startswith(("#", "@")) and lines[j - 1].lstrip().startswith(("#", "@"))
                 and not s.startswith("#!")):
            j -= 1
        else:
            break
    return j


def rust_body_end(lines, i, ind):
    """Last line of the item starting at line i (indent ind); i for declarations."""
    depth = 0
    opened = False
    for k in range(i, len(lines)):
        code = lines[k].split("//")[0]
        if not opened:
            if "{" in code:
                opened = True
                depth = code.count("{") - code.count("}")
                if depth <= 0:
                    return k
            elif code.rstrip().endswith(";"):
                return k
            continue
        if indent_of(lines[k]) == ind and lines[k].strip().startswith("}"):
            return k
    return len(lines) - 1


def rust_scopes(lines):
    """Per line: (innermost function name or None, in a test function, in test code)."""
    n = len(lines)
    fn_at = [None] * n
    test_fn = [False] * n
    test_code = [False] * n
    for i, line in enumerate(lines):
        m = RUST_MOD_RE.match(line)
        if m:
            start = preceding_block(lines, i)
            if any(CFG_TEST_RE.search(lines[k]) for k in range(start, i)):
                end = rust_body_end(lines, i, len(m.group(1)))
                for k in range(start, end + 1):
                    test_code[k] = True
        m = RUST_PROPTEST_RE.match(line)
        if m:
            end = rust_body_end(lines, i, len(m.group(1)))
            for k in range(i, end + 1):
                test_fn[k] = test_fn[k] or "proptest"
    # functions: outer first, so inner functions overwrite
    for i, line in enumerate(lines):
        m = RUST_FN_RE.match(line)
        if not m:
            continue
        ind, name = len(m.group(1)), m.group(2)
        start = preceding_block(lines, i)
        end = rust_body_end(lines, i, ind)
        is_test = any(RUST_TEST_ATTR_RE.match(lines[k]) for k in range(start, i)) \
            or test_fn[i] == "proptest"
        for k in range(start, end + 1):
            if fn_at[k] is None or not test_fn[k] or is_test:
                fn_at[k] = (name, is_test, i)
    out = []
    for k in range(n):
        f = fn_at[k]
        out.append((f[0] if f else None, bool(f and f[1]), test_code[k]))
    return out


def python_scopes(lines, is_test_file):
    n = len(lines)
    fn_at = [None] * n
    for i, line in enumerate(lines):
        m = PY_DEF_RE.match(line)
        if not m:
            continue
        ind, name = len(m.group(1)), m.group(2)
        start = preceding_block(lines, i)
        end = i
        for k in range(i + 1, n):
            if lines[k].strip() and indent_of(lines[k]) <= ind:
                break
            end = k
        for k in range(start, end + 1):
            fn_at[k] = name
    return [(f, bool(is_test_file and f and f.startswith("test_")), False) for f in fn_at]


def kind_of(rel, in_test_code):
    top = rel.split("/", 1)[0]
    if rel.startswith("python/tests/") or top == "tests":
        return "test"
    if top == "benches":
        return "bench"
    if top == "fuzz":
        return "fuzz"
    return "test" if in_test_code else "impl"


def scan(root, known):
    forms = name_forms(known)
    refs = []
    for top in SCAN_DIRS:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for fn in sorted(filenames):
                if not fn.endswith(SCAN_EXTS):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                if fn.endswith(".rs"):
                    scopes = rust_scopes(lines)
                    def_re = RUST_FN_RE
                elif fn.endswith(".py"):
                    scopes = python_scopes(lines, rel.startswith("python/tests/"))
                    def_re = PY_DEF_RE
                else:
                    scopes = [(None, False, False)] * len(lines)
                    def_re = None
                for i, text in enumerate(lines):
                    func, is_test_fn, in_test_code = scopes[i]
                    kind = kind_of(rel, in_test_code)
                    where = f"{rel}:{i + 1}"
                    tfunc = func if is_test_fn else None
                    for rid in ids_in_line(text, known, where):
                        refs.append(Ref(rid, rel, i + 1, kind, tfunc, False))
                    if def_re:
                        m = def_re.match(text)
                        if m:
                            for rid in ids_in_name(m.group(2), forms, known, where):
                                refs.append(Ref(rid, rel, i + 1, kind, tfunc, True))
    return refs


# ---------------------------------------------------------------------------
# The SRD (optional)

SRD_DEF_RES = (re.compile(r"^\*\*((?:FR|NFR|T|IT)-[A-Z]+(?:-[A-Za-z0-9]+)*)(?:\s*\(|:)"),
               re.compile(r"^\|\s*((?:FR|NFR|T|IT)-[A-Z]+(?:-[A-Za-z0-9]+)*)\s*\|"))
SRD_HEAD_RE = re.compile(r"^(#{2,4})\s+(?:Appendix\s+)?([0-9A-G](?:\.[0-9a-z]+)*)[.:]?\s+(.*)$")


def parse_srd(path):
    """{id: (section, [verified ids])} and {section: heading} from the SRD's definitions."""
    defs, heads, section = {}, {}, ""
    with open(path, encoding="utf-8") as f:
        in_code = False
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            h = SRD_HEAD_RE.match(line)
            if h:
                section = h.group(2)
                heads[section] = h.group(3).strip()
                continue
            for rx in SRD_DEF_RES:
                m = rx.match(line)
                if m and m.group(1) not in defs:
                    verifies = []
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    if rx is SRD_DEF_RES[1] and m.group(1).startswith(("T-", "IT-")) and len(cells) >= 3:
                        verifies = ID_RE.findall(cells[-1])
                    defs[m.group(1)] = (section, verifies)
    return defs, heads


# ---------------------------------------------------------------------------
# Output

def natural_key(s):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", s)]


def section_key(s):
    if s == NOT_IN_SRD:
        return [(2, 0, "")]
    return [(0 if s[:1].isdigit() else 1, 0, "")] + natural_key(s)


def anchor(rid):
    return rid.lower()


def link(rel):
    return f"[{rel}](../{rel})"


def md_cell(text):
    return text.replace("|", "\\|")


def tests_cell(test_refs, max_fns=6):
    by_file = defaultdict(set)
    for r in test_refs:
        by_file[r.path]
        if r.func:
            by_file[r.path].add(r.func)
    parts = []
    for path in sorted(by_file, key=natural_key):
        fns = sorted(by_file[path])
        label = link(path)
        if fns:
            shown = ", ".join(f"`{f}`" for f in fns[:max_fns])
            if len(fns) > max_fns:
                shown += f", +{len(fns) - max_fns} more"
            label += ": " + shown
        parts.append(label)
    return "<br>".join(parts)


def build(cat, refs, srd_defs=None):
    by_id = defaultdict(list)
    for r in refs:
        by_id[r.rid].append(r)
    cited = sorted(by_id, key=natural_key)

    # test ids (section 6) that verify a requirement and are themselves tested
    verified_by = defaultdict(set)
    for rid, (section, _, verifies) in cat.ids.items():
        for v in verifies:
            verified_by[v].add(rid)

    def direct_tests(rid):
        return [r for r in by_id.get(rid, []) if r.kind in ("test",)]

    def via(rid):
        return sorted((t for t in verified_by.get(rid, ()) if direct_tests(t)), key=natural_key)

    missing = [rid for rid in cited if rid not in cat.ids]
    no_summary = [rid for rid in cited if rid in cat.ids and not cat.ids[rid][1]]
    for rid in missing:
        warn(f"{rid} is cited ({by_id[rid][0].path}:{by_id[rid][0].line}) but not in {CATALOG}")
    for rid in no_summary:
        warn(f"{rid} is cited but has no summary in {CATALOG}")

    def section_of(rid):
        return cat.ids[rid][0] if rid in cat.ids else NOT_IN_SRD

    with_direct = [r for r in cited if direct_tests(r)]
    with_any = [r for r in cited if direct_tests(r) or via(r)]
    without = [r for r in cited if r not in with_any]
    tests_only = [r for r in cited if all(x.kind == "test" for x in by_id[r])
                  and not r.startswith(("T-", "IT-"))]
    undefined = [r for r in cited if section_of(r) == NOT_IN_SRD]
    srd_ids = [r for r, v in cat.ids.items() if v[0] != NOT_IN_SRD]
    never = sorted((r for r in srd_ids if r not in by_id), key=natural_key)
    n_refs = len(refs)

    out = []
    w = out.append
    w("# Requirements index")
    w("")
    w("<!-- Generated by scripts/requirements_index.py; do not edit by hand. Summaries and the")
    w("     catalog of SRD ids live in docs/requirements-summaries.tsv. -->")
    w("")
    w("webfetch implements the WebFetch SRD v2.4. The code cites its requirement ids in comments")
    w("(`FR-WF-07e`) and in test names (`fn t_wf_rob_03_...`). This page resolves each cited id: what")
    w("it asks for, in our own words (the SRD is the authority), the source files that cite it, and")
    w("the tests that cite it. A requirement is also checked by the tests of the SRD section 6 test")
    w("ids that verify it (shown as \"via\"). Abbreviated citations are expanded: `FR-WF-13e, 13f`")
    w("cites FR-WF-13f, `T-WF-CHK-01..04` cites T-WF-CHK-02 and 03.")
    w("")
    w("\"Implemented in\" lists the source files that cite the id; \"Tests\" the test files and")
    w("test functions that cite it (in a comment or in the function name), then benches and fuzz")
    w("targets (\"also\"). The lists come from the code, not from the SRD: an id cited nowhere")
    w("in tests may still be checked by a test that does not name it.")
    w("")
    w("To refresh after changing the code: `python3 scripts/requirements_index.py` (it warns about a")
    w("cited id that has no summary; add one to `docs/requirements-summaries.tsv`).")
    w("")
    w(f"- **{len(cited)}** ids cited, in **{n_refs}** references")
    w(f"- **{len(with_any)}** with a test ({len(with_direct)} cited by a test directly, "
      f"{len(with_any) - len(with_direct)} only through a section 6 test id), "
      f"**{len(without)}** without")
    w(f"- **{len(undefined)}** cited ids the SRD does not define "
      "([below](#cited-ids-the-srd-does-not-define))")
    w(f"- **{len(never)}** SRD ids never cited ([below](#srd-ids-the-code-never-cites))")
    w("")

    sections = defaultdict(list)
    for rid in cited:
        if section_of(rid) != NOT_IN_SRD:
            sections[section_of(rid)].append(rid)
    order = sorted(sections, key=section_key)

    def title(s):
        t = cat.sections.get(s, "")
        pre = "Appendix " if not s[:1].isdigit() else ""
        return f"{pre}{s} {t}".strip()

    w("## Sections")
    w("")
    for s in order:
        t = title(s)
        w(f"- [{t}](#{slug(t)}) ({len(sections[s])})")
    w("")

    def table(ids):
        w("| Id | Summary | Implemented in | Tests |")
        w("| --- | --- | --- | --- |")
        for rid in ids:
            rs = by_id[rid]
            summary = cat.ids[rid][1] if rid in cat.ids else ""
            impl = sorted({r.path for r in rs if r.kind == "impl"}, key=natural_key)
            tcell = tests_cell(direct_tests(rid))
            other = sorted({r.path for r in rs if r.kind in ("bench", "fuzz")}, key=natural_key)
            if other:
                tcell = "<br>".join(x for x in (tcell, "also " + ", ".join(link(p) for p in other)) if x)
            v = via(rid)
            if v:
                tcell = "<br>".join(x for x in (tcell, "via " + ", ".join(
                    f"[{t}](#{anchor(t)})" for t in v)) if x)
            verifies = cat.ids[rid][2] if rid in cat.ids else []
            if verifies:
                summary = (summary + " " if summary else "") + "(checks " + ", ".join(
                    f"[{x}](#{anchor(x)})" if x in by_id else x for x in verifies) + ")"
            w(f"| <a id=\"{anchor(rid)}\"></a>{rid} | {md_cell(summary) or '*(no summary)*'} | "
              f"{', '.join(link(p) for p in impl) or '—'} | {tcell or '**none**'} |")
        w("")

    for s in order:
        w(f"## {title(s)}")
        w("")
        table(sections[s])

    w("## Cited ids the SRD does not define")
    w("")
    if undefined:
        w("These ids appear in the code but are not requirement ids of the SRD: a typo, a family")
        w("name, or an id of another document. The summary says which.")
        w("")
        table(undefined)
    else:
        w("None.")
        w("")

    w("## SRD ids the code never cites")
    w("")
    w("Coverage gaps, or rules implemented without a citation. Grouped by SRD section.")
    w("")
    groups = defaultdict(list)
    for rid in never:
        groups[cat.ids[rid][0]].append(rid)
    for s in sorted(groups, key=section_key):
        w(f"- **{title(s)}**: " + ", ".join(groups[s]))
    w("")

    stats = dict(cited=len(cited), refs=n_refs, with_tests=len(with_any),
                 with_direct=len(with_direct), without=len(without), undefined=undefined,
                 never=len(never), tests_only=tests_only, without_ids=without)
    return "\n".join(out), stats


def slug(text):
    s = text.lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


# ---------------------------------------------------------------------------

def check_against_srd(cat, srd_path):
    defs, heads = parse_srd(srd_path)
    problems = 0
    for rid, (section, verifies) in sorted(defs.items(), key=lambda x: natural_key(x[0])):
        if rid not in cat.ids:
            warn(f"the SRD defines {rid} (section {section}); the catalog lacks it")
            problems += 1
        else:
            s, _, v = cat.ids[rid]
            if s != section:
                warn(f"{rid}: the catalog says section {s}, the SRD {section}")
                problems += 1
            if sorted(v) != sorted(verifies):
                warn(f"{rid}: the catalog says it checks {v}, the SRD {verifies}")
                problems += 1
    for rid, (s, _, _) in cat.ids.items():
        if s != NOT_IN_SRD and rid not in defs:
            warn(f"{rid}: in the catalog as section {s}, but the SRD does not define it")
            problems += 1
        if s == NOT_IN_SRD and rid in defs:
            warn(f"{rid}: marked not in the SRD, but the SRD defines it")
            problems += 1
    for s in {v[0] for v in defs.values()}:
        if s not in cat.sections:
            warn(f"section {s} ({heads.get(s, '')}) has no title in the catalog")
            problems += 1
    return defs, heads, problems


def emit_catalog(cat, defs, heads, cited):
    lines = list(cat.header) or [
        "# Requirement ids of the WebFetch SRD v2.4 and our one-line summaries.",
        "# Read by scripts/requirements_index.py. Tab-separated.",
        "#   section<TAB>KEY<TAB>TITLE",
        "#   ID<TAB>SECTION<TAB>SUMMARY<TAB>VERIFIES (section '-' = not an SRD id)",
    ]
    secs = set(cat.sections) | {v[0] for v in defs.values()}
    for s in sorted(secs, key=section_key):
        lines.append(f"section\t{s}\t{cat.sections.get(s) or heads.get(s, '')}")
    ids = set(cat.ids) | set(defs) | set(cited)
    for rid in sorted(ids, key=lambda r: (section_key(
            defs[r][0] if r in defs else cat.ids.get(r, (NOT_IN_SRD,))[0]), natural_key(r))):
        section = defs[rid][0] if rid in defs else NOT_IN_SRD
        summary = cat.ids[rid][1] if rid in cat.ids else ""
        verifies = defs[rid][1] if rid in defs else (cat.ids[rid][2] if rid in cat.ids else [])
        lines.append("\t".join([rid, section, summary, " ".join(verifies)]).rstrip("\t"))
    sys.stdout.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srd", metavar="FILE", help="check the catalog against the SRD text")
    ap.add_argument("--emit-catalog", action="store_true",
                    help="with --srd: print the catalog updated from the SRD (summaries kept)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if docs/requirements.md is out of date")
    ap.add_argument("--stats", action="store_true", help="print counts and odd ids")
    args = ap.parse_args()

    cat = Catalog.load(os.path.join(ROOT, CATALOG))
    defs = heads = None
    if args.srd:
        defs, heads, problems = check_against_srd(cat, args.srd)
        if not args.emit_catalog:
            print(f"requirements_index: {problems} catalog problem(s) against {args.srd}",
                  file=sys.stderr)
    known = cat.known() | (set(defs) if defs else set())
    refs = scan(ROOT, known)
    if args.emit_catalog:
        if not defs:
            ap.error("--emit-catalog needs --srd")
        emit_catalog(cat, defs, heads, {r.rid for r in refs})
        return 0
    text, stats = build(cat, refs)
    path = os.path.join(ROOT, DOC)
    if args.check:
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text + "\n":
            print(f"requirements_index: {DOC} is out of date; run scripts/requirements_index.py",
                  file=sys.stderr)
            return 1
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    if args.stats:
        for k, v in stats.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
