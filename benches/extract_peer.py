"""trafilatura's extraction rate on the same files and clock as
`extract_stages rate`: MB of HTML per second of this thread's CPU time,
best of five rounds over every file (decoding from bytes included, as
trafilatura does it). Used by benches/extract_peer.sh.

    python3 benches/extract_peer.py FILE...
"""

import sys
import time

import trafilatura


def main() -> None:
    files = [open(path, "rb").read() for path in sys.argv[1:]]
    total = sum(len(f) for f in files)
    for label, options in [
        ("plain text", {}),
        ("Markdown with links", {"output_format": "markdown", "include_links": True}),
    ]:
        best = None
        for _ in range(5):
            start = time.thread_time_ns()
            for html in files:
                trafilatura.extract(html, **options)
            spent = time.thread_time_ns() - start
            best = spent if best is None else min(best, spent)
        rate = total * 1e3 / max(best, 1)
        print(f"trafilatura {trafilatura.__version__} ({label}): {rate:.1f} MB/s "
              f"over {len(files)} files, {total} bytes")


if __name__ == "__main__":
    main()
