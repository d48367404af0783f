//! Fair shares of the connect budget among a host's addresses (FR-WF-DNS-01/02),
//! with real sockets on loopback.
//!
//! A black hole is a listener that never accepts, its accept queue filled: Linux
//! then drops further SYNs to it, so a connect neither succeeds nor is refused
//! until the client gives up, just like an address behind a firewall that drops
//! packets. The stub resolver sorts 127.0.0.1 before 127.0.0.2 (FR-WF-DNS-01:
//! IPv4 ascending), so the black hole sits on 127.0.0.1 and the second address on
//! 127.0.0.2, both on the same port.

use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::{TcpListener, TcpSocket};
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::Settings;
use webfetch::internals::render::{FetchedDocument, fetch_document};
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{ErrorCode, FetchError};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::Config;

/// The first address in sort order: the black hole.
const FIRST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
/// The second address in sort order.
const SECOND: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// The host the stub resolver answers with [`FIRST`] and [`SECOND`].
const HOST: &str = "two.test";

/// A listener on `addr` that never accepts, with its accept queue full so further
/// SYNs are dropped. The queue is filled with connections until one times out
/// (the probe's timeout detects the drop; nothing waits on it otherwise). Keep the
/// listener and the returned connections alive as long as the black hole is needed.
fn black_hole(addr: SocketAddr) -> (TcpListener, Vec<std::net::TcpStream>) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(addr).unwrap();
    // Backlog 0: the kernel queues at most one connection, then drops SYNs.
    let listener = socket.listen(0).unwrap();
    let mut queued = Vec::new();
    for _ in 0..64 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(stream) => queued.push(stream),
            Err(error) if error.kind() == ErrorKind::TimedOut => return (listener, queued),
            Err(error) => panic!("filling the black hole's queue: {error}"),
        }
    }
    panic!("the accept queue of {addr} never filled: SYNs are not dropped here");
}

/// A port on [`SECOND`] that nobody listens on, with [`FIRST`] free at it too.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind((SECOND, 0)).unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    if std::net::TcpListener::bind((FIRST, port)).is_ok() {
        port
    } else {
        free_port()
    }
}

/// Loopback unblocked (through `allow_insecure_overrides`), `port` allowed,
/// `timeout_seconds` as given, the default `max_dns_attempts` (2).
fn settings(port: u16, timeout_seconds: u32) -> Arc<Settings> {
    let settings = Config::new(&[port]).timeout(timeout_seconds).settings();
    assert_eq!(settings.security.max_dns_attempts, 2);
    assert_eq!(settings.timeout_seconds, timeout_seconds);
    Arc::new(settings)
}

/// Fetches `http://two.test:<port>/page`, the host resolving to both addresses.
async fn fetch(settings: &Arc<Settings>, port: u16) -> Result<FetchedDocument, FetchError> {
    let ips = [IpAddr::V4(SECOND), IpAddr::V4(FIRST)];
    let validator = StubValidator::new(&settings.security).with_host(HOST, &ips);
    let client = HttpClient::new(Arc::clone(settings), Arc::new(validator));
    let url = CanonicalUrl::parse(&format!("http://{HOST}:{port}/page")).unwrap();
    let deadline = Instant::now() + settings.timeout();
    fetch_document(&client, &url, deadline, None, None).await
}

#[tokio::test]
async fn fr_wf_dns_01_blackholed_first_address_leaves_time_for_the_second() {
    let listener = std::net::TcpListener::bind((SECOND, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = MockServer::builder().listener(listener).start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(b"<p>second address</p>".to_vec(), "text/html"),
        )
        .mount(&server)
        .await;
    let _hole = black_hole(SocketAddr::from((FIRST, port)));

    let fetched = fetch(&settings(port, 2), port).await.unwrap();
    assert_eq!(fetched.body.as_ref(), b"<p>second address</p>");
}

#[tokio::test]
async fn fr_wf_dns_01_share_timeout_is_the_first_error_when_the_second_refuses() {
    let port = free_port();
    let _hole = black_hole(SocketAddr::from((FIRST, port)));

    let error = fetch(&settings(port, 1), port).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Network, "{}", error.to_json());
    assert_eq!(error.details_json()["error"], "connect_timed_out");
    assert_eq!(
        error.details_json()["attempted_ips"],
        json!(["127.0.0.1", "127.0.0.2"])
    );
}

#[tokio::test]
async fn fr_wf_dns_01_every_address_blackholed_is_a_connect_timeout() {
    let port = free_port();
    let _first = black_hole(SocketAddr::from((FIRST, port)));
    let _second = black_hole(SocketAddr::from((SECOND, port)));

    let error = fetch(&settings(port, 1), port).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Timeout, "{}", error.to_json());
    assert_eq!(error.details_json()["phase"], "connect");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
}
