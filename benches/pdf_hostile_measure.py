#!/usr/bin/env python3
"""Runs `webfetch extract` on each hostile PDF and prints one Markdown table row per
input: size, peak RSS (the process and every descendant it reaped: its PDF worker),
wall time to the answer and to the exit, CPU time in all and after the answer, and
the answer (`ok`, or the error code and details.reason). Part of
benches/pdf_hostile.sh.

    pdf_hostile_measure.py WEBFETCH_BIN CONFIG DIR < names.tsv

Each child runs with its address space capped at $WEBFETCH_BENCH_CAP_GIB GiB (default
6): a reader without bounds would otherwise take the shared machine's memory. A run
past $WEBFETCH_BENCH_WALL seconds (default 120) is killed.
"""
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_now(pid):
    """utime + stime + cutime + cstime of a live process, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / TICK
    except OSError:
        return None


def measure(binary, config, path, cap, wall_cap):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    started = time.monotonic()
    child = subprocess.Popen(
        [binary, "extract", path, "--base-url", "https://example.com/h.pdf",
         "--content-type", "application/pdf", "--config", config],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    answer = {}

    def read_stdout():
        line = child.stdout.readline()
        answer["at"] = time.monotonic()
        answer["cpu"] = cpu_now(child.pid)
        answer["line"] = line
        child.stdout.read()

    def drain_stderr():
        answer["stderr"] = child.stderr.read()[-2000:]

    readers = [threading.Thread(target=read_stdout), threading.Thread(target=drain_stderr)]
    for r in readers:
        r.start()
    timer = threading.Timer(wall_cap, lambda: os.kill(child.pid, signal.SIGKILL))
    timer.start()
    _, status, usage = os.wait4(child.pid, 0)
    ended = time.monotonic()
    timer.cancel()
    for r in readers:
        r.join()
    cpu = usage.ru_utime + usage.ru_stime
    line = answer.get("line") or b""
    if os.WIFSIGNALED(status):
        outcome = f"killed by signal {os.WTERMSIG(status)}"
        err = answer.get("stderr", b"").decode(errors="replace")
        if "memory allocation" in err:
            outcome += " (memory allocation failed)"
    else:
        try:
            body = json.loads(line)
            if "code" in body and "chunks" not in body:
                reason = body.get("details", {}).get("reason")
                outcome = body["code"] + (f" / {reason}" if reason else "")
            else:
                outcome = "ok"
        except ValueError:
            outcome = f"exit {os.WEXITSTATUS(status)}, no JSON"
    at = answer.get("at", ended) if line else ended
    before = answer.get("cpu")
    after = max(0.0, cpu - before) if before is not None and line else 0.0
    return {
        "peak": usage.ru_maxrss / 1024,
        "answer": at - started,
        "exit": ended - started,
        "cpu": cpu,
        "after": after,
        "outcome": outcome,
    }


def main():
    binary, config, directory = sys.argv[1:4]
    cap = int(float(os.environ.get("WEBFETCH_BENCH_CAP_GIB", "6")) * (1 << 30))
    wall_cap = float(os.environ.get("WEBFETCH_BENCH_WALL", "120"))
    print("| input | size | peak RSS | answer | exit | CPU | CPU after answer | answer |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for row in sys.stdin:
        name, size = row.split()
        m = measure(binary, config, os.path.join(directory, name + ".pdf"), cap, wall_cap)
        size = int(size)
        shown = f"{size / 1024:.1f} KB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MiB"
        print(f"| `{name}` | {shown} | {m['peak']:.0f} MiB | {m['answer']:.2f} s | "
              f"{m['exit']:.2f} s | {m['cpu']:.2f} s | {m['after']:.2f} s | {m['outcome']} |",
              flush=True)


if __name__ == "__main__":
    main()
