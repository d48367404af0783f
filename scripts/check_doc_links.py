#!/usr/bin/env python3
"""Check the links of the repository's documentation, offline.

For README.md, ARCHITECTURE.md, docs/*.md and the other hand-written Markdown pages:
every relative link must name a file or directory that exists, every `#anchor` a heading
of its target page (GitHub's slugs) or an `<a id>`, and no page may send a reader outside the
repository (`../shared/`, `/work/`). External http(s) links are not fetched.

    python3 scripts/check_doc_links.py     # exit 1 and one line per broken link

Python 3 standard library only.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", "ARCHITECTURE.md", "python/README.md", "fuzz/README.md",
         "examples/mcp-clients/README.md"]
PAGES_DIRS = ["docs"]
LINK_RE = re.compile(r"(?<!\!)\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)\)")
OUTSIDE_RE = re.compile(r"\.\./shared/|(?<![\w.])/work/")


def pages():
    found = [p for p in PAGES if os.path.exists(os.path.join(ROOT, p))]
    for folder in PAGES_DIRS:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".md"):
                found.append(os.path.join(folder, name))
    return found


def slug(heading):
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            result.update(re.findall(r'<a (?:id|name)="([^"]+)"', line))
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                result.add(base if n == 0 else f"{base}-{n}")
    return result


def code_spans_removed(line):
    return re.sub(r"`[^`]*`", "", line)


def check(page):
    errors = []
    path = os.path.join(ROOT, page)
    in_code = False
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if OUTSIDE_RE.search(line):
            errors.append(f"{page}:{number}: points outside the repository: {line.strip()[:80]}")
        if in_code:
            continue
        for target in LINK_RE.findall(code_spans_removed(line)):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            file_part, _, anchor = target.partition("#")
            resolved = path if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(path), file_part))
            if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
                errors.append(f"{page}:{number}: {target}: outside the repository")
                continue
            if not os.path.exists(resolved):
                errors.append(f"{page}:{number}: {target}: no such file")
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                errors.append(f"{page}:{number}: {target}: no heading #{anchor}")
    return errors


def main():
    errors = []
    checked = pages()
    for page in checked:
        errors.extend(check(page))
    for error in errors:
        print(error)
    print(f"{len(checked)} pages checked, {len(errors)} broken links", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
