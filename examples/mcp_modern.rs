//! The targets of the modern MCP front door, measured against `webfetch mcp`
//! over stdio with raw JSON-RPC (`benches/mcp_modern.sh` runs it):
//!
//! - a `web_fetch_batch` of 20 pages on 20 loopback origins that each answer
//!   after 200 ms: its wall time;
//! - a batch of 10 pages on one origin with `per_origin_in_flight = 2`: the most
//!   requests that origin held at once;
//! - 50 calls of a page that never ends, each cancelled with
//!   `notifications/cancelled` once the origin holds it: the time from the
//!   cancel to the origin seeing its connection closed (median, p99, max).
//!
//! ```text
//! mcp_modern <webfetch binary>
//! ```

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What each page of the delayed origins answers.
const PAGE: &str = "<html><body><p>A page that took its time.</p></body></html>";

/// An origin on a free loopback port answering each page after `delay`,
/// counting the requests it holds at once. Returns its port and that count's
/// maximum.
fn delayed_origin(delay: Duration) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let seen = Arc::clone(&most);
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            std::thread::spawn(move || {
                let mut stream = stream;
                let Some(path) = read_head(&stream) else {
                    return;
                };
                if path == "/robots.txt" {
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    return;
                }
                let holding = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(holding, Ordering::SeqCst);
                std::thread::sleep(delay);
                now.fetch_sub(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{PAGE}",
                    PAGE.len()
                );
            });
        }
    });
    (port, seen)
}

/// An origin whose pages never end: each connection's head and first bytes are
/// sent, then the time its peer closes it goes to the channel.
fn holding_origin() -> (u16, mpsc::Receiver<Instant>, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (closed_tx, closed) = mpsc::channel();
    let (opened_tx, opened) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (closed_tx, opened_tx) = (closed_tx.clone(), opened_tx.clone());
            std::thread::spawn(move || {
                let mut stream = stream;
                let Some(path) = read_head(&stream) else {
                    return;
                };
                if path == "/robots.txt" {
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    return;
                }
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
                            Content-Length: 1000000\r\n\r\n<html><body><p>Never ends.";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let _ = opened_tx.send(());
                let mut byte = [0u8; 1];
                let _ = stream.read(&mut byte);
                let _ = closed_tx.send(Instant::now());
            });
        }
    });
    (port, closed, opened)
}

/// The request's path, after reading its head.
fn read_head(stream: &std::net::TcpStream) -> Option<String> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    Some(path)
}

/// `webfetch mcp`, initialized, spoken to over its stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _config: tempfile::NamedTempFile,
}

impl Server {
    fn start(binary: &str, ports: &[u16], extra: &str) -> Server {
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        let mut config = tempfile::NamedTempFile::new().unwrap();
        write!(
            config,
            "[tools.webfetch]\ntimeout_seconds = 60\ncache_dir = \"\"\n\
             [tools.webfetch.security]\nallow_insecure_overrides = true\nblock_loopback = false\n\
             allowed_ports = [{}]\n[tools.webfetch.browser]\nenabled = false\n{extra}",
            ports.join(", ")
        )
        .unwrap();
        let mut child = Command::new(binary)
            .args(["mcp", "--config"])
            .arg(config.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("webfetch mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
            _config: config,
        };
        server.send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": { "name": "mcp_modern", "version": "1" } }
        }));
        server.answer(0);
        server.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        server
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server exited"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn batch_call(id: u64, urls: &[String]) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "web_fetch_batch", "arguments": { "urls": urls } }
    })
}

fn main() {
    let binary = std::env::args()
        .nth(1)
        .expect("usage: mcp_modern <webfetch binary>");

    // 20 pages on 20 origins, 200 ms each.
    let origins: Vec<(u16, Arc<AtomicUsize>)> = (0..20)
        .map(|_| delayed_origin(Duration::from_millis(200)))
        .collect();
    let ports: Vec<u16> = origins.iter().map(|(port, _)| *port).collect();
    let mut server = Server::start(&binary, &ports, "");
    let urls: Vec<String> = ports
        .iter()
        .map(|port| format!("http://127.0.0.1:{port}/page"))
        .collect();
    let mut walls = Vec::new();
    for round in 0..5u64 {
        let started = Instant::now();
        server.send(batch_call(10 + round, &urls));
        let answer = server.answer(10 + round);
        walls.push(started.elapsed());
        let results = &answer["result"]["structuredContent"]["results"];
        let read = results.as_array().map_or(0, |items| {
            items.iter().filter(|i| i["response"].is_object()).count()
        });
        assert_eq!(read, 20, "{answer}");
    }
    walls.sort();
    println!(
        "batch of 20 pages on 20 origins (200 ms each): median {:.0} ms, slowest {:.0} ms of 5",
        walls[2].as_secs_f64() * 1000.0,
        walls[4].as_secs_f64() * 1000.0
    );
    drop(server);

    // 10 pages on one origin, at most 2 at once.
    let (port, most) = delayed_origin(Duration::from_millis(100));
    let mut server = Server::start(
        &binary,
        &[port],
        "[tools.webfetch.fleet]\nper_origin_in_flight = 2\n",
    );
    let urls: Vec<String> = (0..10)
        .map(|i| format!("http://127.0.0.1:{port}/page{i}"))
        .collect();
    let started = Instant::now();
    server.send(batch_call(30, &urls));
    server.answer(30);
    println!(
        "batch of 10 pages on one origin, per_origin_in_flight = 2: at most {} at once, {:.0} ms",
        most.load(Ordering::SeqCst),
        started.elapsed().as_secs_f64() * 1000.0
    );
    drop(server);

    // 50 cancels.
    let (port, closed, opened) = holding_origin();
    let mut server = Server::start(&binary, &[port], "");
    let mut latencies = Vec::new();
    for id in 100..150u64 {
        server.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "web_fetch",
                        "arguments": { "url": format!("http://127.0.0.1:{port}/held{id}") } }
        }));
        opened
            .recv_timeout(Duration::from_secs(30))
            .expect("the call reached the origin");
        let cancelled = Instant::now();
        server.send(json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "bench" }
        }));
        let at = closed
            .recv_timeout(Duration::from_secs(30))
            .expect("the connection closed");
        latencies.push(at.saturating_duration_since(cancelled));
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "cancel to origin connection closed, 50 cancels: median {:.2} ms, p99 (the slowest of 50) {:.2} ms",
        ms(latencies[24]),
        ms(latencies[49])
    );
}
