//! The fleet bench's two loopback parts (run by
//! `benches/fleet.sh`). Measures only; asserts nothing.
//!
//! `fleet_load origin`: the site the fleet fetches from. Prints its loopback
//! port, then answers `/robots.txt` (allow-all), `/p/{i}` (a ~6 KiB article
//! page, its text different for every `i`) and `/__stats` (what it served, as
//! JSON: page requests, distinct pages, robots.txt requests). One request per
//! connection.
//!
//! `fleet_load run ORIGIN_PORT CLIENTS CALLS URLS ADDR[,ADDR…]`: `CLIENTS`
//! concurrent clients make `CALLS` calls of `GET /v1/fetch` for pages drawn
//! from `URLS` pages with a Zipf distribution (exponent 1, a fixed seed, so
//! every run asks the same sequence), spread round-robin over the instances
//! as a load balancer would. Prints calls/s, p50 and p99 latency, failures, the
//! distinct pages asked, the origin's page requests per distinct page and its
//! robots.txt requests, and this client's own peak RSS.

#[path = "../benches/support/request_head.rs"]
mod request_head;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use request_head::read_head;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the origin served.
#[derive(Default)]
struct Served {
    pages: usize,
    distinct: HashSet<String>,
    robots: usize,
}

/// The article page of `/p/{i}`: a title and a dozen paragraphs whose words
/// depend on `i`, so no two pages extract alike.
fn page(i: u64) -> String {
    const WORDS: [&str; 16] = [
        "fleet",
        "origin",
        "cache",
        "robots",
        "budget",
        "agent",
        "token",
        "chunk",
        "redis",
        "politeness",
        "extract",
        "markdown",
        "window",
        "instance",
        "balancer",
        "request",
    ];
    let mut rng = fastrand::Rng::with_seed(i);
    let mut body = format!(
        "<html><head><title>Page {i}</title></head><body><nav><a href=\"/\">Home</a></nav>\
         <main><article><h1>Page {i}</h1>"
    );
    for p in 0..12 {
        body.push_str(&format!("<h2>Section {p}</h2><p>"));
        for _ in 0..70 {
            body.push_str(WORDS[rng.usize(..WORDS.len())]);
            body.push(' ');
        }
        body.push_str("</p>");
    }
    body.push_str("</article></main><footer>footer</footer></body></html>");
    body
}

async fn origin() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    let served = Arc::new(Mutex::new(Served::default()));
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let served = Arc::clone(&served);
        tokio::spawn(async move {
            let Some(head) = read_head(&mut stream).await else {
                return;
            };
            let path = String::from_utf8_lossy(&head)
                .split(' ')
                .nth(1)
                .unwrap_or("")
                .to_owned();
            let (kind, body) = if path == "/robots.txt" {
                served.lock().unwrap().robots += 1;
                ("text/plain", "User-agent: *\nAllow: /\n".to_owned())
            } else if path == "/__stats" {
                let s = served.lock().unwrap();
                let json = format!(
                    "{{\"pages\":{},\"distinct\":{},\"robots\":{}}}",
                    s.pages,
                    s.distinct.len(),
                    s.robots
                );
                ("application/json", json)
            } else if let Some(i) = path.strip_prefix("/p/").and_then(|i| i.parse().ok()) {
                let mut s = served.lock().unwrap();
                s.pages += 1;
                s.distinct.insert(path.clone());
                ("text/html; charset=utf-8", page(i))
            } else {
                ("text/plain", String::new())
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        });
    }
}

/// One request over a fresh connection: the status line's code and the body.
async fn get(addr: &str, target: &str) -> Option<(u16, Vec<u8>)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let head = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.ok()?;
    let status = std::str::from_utf8(raw.get(9..12)?).ok()?.parse().ok()?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    Some((status, raw[split + 4..].to_vec()))
}

/// Ranks 0..n drawn with probability proportional to 1/(rank+1).
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut sum = 0.0;
        for k in 1..=n {
            sum += 1.0 / k as f64;
            cdf.push(sum);
        }
        Zipf(cdf.into_iter().map(|c| c / sum).collect())
    }

    fn draw(&self, rng: &mut fastrand::Rng) -> usize {
        let u = rng.f64();
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn own_peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

async fn run(origin_port: u16, clients: usize, calls: usize, urls: usize, addrs: Vec<String>) {
    let zipf = Zipf::new(urls);
    let mut rng = fastrand::Rng::with_seed(32);
    let plan: Arc<Vec<(usize, String)>> = Arc::new(
        (0..calls)
            .map(|call| {
                let url = format!("http://127.0.0.1:{origin_port}/p/{}", zipf.draw(&mut rng));
                let encoded: String =
                    url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
                (call % addrs.len(), format!("/v1/fetch?url={encoded}"))
            })
            .collect(),
    );
    let distinct: HashSet<&str> = plan.iter().map(|(_, t)| t.as_str()).collect();
    let distinct = distinct.len();
    let addrs = Arc::new(addrs);
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (plan, addrs) = (Arc::clone(&plan), Arc::clone(&addrs));
            let (next, failures) = (Arc::clone(&next), Arc::clone(&failures));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((instance, target)) = plan.get(i) else {
                        break;
                    };
                    let at = Instant::now();
                    match get(&addrs[*instance], target).await {
                        Some((200, _)) => {}
                        Some((status, body)) => {
                            if failures.fetch_add(1, Ordering::Relaxed) < 3 {
                                eprintln!("{status}: {}", String::from_utf8_lossy(&body));
                            }
                        }
                        None => {
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    latencies.push(at.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(calls);
    for worker in workers {
        latencies.extend(worker.await.expect("worker"));
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let stats = get(&format!("127.0.0.1:{origin_port}"), "/__stats")
        .await
        .map(|(_, body)| String::from_utf8_lossy(&body).into_owned())
        .unwrap_or_default();
    let field = |name: &str| -> f64 {
        stats
            .split(&format!("\"{name}\":"))
            .nth(1)
            .and_then(|rest| rest.split([',', '}']).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "calls/s {:.1} p50_ms {:.2} p99_ms {:.2} failures {} distinct {} \
         origin_per_url {:.2} robots {} client_rss_mib {:.1}",
        calls as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 99.0)),
        failures.load(Ordering::Relaxed),
        distinct,
        field("pages") / distinct as f64,
        field("robots"),
        own_peak_rss_mib()
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode] if mode == "origin" => origin().await,
        [mode, port, clients, calls, urls, addrs] if mode == "run" => {
            let addrs = addrs.split(',').map(str::to_owned).collect();
            run(
                port.parse().expect("ORIGIN_PORT"),
                clients.parse().expect("CLIENTS"),
                calls.parse().expect("CALLS"),
                urls.parse().expect("URLS"),
                addrs,
            )
            .await;
        }
        _ => {
            eprintln!(
                "usage: fleet_load origin | fleet_load run ORIGIN_PORT CLIENTS CALLS URLS ADDR[,ADDR…]"
            );
            std::process::exit(1);
        }
    }
}
