//! Soak of a long-lived server (run by `benches/soak.sh`).
//!
//! `cargo run --release --example soak -- <webfetch binary> <stdio|serve> [calls] [chromium]`
//!
//! Starts a loopback site, then `webfetch mcp` (stdio) or `webfetch serve` (MCP over
//! HTTP), and makes `calls` (default 10,000) mixed `web_fetch` calls through rmcp's
//! real client: cache hits and misses, redirects, robots.txt refusals, errors of each
//! family (sixteen codes, plus a reset mid-body every 20th call and a server that
//! never answers every 2,000th), and with a Chromium path a browser render every
//! 50th call. Every response
//! is checked (valid JSON; a success has chunks; an error is the FR-WF-18 envelope
//! with the code the call must give); every 500 calls the server's RSS, open file
//! descriptors and threads are sampled and printed as a curve. At the end the server
//! is stopped and no Chromium process or profile may be left.
//!
//! `SOAK_CACHE=off` runs without the disk cache (to tell its bounded in-memory index
//! apart from a leak in the RSS curve).
//!
//! Exits non-zero on any wrong response or leftover; the curve is for a human (a
//! flat line is the expectation, and growth is reported, not asserted).

#[path = "../benches/support/proc_status.rs"]
mod proc_status;
#[path = "../benches/support/request_head.rs"]
mod request_head;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use proc_status::ProcStatus;
use request_head::read_head;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Downloads above this are `response_too_large`.
const MAX_DOWNLOAD: usize = 256 * 1024;

/// A call of the mix and the error code it must give (`None`: success).
struct Case {
    args: Value,
    expect: Option<&'static str>,
}

/// The loopback site: articles, redirects, error statuses, a robots.txt with a
/// disallowed path (or, with `robots_down`, a robots.txt answering 503), binary and
/// oversized bodies, a page with nothing to extract, a connection reset mid-body and
/// a server that never answers.
async fn site(robots_down: bool) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(answer(stream, robots_down));
        }
    });
    port
}

async fn answer(mut stream: tokio::net::TcpStream, robots_down: bool) {
    let Some(head) = read_head(&mut stream).await else {
        return;
    };
    let line = String::from_utf8_lossy(&head);
    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
    let reply = |status: &str, kind: &str, body: Vec<u8>, extra: &str| {
        let mut out = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend(body);
        out
    };
    let out = if path == "/robots.txt" && robots_down {
        reply("503 Service Unavailable", "text/plain", Vec::new(), "")
    } else if path == "/robots.txt" {
        reply(
            "200 OK",
            "text/plain",
            b"User-agent: *\nDisallow: /private\n".to_vec(),
            "",
        )
    } else if let Some(n) = path.strip_prefix("/page/") {
        reply(
            "200 OK",
            "text/html; charset=utf-8",
            article(n).into_bytes(),
            "",
        )
    } else if let Some(n) = path.strip_prefix("/redirect/") {
        reply(
            "302 Found",
            "text/plain",
            Vec::new(),
            &format!("Location: /page/{n}\r\n"),
        )
    } else if let Some(n) = path.strip_prefix("/loop/") {
        // Each hop's URL grows: the chain ends at max_redirects, whatever the length.
        reply(
            "302 Found",
            "text/plain",
            Vec::new(),
            &format!("Location: /loop/{n}x\r\n"),
        )
    } else if path == "/404" {
        reply("404 Not Found", "text/plain", b"gone".to_vec(), "")
    } else if path == "/500" {
        reply(
            "500 Internal Server Error",
            "text/plain",
            b"oops".to_vec(),
            "",
        )
    } else if path == "/empty" {
        reply(
            "200 OK",
            "text/html",
            b"<html><body><nav>menu</nav></body></html>".to_vec(),
            "",
        )
    } else if path == "/slow" {
        // Never answers: the call ends at its own budget.
        tokio::time::sleep(Duration::from_secs(120)).await;
        return;
    } else if path == "/binary" {
        reply("200 OK", "application/octet-stream", vec![0; 64], "")
    } else if path == "/big" {
        reply("200 OK", "text/html", vec![b'a'; MAX_DOWNLOAD * 2], "")
    } else if path == "/reset" {
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<p>cut";
        let _ = stream.write_all(head.as_bytes()).await;
        return;
    } else {
        reply("404 Not Found", "text/plain", Vec::new(), "")
    };
    let _ = stream.write_all(&out).await;
    let _ = stream.shutdown().await;
}

fn article(n: &str) -> String {
    let mut body = format!(
        "<html lang=\"en\"><head><title>Page {n}</title></head><body><nav>menu</nav><main><h1>Page {n}</h1>"
    );
    for p in 0..30 {
        body.push_str(&format!(
            "<p>Paragraph {p} of page {n} says something worth reading about soak tests, \
             long-lived servers and the resources they must give back.</p>"
        ));
    }
    body + "</main></body></html>"
}

/// Call `i` of the mix; `down` is the port of the site whose robots.txt fails.
fn case(i: usize, port: u16, down: u16, browser: bool) -> Case {
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let ok = |args: Value| Case { args, expect: None };
    if browser && i % 50 == 49 {
        return ok(json!({ "url": url(&format!("/page/b{i}")), "force_browser": true }));
    }
    match i % 10 {
        0..=3 => ok(json!({ "url": url(&format!("/page/{}", i % 20)) })),
        4 | 5 => ok(json!({ "url": url(&format!("/page/m{i}")), "max_chunk_tokens": 256 })),
        6 => ok(json!({ "url": url(&format!("/redirect/r{i}")) })),
        7 => ok(json!({ "url": url(&format!("/page/{}", i % 20)), "no_cache": true })),
        _ => {
            let errors: [(Value, &'static str); 16] = [
                (json!({ "url": url("/404") }), "http_4xx"),
                (json!({ "url": url("/500") }), "http_5xx"),
                (json!({ "url": url("/private/x") }), "robots_disallowed"),
                (
                    json!({ "url": format!("http://10.0.0.1:{port}/") }),
                    "ssrf_blocked",
                ),
                (
                    json!({ "url": format!("http://[::ffff:169.254.169.254]:{port}/") }),
                    "ssrf_blocked",
                ),
                (json!({ "url": "http://" }), "invalid_url"),
                (json!({ "url": "ftp://127.0.0.1/" }), "invalid_scheme"),
                (json!({ "url": "http://127.0.0.1:1/" }), "port_blocked"),
                (
                    json!({ "url": url("/"), "max_chunk_tokens": 5 }),
                    "bad_args",
                ),
                (
                    json!({ "url": url("/binary"), "no_cache": true }),
                    "unsupported_content_type",
                ),
                (
                    json!({ "url": url("/big"), "no_cache": true }),
                    "response_too_large",
                ),
                (
                    json!({ "url": url(&format!("/loop/{i}")), "no_cache": true }),
                    "redirect_limit",
                ),
                (
                    json!({ "url": url("/empty"), "no_cache": true }),
                    "extraction_failed",
                ),
                (
                    json!({ "url": format!("http://127.0.0.1:{down}/page/1"), "no_cache": true }),
                    "robots_unavailable",
                ),
                (
                    json!({ "url": format!("http://does-not-exist.invalid:{port}/") }),
                    "dns_failed",
                ),
                (
                    json!({ "url": format!("http://1.2.3.256:{port}/") }),
                    "invalid_host",
                ),
            ];
            let mut pick = errors.into_iter().cycle().nth(i / 10).unwrap();
            if i % 20 == 19 {
                pick = (json!({ "url": url("/reset"), "no_cache": true }), "network");
            }
            if i % 2000 == 1998 {
                pick = (json!({ "url": url("/slow"), "no_cache": true }), "timeout");
            }
            Case {
                args: pick.0,
                expect: Some(pick.1),
            }
        }
    }
}

/// Why a response is wrong, if it is.
fn check(case: &Case, is_error: bool, text: &str) -> Option<String> {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Some(format!("not JSON: {text:.200}"));
    };
    match (case.expect, is_error) {
        (None, false) if value["chunks"].as_array().is_some_and(|c| !c.is_empty()) => None,
        (Some(code), true)
            if value["code"] == code
                && value["message"].is_string()
                && value["retryable"].is_boolean()
                && value["details"].is_object() =>
        {
            None
        }
        _ => Some(format!(
            "expected {:?}, got {}",
            case.expect.unwrap_or("success"),
            &text[..text.len().min(300)]
        )),
    }
}

/// RSS (KiB), open descriptors and threads of `pid`.
fn sample(pid: u32) -> (u64, usize, u64) {
    let status = ProcStatus::of(pid);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (status.field("VmRSS"), fds, status.field("Threads"))
}

/// The pid of the process whose command line names `config`.
fn pid_naming(config: &Path) -> Option<u32> {
    let needle = config.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            (cmdline.contains(&needle) && pid != std::process::id()).then_some(pid)
        })
}

/// Chromium processes of ours still alive (zombies aside) and profiles left.
fn leftovers() -> Vec<String> {
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        if cmdline.contains("webfetch-chromium-") && !status.contains("State:\tZ") {
            left.push(format!(
                "process {}: {cmdline:.120}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    let tmp = std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    for dir in [PathBuf::from("/dev/shm"), tmp] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("webfetch-chromium-")
            {
                left.push(format!("profile {}", entry.path().display()));
            }
        }
    }
    left
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, binary, front, rest @ ..] = args.as_slice() else {
        eprintln!("usage: soak <webfetch binary> <stdio|serve> [calls] [chromium]");
        std::process::exit(2);
    };
    let calls: usize = rest
        .first()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(10_000);
    let chromium = rest.get(1);
    let port = site(false).await;
    let down = site(true).await;

    let work = tempfile::tempdir()?;
    let cache_dir = match std::env::var("SOAK_CACHE").as_deref() {
        Ok("off") => String::new(),
        _ => work.path().join("cache").display().to_string(),
    };
    let config = work.path().join("webfetch.toml");
    let browser = match chromium {
        Some(path) => {
            format!("[tools.webfetch.browser]\nenabled = true\nchromium_path = {path:?}\n")
        }
        None => "[tools.webfetch.browser]\nenabled = false\n".to_owned(),
    };
    std::fs::write(
        &config,
        format!(
            "[tools.webfetch]\ntimeout_seconds = 10\nmax_redirects = 5\nmax_download_bytes = {MAX_DOWNLOAD}\n\
             cache_dir = {:?}\n[tools.webfetch.security]\nallow_insecure_overrides = true\n\
             block_loopback = false\nallowed_ports = [{port}, {down}]\n{browser}",
            cache_dir
        ),
    )?;

    let (client, mut serve_child): (RunningService<RoleClient, ()>, _) = match front.as_str() {
        "stdio" => {
            let mut command = tokio::process::Command::new(binary);
            command.arg("mcp").arg("--config").arg(&config);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()?;
            (().serve(transport).await?, None)
        }
        "serve" => {
            let mut child = tokio::process::Command::new(binary)
                .args(["serve", "--listen", "127.0.0.1:0", "--config"])
                .arg(&config)
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()?;
            let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
            let addr = loop {
                let line = lines.next_line().await?.ok_or("serve exited")?;
                if let Some(at) = line.split("listening on http://").nth(1) {
                    break at.split_whitespace().next().unwrap_or_default().to_owned();
                }
            };
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            let http = reqwest::Client::builder().no_proxy().build()?;
            let transport = StreamableHttpClientTransport::with_client(
                http,
                StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp")),
            );
            (().serve(transport).await?, Some(child))
        }
        other => return Err(format!("unknown front {other}").into()),
    };
    let pid = pid_naming(&config).ok_or("cannot find the server process")?;

    println!(
        "front {front}, {calls} calls, browser every 50th: {}",
        chromium.is_some()
    );
    println!(
        "{:>6} {:>9} {:>5} {:>7} {:>8}",
        "calls", "RSS MiB", "fds", "threads", "wrong"
    );
    let started = Instant::now();
    let mut wrong = 0usize;
    let mut curve = Vec::new();
    for i in 0..=calls {
        if i % 500 == 0 {
            let (rss, fds, threads) = sample(pid);
            println!(
                "{i:>6} {:>9.1} {fds:>5} {threads:>7} {wrong:>8}",
                rss as f64 / 1024.0
            );
            curve.push(rss);
        }
        if i == calls {
            break;
        }
        let case = case(i, port, down, chromium.is_some());
        let Value::Object(arguments) = case.args.clone() else {
            unreachable!()
        };
        let arguments: Map<String, Value> = arguments;
        let result = client
            .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
            .await?;
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        if let Some(why) = check(&case, result.is_error == Some(true), &text) {
            wrong += 1;
            eprintln!("call {i} {}: {why}", case.args);
        }
    }
    println!("{calls} calls in {:.0} s", started.elapsed().as_secs_f64());
    client.cancel().await?;
    if let Some(child) = serve_child.as_mut() {
        nix_term(child.id());
        child.wait().await?;
    }
    // The stdio server exits when its stdin closes; give it its shutdown.
    for _ in 0..100 {
        if pid_naming(&config).is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left = leftovers();
    let first = curve.get(1).copied().unwrap_or_default() as f64 / 1024.0;
    let last = curve.last().copied().unwrap_or_default() as f64 / 1024.0;
    println!(
        "RSS after 500 calls {first:.1} MiB, at the end {last:.1} MiB; wrong responses {wrong}; leftovers {}",
        left.len()
    );
    for item in &left {
        eprintln!("left behind: {item}");
    }
    if wrong > 0 || !left.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

/// SIGTERM for `serve`'s graceful shutdown (the bench's own process, not a test).
fn nix_term(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
    }
}
