//! Load client for `webfetch serve` (run by `benches/serve_load.sh`):
//! `CONCURRENCY` connections each send `GET` requests for `TARGET` (a path with
//! query, e.g. `/v1/fetch?url=...`) to `ADDR` until `REQUESTS` have been sent in
//! all, one request per connection, and prints pages/s, p50 and p95 latency and
//! the failures. Measures only; asserts nothing.
//!
//! `cargo run --release --example serve_load -- ADDR TARGET CONCURRENCY REQUESTS`
//!
//! `serve_load upstream FILE` is the page server the bench fetches from: it
//! prints its loopback port on stdout, then answers `/robots.txt` with an
//! allow-all and every other path with FILE as `text/html` (HTTP/1.1, one request
//! per connection, a deep accept backlog, so the upstream is not what is measured).

#[path = "../benches/support/request_head.rs"]
mod request_head;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use request_head::read_head;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request over a fresh connection; whether the status was 200.
async fn one(addr: &str, target: &str) -> bool {
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return false;
    };
    let head = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let mut raw = Vec::new();
    if stream.read_to_end(&mut raw).await.is_err() {
        return false;
    }
    raw.get(8..12) == Some(b" 200")
}

/// `upstream FILE`: see the crate docs.
async fn upstream(file: &str) {
    let page: &'static [u8] = Vec::leak(std::fs::read(file).expect("the page file"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let Some(head) = read_head(&mut stream).await else {
                return;
            };
            let robots = head.starts_with(b"GET /robots.txt ");
            let (kind, body): (&str, &[u8]) = if robots {
                ("text/plain", b"User-agent: *\nAllow: /\n")
            } else {
                ("text/html; charset=utf-8", page)
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
            let _ = stream.write_all(body).await;
        });
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, file] = args.as_slice()
        && mode == "upstream"
    {
        upstream(file).await;
        return;
    }
    let [addr, target, concurrency, requests] = args.as_slice() else {
        eprintln!("usage: serve_load ADDR TARGET CONCURRENCY REQUESTS");
        std::process::exit(1);
    };
    let concurrency: usize = concurrency.parse().expect("CONCURRENCY");
    let requests: usize = requests.parse().expect("REQUESTS");
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (addr, target) = (addr.clone(), target.clone());
            let (next, failures) = (Arc::clone(&next), Arc::clone(&failures));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < requests {
                    let at = Instant::now();
                    if !one(&addr, &target).await {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                    latencies.push(at.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(requests);
    for worker in workers {
        latencies.extend(worker.await.expect("worker"));
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "concurrency {concurrency:>3}: {:>7.1} pages/s  p50 {:>7.2} ms  p95 {:>7.2} ms  failures {}",
        requests as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 95.0)),
        failures.load(Ordering::Relaxed)
    );
}
