//! Peak memory of a decompression bomb (FR-WF-10e): fetching a response that
//! decompresses to 1 GiB with `max_download_bytes` = 32 MiB must keep the peak RSS
//! within a few MiB of the limit. Its own test binary (one test) so no other test
//! moves the process high-water mark. Linux only (`/proc/self/status`).
//!
//! `cargo test --test http_memory -- --nocapture` prints the figures.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use async_compression::Level;
use async_compression::tokio::bufread::{BrotliEncoder, GzipEncoder};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::ErrorCode;
use webfetch::internals::render::fetch_document;
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{LoadOptions, load_str};

const LIMIT: u64 = 32 << 20;
const BOMB: u64 = 1 << 30;

/// `VmHWM` (peak resident set) in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the high-water mark to the current RSS (Linux `clear_refs` value 5).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Serves `BOMB` zero bytes compressed on the fly with `coding`.
async fn bomb_server(coding: &'static str) -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {coding}\r\nConnection: close\r\n\r\n"
                );
                if socket.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
                let zeros = BufReader::new(tokio::io::repeat(0).take(BOMB));
                let mut body: Box<dyn AsyncRead + Send + Unpin> = match coding {
                    "gzip" => Box::new(GzipEncoder::with_quality(zeros, Level::Best)),
                    _ => Box::new(BrotliEncoder::with_quality(boxed(zeros), Level::Fastest)),
                };
                let _ = tokio::io::copy(&mut body, &mut socket).await;
            });
        }
    });
    address
}

fn boxed<R: AsyncBufRead + Send + Unpin + 'static>(
    reader: R,
) -> Box<dyn AsyncBufRead + Send + Unpin> {
    Box::new(reader)
}

#[tokio::test]
async fn fr_wf_10e_bomb_peak_rss_stays_near_the_limit() {
    if peak_rss_kib().is_none() {
        eprintln!("no /proc/self/status: skipping the memory measurement");
        return;
    }
    for coding in ["gzip", "br"] {
        let server = bomb_server(coding).await;
        let text = format!(
            "[tools.webfetch]\nmax_download_bytes = {LIMIT}\ntimeout_seconds = 60\n\
             [tools.webfetch.security]\nallow_insecure_overrides = true\nblock_loopback = false\n\
             allowed_ports = [{}]\n",
            server.port()
        );
        let settings = Arc::new(load_str(&text, LoadOptions::default()).unwrap().settings);
        let validator = StubValidator::new(&settings.security)
            .with_host("bomb.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        let client = HttpClient::new(Arc::clone(&settings), Arc::new(validator));
        let url = CanonicalUrl::parse(&format!("http://bomb.test:{}/", server.port())).unwrap();
        reset_peak();
        let before = peak_rss_kib().unwrap();
        let error = fetch_document(
            &client,
            &url,
            Instant::now() + settings.timeout(),
            None,
            None,
        )
        .await
        .unwrap_err();
        let after = peak_rss_kib().unwrap();
        assert_eq!(
            error.code(),
            ErrorCode::ResponseTooLarge,
            "{}",
            error.to_json()
        );
        assert_eq!(error.details_json()["size"], LIMIT + 1);
        let growth_kib = after.saturating_sub(before);
        eprintln!(
            "{coding} bomb of {} MiB, limit {} MiB: peak RSS {before} KiB -> {after} KiB (+{:.1} MiB, {:.1} MiB over the limit)",
            BOMB >> 20,
            LIMIT >> 20,
            growth_kib as f64 / 1024.0,
            growth_kib as f64 / 1024.0 - (LIMIT >> 20) as f64,
        );
        // The buffer is at most limit + 1 bytes; decoders, socket buffers and the
        // in-process bomb server (its compressor included) must fit in 16 MiB more.
        assert!(
            growth_kib < (LIMIT >> 10) + 16 * 1024,
            "{coding}: peak grew by {growth_kib} KiB"
        );
    }
}
