//! Hostile servers at the edges: each answer ends in the
//! documented error, within the call's budget (the tool's own timer, no wall-clock
//! asserts) and within the memory bound (`max_download_bytes`: the errors below
//! are raised by the caps, not by running out of memory), and nothing is cached.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use webfetch::ErrorCode;
use wiremock::MockServer;
use wiremock::ResponseTemplate;

use crate::faults::{UNLIMITED, assert_code, failing_fetch, network_detail, page, raw_site};
use crate::support::{Config, html, json_files, serve};

/// A raw site whose documents get `reply`, then a clean close.
async fn replying_site(reply: Vec<u8>) -> SocketAddr {
    let reply = Arc::new(reply);
    raw_site(Arc::new(move |mut socket: TcpStream, _| {
        let reply = Arc::clone(&reply);
        Box::pin(async move {
            let _ = socket.write_all(&reply).await;
            let _ = socket.shutdown().await;
        })
    }))
    .await
}

async fn fetch_reply(
    reply: Vec<u8>,
    config: impl FnOnce(Config) -> Config,
) -> webfetch::FetchError {
    let site = replying_site(reply).await;
    let cache = tempfile::tempdir().unwrap();
    failing_fetch(
        config(Config::new(&[site.port()])),
        cache.path(),
        &page(site),
    )
    .await
}

// ---------------------------------------------------------------- header floods

#[tokio::test]
async fn ten_thousand_headers_are_refused_as_network() {
    let mut reply = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n".to_vec();
    for n in 0..10_000 {
        reply.extend_from_slice(format!("X-Flood-{n}: v\r\n").as_bytes());
    }
    reply.extend_from_slice(b"Content-Length: 2\r\n\r\nhi");
    let error = fetch_reply(reply, |c| c).await;
    let detail = network_detail(&error);
    assert!(detail.starts_with("request_failed"), "{detail}");
}

#[tokio::test]
async fn a_one_megabyte_header_line_is_refused_as_network() {
    let mut reply = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Big: ".to_vec();
    reply.extend(std::iter::repeat_n(b'a', 1 << 20));
    reply.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\nhi");
    let error = fetch_reply(reply, |c| c).await;
    let detail = network_detail(&error);
    assert!(detail.starts_with("request_failed"), "{detail}");
}

// ---------------------------------------------------------------- redirects

#[tokio::test]
async fn endless_redirects_with_growing_urls_hit_the_redirect_limit() {
    // Every hop's Location is the previous path plus 1 KiB: /r/, /r/aaa…, …
    let site = raw_site(Arc::new(|mut socket: TcpStream, head: String| {
        Box::pin(async move {
            let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
            let next = format!("{path}{}", "a".repeat(1024));
            let reply = format!(
                "HTTP/1.1 302 Found\r\nLocation: {next}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = socket.write_all(reply.as_bytes()).await;
        })
    }))
    .await;
    let cache = tempfile::tempdir().unwrap();
    let error = failing_fetch(Config::new(&[site.port()]), cache.path(), &page(site)).await;
    assert_code(&error, ErrorCode::RedirectLimit);
    assert_eq!(error.details_json()["count"], 6, "{}", error.to_json());
    assert_eq!(error.details_json()["max"], 5);
}

// ---------------------------------------------------------------- bodies

#[tokio::test]
async fn a_four_gigabyte_content_length_is_response_too_large_before_reading() {
    let reply = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4294967296\r\n\r\n<p>short</p>".to_vec();
    let error = fetch_reply(reply, |c| c).await;
    assert_code(&error, ErrorCode::ResponseTooLarge);
    assert_eq!(error.details_json()["size"], 4_294_967_296_u64);
    assert_eq!(error.details_json()["max_bytes"], 5 * 1024 * 1024);
}

#[tokio::test]
async fn a_content_length_within_the_cap_but_a_short_body_is_network() {
    let reply = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4000000\r\n\r\n<p>short</p>".to_vec();
    let error = fetch_reply(reply, |c| c).await;
    assert!(network_detail(&error).starts_with("body_read_failed"));
}

const CHUNKED: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";

/// A chunked reply: the head, then `body` as sent.
fn chunked(body: &str) -> Vec<u8> {
    format!("{CHUNKED}{body}").into_bytes()
}

#[tokio::test]
async fn chunked_encoding_lies_are_network_errors() {
    for (lie, body) in [
        ("a size that is not hex", "zz\r\n<p>hello</p>\r\n0\r\n\r\n"),
        ("a size larger than the data", "ff\r\n<p>hello</p>\r\n"),
        ("no terminating chunk", "c\r\n<p>hello</p>\r\n"),
        (
            "a size that overflows u64",
            "1ffffffffffffffff\r\n<p>x</p>\r\n0\r\n\r\n",
        ),
        (
            "data longer than its size",
            "3\r\n<p>hello</p>\r\n0\r\n\r\n",
        ),
    ] {
        let error = fetch_reply(chunked(body), |c| c).await;
        let detail = network_detail(&error);
        assert!(detail.starts_with("body_read_failed"), "{lie}: {detail}");
    }
}

#[tokio::test]
async fn a_huge_chunk_size_is_capped_by_max_download_bytes() {
    // Declares 16 EiB in one chunk and then streams: the cap stops it.
    let site = raw_site(Arc::new(|mut socket: TcpStream, _| {
        Box::pin(async move {
            let head = format!("{CHUNKED}fffffffffffffff\r\n");
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let block = vec![b'a'; 64 * 1024];
            while socket.write_all(&block).await.is_ok() {}
        })
    }))
    .await;
    let cache = tempfile::tempdir().unwrap();
    let config = Config::new(&[site.port()]).top("max_download_bytes = 100000");
    let error = failing_fetch(config, cache.path(), &page(site)).await;
    assert_code(&error, ErrorCode::ResponseTooLarge);
    assert_eq!(
        error.details(),
        &webfetch::ErrorDetails::ResponseTooLarge {
            size: 100_001,
            max_bytes: 100_000
        }
    );
}

#[tokio::test]
async fn a_gzip_stream_that_never_ends_stops_at_the_decompressed_cap() {
    use async_compression::Level;
    use async_compression::tokio::bufread::GzipEncoder;
    let site = raw_site(Arc::new(|mut socket: TcpStream, _| {
        Box::pin(async move {
            let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n";
            if socket.write_all(head).await.is_err() {
                return;
            }
            // Endless zeros, compressed on the fly: never held in memory.
            let zeros = tokio::io::BufReader::new(tokio::io::repeat(0));
            let mut endless = GzipEncoder::with_quality(zeros, Level::Best);
            let _ = tokio::io::copy(&mut endless, &mut socket).await;
        })
    }))
    .await;
    let cache = tempfile::tempdir().unwrap();
    let error = failing_fetch(Config::new(&[site.port()]), cache.path(), &page(site)).await;
    assert_code(&error, ErrorCode::ResponseTooLarge);
    assert_eq!(error.details_json()["size"], 5 * 1024 * 1024 + 1);
    assert_eq!(error.details_json()["max_bytes"], 5 * 1024 * 1024);
}

// ---------------------------------------------------------------- robots.txt

const ARTICLE: &str = "<html><head><title>T</title></head><body><main><h1>Title</h1>\
    <p>Enough text for an article to be extracted from this page.</p></main></body></html>";

/// A wiremock site with `robots` as its robots.txt and an article at `/page`
/// and `/private`.
async fn robots_site(robots: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    serve(
        &server,
        "/robots.txt",
        ResponseTemplate::new(200).set_body_raw(robots, "text/plain"),
    )
    .await;
    serve(&server, "/page", html(ARTICLE)).await;
    serve(&server, "/private", html(ARTICLE)).await;
    server
}

#[tokio::test]
async fn a_robots_txt_of_one_512_kib_line_is_truncated_and_its_partial_line_dropped() {
    // Rules first, then one line of 512 KiB: over max_robots_bytes, cut mid-line,
    // the partial line discarded (FR-WF-ROBOTS-SIZE-02), the rules before it kept.
    let mut robots = b"User-agent: *\nDisallow: /private\n# ".to_vec();
    robots.extend(std::iter::repeat_n(b'x', 512 * 1024));
    let server = robots_site(robots).await;
    let port = server.address().port();
    let cache = tempfile::tempdir().unwrap();
    let tool = Config::new(&[port]).cache(cache.path()).tool();
    let url = |path: &str| format!("http://site.test:{port}{path}");
    let ok = tool
        .call(&json!({ "url": url("/page") }), UNLIMITED)
        .await
        .map(|built| built.json);
    let ok: serde_json::Value = serde_json::from_str(&ok.expect("/page is allowed")).unwrap();
    assert!(
        ok["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Enough text")
    );
    let refused = tool
        .call(&json!({ "url": url("/private") }), UNLIMITED)
        .await
        .map(|built| built.json)
        .unwrap_err();
    assert_code(&refused, ErrorCode::RobotsDisallowed);
    assert_eq!(json_files(cache.path()).len(), 1, "only /page is cached");
}

#[tokio::test]
async fn a_robots_txt_that_is_one_line_of_exactly_512_kib_parses_within_the_cap() {
    // A single rule line of exactly max_robots_bytes, no newline: not truncated,
    // parsed whole. Its Disallow path is long and matches nothing we fetch.
    let mut robots = b"Disallow: /".to_vec();
    robots.extend(std::iter::repeat_n(b'z', 512 * 1024 - robots.len()));
    assert_eq!(robots.len(), 512 * 1024);
    let server = robots_site(robots).await;
    let port = server.address().port();
    let tool = Config::new(&[port]).tool();
    let url = format!("http://site.test:{port}/page");
    let text = tool
        .call(&json!({ "url": url }), UNLIMITED)
        .await
        .map(|built| built.json)
        .unwrap();
    assert!(text.contains("Enough text"));
}

// ---------------------------------------------------------------- framing

#[tokio::test]
async fn conflicting_content_lengths_and_garbage_status_lines_are_network() {
    for (what, reply) in [
        (
            "two different Content-Length values",
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello"[..],
        ),
        ("a status line that is not HTTP", b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
        ("a three-digit status that is not a number", b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"),
        ("a NUL in a header name", b"HTTP/1.1 200 OK\r\nX-\0: v\r\nContent-Length: 0\r\n\r\n"),
    ] {
        let error = fetch_reply(reply.to_vec(), |c| c).await;
        let detail = network_detail(&error);
        assert!(detail.starts_with("request_failed"), "{what}: {detail}");
    }
}
