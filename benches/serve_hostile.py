#!/usr/bin/env python3
"""The worst hostile inputs through one `webfetch serve`, while its health check
is polled: how long `/healthz` took at most while each input was read, and the
server's peak resident memory (its own `VmHWM`; PDF workers are processes of
their own, capped by their own limits).

The inputs are the hostile PDFs of `examples/pdf_hostile.rs` (the tests' own
generators) and the hostile JSON, feed and Markdown of `formats_hostile.py`,
served by a loopback origin here with their media types; the server reads each
with `timeout_seconds = 5` through `GET /v1/fetch`, one at a time, while another
thread asks `/healthz` every 50 ms.

    cargo build --release --locked --bin webfetch --example pdf_hostile
    python3 benches/serve_hostile.py target/release/webfetch target/release/examples/pdf_hostile

Targets: `/healthz` within 0.5 s throughout, the server's peak RSS <= 512 MiB.
"""

import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats_hostile  # noqa: E402  (the same generators as the extract bench)

TYPES = {".pdf": "application/pdf", ".json": "application/json",
         ".rss": "application/rss+xml", ".md": "text/markdown"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def origin(directory):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            name = self.path.lstrip("/")
            path = os.path.join(directory, name)
            if name == "robots.txt" or not os.path.isfile(path):
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            body = open(path, "rb").read()
            self.send_response(200)
            self.send_header("content-type", TYPES[os.path.splitext(name)[1]])
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def vm_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def get(port, path, timeout=60):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, generator = sys.argv[1:]
    with tempfile.TemporaryDirectory() as work:
        inputs = os.path.join(work, "in")
        names = subprocess.run([generator, inputs], check=True, capture_output=True,
                               text=True).stdout.split()[::2]
        files = [(f"PDF: `{name}`", f"{name}.pdf") for name in names]
        for i, (label, content_type, make) in enumerate(formats_hostile.INPUTS):
            ext = {"application/json": ".json", "application/rss+xml": ".rss"}.get(
                content_type, ".md")
            with open(os.path.join(inputs, f"format-{i}{ext}"), "wb") as f:
                f.write(make())
            files.append((label, f"format-{i}{ext}"))
        site = origin(inputs)
        listen = free_port()
        config = os.path.join(work, "config.toml")
        with open(config, "w") as f:
            f.write("[tools.webfetch]\ntimeout_seconds = 5\n"
                    f"cache_dir = \"{work}/cache\"\n"
                    "[tools.webfetch.security]\nallow_insecure_overrides = true\n"
                    f"block_loopback = false\nallowed_ports = [{site}]\n"
                    "[tools.webfetch.browser]\nenabled = false\n")
        server = subprocess.Popen([binary, "serve", "--config", config, "--listen",
                                   f"127.0.0.1:{listen}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    get(listen, "/healthz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            print(f"`webfetch serve`, timeout_seconds = 5, {os.cpu_count()} cores, "
                  f"load {os.getloadavg()[0]:.1f} at start\n")
            print("| input | answer (s) | status | slowest /healthz (ms) | server peak RSS so far (MiB) |")
            print("| --- | ---: | ---: | ---: | ---: |")
            for label, name in files:
                slowest = [0.0]
                done = threading.Event()

                def poll():
                    while not done.is_set():
                        started = time.monotonic()
                        status, _ = get(listen, "/healthz", timeout=10)
                        assert status == 200
                        slowest[0] = max(slowest[0], time.monotonic() - started)
                        time.sleep(0.05)

                poller = threading.Thread(target=poll)
                poller.start()
                target = urllib.parse.quote(f"http://127.0.0.1:{site}/{name}", safe="")
                started = time.monotonic()
                status, _ = get(listen, f"/v1/fetch?url={target}")
                answer = time.monotonic() - started
                done.set()
                poller.join()
                print(f"| {label} | {answer:.2f} | {status} | {slowest[0] * 1000:.0f} | "
                      f"{vm_hwm_mib(server.pid):.0f} |", flush=True)
            assert server.poll() is None, "the server died"
            print(f"\nload {os.getloadavg()[0]:.1f} at end; the server lived throughout")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
