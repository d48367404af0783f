//! A call whose client goes away ends there: `notifications/cancelled` over
//! `webfetch mcp`'s stdio, and a closed connection on `webfetch serve`'s
//! `/v1/fetch` and `/mcp`, each close the origin connection the call had open.
//!
//! The origin answers a page's head and its first bytes, then holds the rest of
//! a long body; it sees its connection close only when webfetch drops it. The
//! call's budget is two minutes, so a call that went on would hold the
//! connection far past each wait here.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::watch;

use crate::serve::{Served, target};
use crate::support::Config;
use crate::support::stdio_mcp::StdioServer;

/// How long a wait here may take before the test fails: far less than the
/// call's own budget, far more than a cancellation needs.
const WAIT: Duration = Duration::from_secs(30);

/// Connections the origin opened and saw closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    opened: usize,
    closed: usize,
}

/// An origin that sends a page's head and first bytes, then waits for the peer
/// to close (robots.txt is a 404).
struct HoldingOrigin {
    addr: SocketAddr,
    counts: watch::Sender<Counts>,
}

impl HoldingOrigin {
    fn start() -> HoldingOrigin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let counts = watch::Sender::new(Counts::default());
        let seen = counts.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let seen = seen.clone();
                std::thread::spawn(move || hold(stream, &seen));
            }
        });
        HoldingOrigin { addr, counts }
    }

    fn url(&self) -> String {
        format!("http://{}/slow", self.addr)
    }

    /// Waits until `want` holds of the counts, or fails the test after [`WAIT`].
    async fn wait_until(&self, what: &str, want: impl Fn(&Counts) -> bool) {
        let mut counts = self.counts.subscribe();
        let waited = tokio::time::timeout(WAIT, counts.wait_for(|c| want(c))).await;
        assert!(
            waited.is_ok(),
            "{what}: not within {WAIT:?} ({:?})",
            *self.counts.borrow()
        );
    }
}

fn hold(mut stream: std::net::TcpStream, seen: &watch::Sender<Counts>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    if request_line.contains("/robots.txt") {
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        return;
    }
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000000\r\n\r\n\
                <html><body><p>The first words of a page that never ends.";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    seen.send_modify(|c| c.opened += 1);
    // webfetch sends nothing more: the read ends when it closes the connection.
    let mut byte = [0u8; 1];
    let _ = reader.read(&mut byte);
    seen.send_modify(|c| c.closed += 1);
}

fn config(origin: &HoldingOrigin) -> Config {
    Config::new(&[origin.addr.port()]).timeout(120)
}

/// A `tools/call` of `web_fetch` for `url`, with a progress token when asked.
fn fetch_call(id: u64, url: &str, progress: bool) -> serde_json::Value {
    let mut call = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "web_fetch", "arguments": { "url": url } }
    });
    if progress {
        call["params"]["_meta"] = json!({ "progressToken": 1 });
    }
    call
}

/// The client's `notifications/cancelled` for request `id`.
fn cancelled(id: u64) -> serde_json::Value {
    json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": id, "reason": "the user moved on" }
    })
}

/// A stateless Streamable HTTP `POST /mcp` of `call` to `addr`, its head and body.
fn mcp_post(addr: SocketAddr, call: &serde_json::Value) -> (String, String) {
    let body = call.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    (head, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_cancel_over_stdio_closes_the_calls_origin_connection() {
    let origin = HoldingOrigin::start();
    let mut server = StdioServer::start(&config(&origin));
    server.send(fetch_call(2, &origin.url(), false));
    origin
        .wait_until("the call reached the origin", |c| c.opened == 1)
        .await;
    assert_eq!(origin.counts.borrow().closed, 0);
    server.send(cancelled(2));
    origin
        .wait_until("the cancelled call closed its connection", |c| {
            c.closed == 1
        })
        .await;
    // The server goes on: another request is answered.
    server.send(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" }));
    assert_eq!(server.answer(3)["result"]["tools"][0]["name"], "web_fetch");
}

/// Sends `head` (and `body`) to `addr`, then holds the connection open until
/// dropped, unread.
async fn open_request(addr: SocketAddr, head: &str, body: &str) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_client_that_hangs_up_closes_the_calls_origin_connection() {
    let origin = HoldingOrigin::start();
    let served = Served::start(&config(&origin), &[], &[]);

    // GET /v1/fetch
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
        target(&origin.url()),
        served.addr
    );
    let client = open_request(served.addr, &head, "").await;
    origin
        .wait_until("the fetch reached the origin", |c| c.opened == 1)
        .await;
    drop(client);
    origin
        .wait_until("the fetch's connection closed", |c| c.closed == 1)
        .await;

    // POST /mcp (stateless Streamable HTTP)
    let (head, body) = mcp_post(served.addr, &fetch_call(1, &origin.url(), false));
    let client = open_request(served.addr, &head, &body).await;
    origin
        .wait_until("the MCP call reached the origin", |c| c.opened == 2)
        .await;
    drop(client);
    origin
        .wait_until("the MCP call's connection closed", |c| c.closed == 2)
        .await;

    // POST /mcp with a progress token: the answer streams (SSE) from the first
    // notification on, and a hang-up still ends the call.
    let (head, body) = mcp_post(served.addr, &fetch_call(2, &origin.url(), true));
    let client = open_request(served.addr, &head, &body).await;
    origin
        .wait_until("the streamed call reached the origin", |c| c.opened == 3)
        .await;
    drop(client);
    origin
        .wait_until("the streamed call's connection closed", |c| c.closed == 3)
        .await;

    // The server lives.
    let health = crate::serve::get(served.addr, "/healthz").await;
    assert_eq!(health.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_frees_its_politeness_slot_and_caches_nothing() {
    let origin = HoldingOrigin::start();
    let cache = tempfile::tempdir().unwrap();
    // One call in flight per origin: a slot the cancelled call kept would hold
    // the next call back for the whole two-minute budget.
    let config = config(&origin)
        .cache(cache.path())
        .section("[tools.webfetch.fleet]\nper_origin_in_flight = 1");
    let mut server = StdioServer::start(&config);
    server.send(fetch_call(2, &origin.url(), false));
    origin
        .wait_until("the first call reached the origin", |c| c.opened == 1)
        .await;
    server.send(cancelled(2));
    origin
        .wait_until("the first call closed its connection", |c| c.closed == 1)
        .await;
    // The same page again goes to the origin: no slot held, nothing cached.
    server.send(fetch_call(3, &origin.url(), false));
    origin
        .wait_until("the second call reached the origin", |c| c.opened == 2)
        .await;
    server.send(cancelled(3));
    origin
        .wait_until("the second call closed its connection", |c| c.closed == 2)
        .await;
}
