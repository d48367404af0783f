//! `webfetch serve`: the real binary on loopback, against wiremock
//! servers on loopback. MCP over Streamable HTTP with rmcp's real client, the
//! `GET /v1/fetch` API over raw TCP, the bearer token, robots.txt single-flight
//! across concurrent calls, graceful shutdown on SIGTERM, and two processes
//! sharing one cache directory.

use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use wiremock::{MockServer, ResponseTemplate};

use crate::support::child_cost::wait_within;
use crate::support::origin::{Origin, request_path};
use crate::support::race::until;
use crate::support::{Config, browser_section, chromium, hits, html, robots, serve};

const PAGE: &str = "<html><head><title>Served</title></head><body><main><h1>Served</h1>\
<p>A page fetched through webfetch serve.</p></main></body></html>";

const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `webfetch serve` child: killed on drop if still running. The
/// fleet tests (`fleet.rs`) run several.
pub(crate) struct Served {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    /// stderr so far, published on each line added and when it closes.
    stderr: watch::Sender<Stderr>,
    _config: tempfile::NamedTempFile,
}

/// What a child wrote to stderr, and whether it closed it (exited).
#[derive(Default)]
struct Stderr {
    text: String,
    closed: bool,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Starts `webfetch serve --listen 127.0.0.1:0` with `config`, reading the
    /// bound address from its announcement on stderr; the rest of stderr is kept.
    pub(crate) fn start(config: &Config, extra: &[&str], env: &[(&str, &str)]) -> Served {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(config.toml().as_bytes()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_webfetch"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(file.path())
            .args(extra)
            .env_remove("WEBFETCH_SERVE_TOKEN")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn webfetch serve");
        let stderr = watch::Sender::new(Stderr::default());
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                    let _ = tx.send(addr);
                }
                kept.send_modify(|stderr| {
                    stderr.text.push_str(&line);
                    stderr.text.push('\n');
                });
            }
            kept.send_modify(|stderr| stderr.closed = true);
        });
        // Ends with the announcement, or when the child closes stderr (exits)
        // without one; a minute bounds a child that hangs before it.
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr.parse().expect("a socket address"),
            Err(_) => panic!(
                "webfetch serve did not start ({:?}): {}",
                child.try_wait(),
                stderr.borrow().text
            ),
        };
        Served {
            child,
            addr,
            stderr,
            _config: file,
        }
    }

    fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// stderr so far: what the reader thread has taken from the pipe, which may
    /// lag behind the process. For a check of the lines its calls logged, see
    /// [`Served::logs_with`] and [`Served::stop`].
    pub(crate) fn logs(&self) -> String {
        self.stderr.borrow().text.clone()
    }

    /// Kills the process and returns all it wrote to stderr, once the pipe is
    /// drained: what a test checks after its calls returned (a line they logged,
    /// or one that must not be there), with nothing still on its way.
    pub(crate) async fn stop(&mut self) -> String {
        let _ = self.child.kill();
        let mut stderr = self.stderr.subscribe();
        let stderr = stderr
            .wait_for(|stderr| stderr.closed)
            .await
            .expect("the sender lives in self");
        stderr.text.clone()
    }

    /// stderr once it holds `count` lines containing `needle`, woken by each line
    /// the reader adds. Fails the test if the process exits (closes stderr)
    /// without them; while it runs, race this with the calls that should make
    /// it log them ([`crate::support::race::until`]).
    pub(crate) async fn logs_with(&self, needle: &str, count: usize) -> String {
        let mut stderr = self.stderr.subscribe();
        let stderr = stderr
            .wait_for(|stderr| stderr.closed || stderr.text.matches(needle).count() >= count)
            .await
            .expect("the sender lives in self");
        assert!(
            stderr.text.matches(needle).count() >= count,
            "the process ended without {count} x {needle:?}: {}",
            stderr.text
        );
        stderr.text.clone()
    }
}

/// One HTTP/1.1 exchange over a fresh connection: status, headers (lowercase
/// names), body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("JSON body: {}", self.body))
    }
}

pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[&str],
) -> Reply {
    exchange(addr, method, target, headers, "").await
}

/// [`request`] with a body (its `Content-Length` added when not empty).
async fn exchange(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[&str],
    body: &str,
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    if !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete response");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

pub(crate) async fn get(addr: SocketAddr, target: &str) -> Reply {
    request(addr, "GET", target, &[]).await
}

/// `/v1/fetch?url=…` for a page of `server`, plus `extra` query parameters.
fn fetch_target(server: &MockServer, path: &str, extra: &str) -> String {
    let url = format!("http://127.0.0.1:{}{path}", server.address().port());
    format!("{}{extra}", target(&url))
}

/// `/v1/fetch?url=…` of `url`.
pub(crate) fn target(url: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    format!("/v1/fetch?url={encoded}")
}

async fn mcp_client(
    served: &Served,
    token: Option<&str>,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    mcp_client_from(served, token, None).await
}

/// [`mcp_client`] whose every request carries `Origin: origin`, as a browser's would.
async fn mcp_client_from(
    served: &Served,
    token: Option<&str>,
    origin: Option<&str>,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(served.mcp_url());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(origin) = origin {
        headers.insert(reqwest::header::ORIGIN, origin.parse().unwrap());
    }
    let http = reqwest::Client::builder()
        .no_proxy()
        .default_headers(headers)
        .build()
        .unwrap();
    let transport = StreamableHttpClientTransport::with_client(http, config);
    ().serve(transport).await.expect("MCP initialize over HTTP")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mcp_over_streamable_http_initializes_lists_tools_and_calls() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let served = Served::start(&Config::new(&[server.address().port()]), &[], &[]);
    let client = mcp_client(&served, None).await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("webfetch")
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2, "web_fetch and web_fetch_batch");
    assert_eq!(tools[0].name, "web_fetch");
    let schema = Value::Object((*tools[0].input_schema).clone());
    assert_eq!(schema["properties"]["start_chunk"]["type"], "integer");

    let url = format!("http://127.0.0.1:{}/page", server.address().port());
    let Value::Object(arguments) = json!({ "url": url }) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    let text = &result.content[0].as_text().unwrap().text;
    let response: Value = serde_json::from_str(text).unwrap();
    assert_eq!(response["title"], "Served");
    assert_eq!(response["final_url"], url);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_get_fetch_answers_the_cli_json_and_a_status_per_error() {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nDisallow: /private\n").await;
    serve(&server, "/page", html(PAGE)).await;
    serve(&server, "/gone", ResponseTemplate::new(404)).await;
    let port = server.address().port();
    let config = Config::new(&[port]);
    let served = Served::start(&config, &[], &[]);
    let addr = served.addr;

    let ok = get(
        addr,
        &fetch_target(&server, "/page", "&max_chunk_tokens=256"),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.header("content-type"), Some("application/json"));
    // The CLI's JSON for the same call (fetched_at aside: another second), in
    // the extraction mode `serve` defaults to (the agent contract's `auto`).
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(config.toml().as_bytes()).unwrap();
    let cli = Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(["fetch", &format!("http://127.0.0.1:{port}/page")])
        .args(["--extraction", "auto"])
        .args(["--max-chunk-tokens", "256", "--config"])
        .arg(file.path())
        .output()
        .unwrap();
    let mut cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    let mut served_json = ok.json();
    cli["fetched_at"] = Value::Null;
    served_json["fetched_at"] = Value::Null;
    assert_eq!(served_json, cli);

    let cases = [
        ("/private", "", 403, "robots_disallowed"),
        ("/gone", "", 502, "http_4xx"),
        ("/page", "&max_chunk_tokens=64", 400, "bad_args"),
        ("/page", "&no_cache=maybe", 400, "bad_args"),
        ("/page", "&unknown=1", 400, "bad_args"),
    ];
    for (path, extra, status, code) in cases {
        let reply = get(addr, &fetch_target(&server, path, extra)).await;
        assert_eq!(reply.status, status, "{path}{extra}: {}", reply.body);
        assert_eq!(reply.json()["code"], code, "{path}{extra}");
    }
    let blocked = get(addr, "/v1/fetch?url=http%3A%2F%2F10.0.0.1%2F").await;
    assert_eq!(blocked.status, 403);
    assert_eq!(blocked.json()["code"], "ssrf_blocked");
    let missing = get(addr, "/v1/fetch").await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["code"], "bad_args");

    let health = get(addr, "/healthz").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let nowhere = get(addr, "/v2/anything?secret=zzz-query-value").await;
    assert_eq!(nowhere.status, 404);
    assert_eq!(nowhere.json()["error"], "not_found");
    assert!(!nowhere.body.contains("zzz-query-value"));
    let post = request(addr, "POST", "/v1/fetch", &["Content-Length: 0"]).await;
    assert_eq!(post.status, 405);
    // Request limits: headers past 16 KiB, a query past 8 KiB.
    let big = format!("X-Big: {}", "a".repeat(20 * 1024));
    let too_big = request(addr, "GET", "/healthz", &[&big]).await;
    assert_eq!(too_big.status, 431);
    let long = format!("/v1/fetch?url={}", "a".repeat(9 * 1024));
    assert_eq!(get(addr, &long).await.status, 414);
    // A Host that does not name loopback (DNS rebinding) is refused.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let target = fetch_target(&server, "/page", "");
    let head = format!("GET {target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    assert!(raw.starts_with("HTTP/1.1 403"), "{raw}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_a_token_asks_for_it_on_every_endpoint_but_healthz() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let mut token_file = tempfile::NamedTempFile::new().unwrap();
    writeln!(token_file, "{TOKEN}").unwrap();
    let mut served = Served::start(
        &Config::new(&[server.address().port()]),
        &["--token-file", token_file.path().to_str().unwrap()],
        &[],
    );
    let addr = served.addr;
    let target = fetch_target(&server, "/page", "");
    let missing = get(addr, &target).await;
    assert_eq!(missing.status, 401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let wrong = request(
        addr,
        "GET",
        &target,
        &["Authorization: Bearer not-the-token-at-all"],
    )
    .await;
    assert_eq!(wrong.status, 401);
    let right_header = format!("Authorization: Bearer {TOKEN}");
    let right = request(addr, "GET", &target, &[&right_header]).await;
    assert_eq!(right.status, 200, "{}", right.body);
    assert_eq!(right.json()["title"], "Served");
    assert_eq!(get(addr, "/healthz").await.status, 200);
    let mcp = request(addr, "POST", "/mcp", &["Content-Length: 0"]).await;
    assert_eq!(mcp.status, 401);
    for reply in [&missing, &wrong, &mcp] {
        assert!(!reply.body.contains(TOKEN));
    }

    // rmcp's client with the token lists the tool.
    let client = mcp_client(&served, Some(TOKEN)).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
    let logs = served.stop().await;
    assert!(!logs.contains(TOKEN), "{logs}");
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token() {
    let output = Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env_remove("WEBFETCH_SERVE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
    // A token too short to protect anything is refused too, without echo.
    let output = Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("WEBFETCH_SERVE_TOKEN", "tiny-secret")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("tiny-secret"), "{stderr}");
}

/// A raw MCP `tools/call` of `web_fetch` for `url` (stateless: no session).
fn mcp_call_body(url: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": { "name": "web_fetch", "arguments": { "url": url } }
    })
    .to_string()
}

/// A cross-site browser request (a foreign or `null` `Origin`,
/// another port or loopback address, or without `Origin` a `Sec-Fetch-Site`
/// of `cross-site` or `same-site`) is refused with `403 forbidden_origin` on
/// every route, `/healthz` and unknown paths included, with or without a token
/// and before the token check; the upstream never sees a request, and each
/// refusal is one log line without the query or the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_cross_site_callers_on_every_route_with_or_without_a_token() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let config = Config::new(&[server.address().port()]);
    let mut token_file = tempfile::NamedTempFile::new().unwrap();
    writeln!(token_file, "{TOKEN}").unwrap();
    let open = Served::start(&config, &[], &[]);
    let guarded = Served::start(
        &config,
        &["--token-file", token_file.path().to_str().unwrap()],
        &[],
    );
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let fetch = fetch_target(&server, "/page", "");
    let call = mcp_call_body(&format!(
        "http://127.0.0.1:{}/page",
        server.address().port()
    ));
    let mcp_headers = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ];
    let mut refusals = [0, 0];
    for (index, served, credentials) in [
        (0, &open, None),
        (1, &guarded, None),
        (1, &guarded, Some(bearer.as_str())),
    ] {
        // Another port of the same host is another origin.
        let other_port = format!("Origin: http://127.0.0.1:{}", served.addr.port() ^ 1);
        // Another loopback address at the same port is another listener's.
        let other_loopback = format!("Origin: http://127.0.0.2:{}", served.addr.port());
        let cross_site: [&[&str]; 7] = [
            &["Origin: https://evil.example"],
            &["Origin: null"],
            &[&other_port],
            &[&other_loopback],
            &["Sec-Fetch-Site: cross-site"],
            // A page on another loopback port is the same site to a browser.
            &["Sec-Fetch-Site: same-site"],
            &["Origin: https://evil.example", "Sec-Fetch-Site: same-site"],
        ];
        for browser in cross_site {
            let mut headers: Vec<&str> = browser.to_vec();
            headers.extend(credentials);
            let mut with_mcp = headers.clone();
            with_mcp.extend(mcp_headers);
            let replies = [
                exchange(served.addr, "GET", &fetch, &headers, "").await,
                exchange(served.addr, "POST", "/mcp", &with_mcp, &call).await,
                exchange(served.addr, "GET", "/healthz", &headers, "").await,
                exchange(served.addr, "GET", "/nowhere?q=zzz-query", &headers, "").await,
            ];
            for reply in replies {
                assert_eq!(reply.status, 403, "{browser:?}: {}", reply.body);
                let body = reply.json();
                assert_eq!(body["error"], "forbidden_origin", "{browser:?}");
                let message = body["message"].as_str().unwrap();
                assert!(message.contains("allowed_origins"), "{message}");
                assert!(!reply.body.contains(TOKEN));
                refusals[index] += 1;
            }
        }
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    let needle = "refused a cross-site request";
    let logs =
        open.logs_with(needle, refusals[0]).await + &guarded.logs_with(needle, refusals[1]).await;
    assert_eq!(logs.matches(needle).count(), refusals[0] + refusals[1]);
    assert!(logs.contains("origin=\"https://evil.example\""), "{logs}");
    assert!(
        !logs.contains("zzz-query") && !logs.contains(TOKEN),
        "{logs}"
    );
}

/// What is not cross-site is served: the listener's own
/// origins (`127.0.0.1`, `localhost` at its port), an origin listed in
/// `[tools.webfetch.serve] allowed_origins` (also when it says `cross-site`),
/// `Sec-Fetch-Site: none` or `same-origin`, and no browser header at all; on
/// `/v1/fetch` and, with rmcp's client sending `Origin`, on `/mcp`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_admits_its_own_origins_the_allowlist_and_non_browser_callers() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let config = Config::new(&[server.address().port()])
        .section("[tools.webfetch.serve]\nallowed_origins = [\"https://agents.example\"]");
    let mut served = Served::start(&config, &[], &[]);
    let port = served.addr.port();
    let loopback_ip = format!("Origin: http://127.0.0.1:{port}");
    let localhost = format!("Origin: http://localhost:{port}");
    let admitted: [&[&str]; 7] = [
        &[],
        &[&loopback_ip, "Sec-Fetch-Site: same-origin"],
        &[&localhost],
        &["Origin: https://agents.example"],
        &[
            "Origin: https://agents.example",
            "Sec-Fetch-Site: cross-site",
        ],
        &["Sec-Fetch-Site: none"],
        &["Sec-Fetch-Site: same-origin"],
    ];
    let target = fetch_target(&server, "/page", "");
    for headers in admitted {
        let reply = request(served.addr, "GET", &target, headers).await;
        assert_eq!(reply.status, 200, "{headers:?}: {}", reply.body);
        assert_eq!(reply.json()["title"], "Served");
    }
    assert_eq!(hits(&server, "/page").await, admitted.len());

    let url = format!("http://127.0.0.1:{}/page", server.address().port());
    let own = format!("http://localhost:{port}");
    for origin in ["https://agents.example", own.as_str()] {
        let client = mcp_client_from(&served, None, Some(origin)).await;
        let Value::Object(arguments) = json!({ "url": url }) else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(
            result.is_error,
            Some(false),
            "{origin}: {:?}",
            result.content
        );
        client.cancel().await.unwrap();
    }
    assert_eq!(hits(&server, "/page").await, admitted.len() + 2);
    let logs = served.stop().await;
    assert!(!logs.contains("refused a cross-site"), "{logs}");
}

/// 50 agents calling at once for pages of one origin share one
/// robots.txt fetch (the origin cache's single-flight, across all sessions).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_fifty_concurrent_calls_fetch_robots_txt_once() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/robots.txt",
        ResponseTemplate::new(200)
            .set_body_raw(b"User-agent: *\nAllow: /\n".to_vec(), "text/plain")
            .set_delay(Duration::from_millis(300)),
    )
    .await;
    for i in 0..50 {
        serve(&server, &format!("/p{i}"), html(PAGE)).await;
    }
    let served = Served::start(&Config::new(&[server.address().port()]), &[], &[]);
    let addr = served.addr;
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let target = fetch_target(&server, &format!("/p{i}"), "");
            tokio::spawn(async move { get(addr, &target).await })
        })
        .collect();
    for call in calls {
        let reply = call.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    assert_eq!(hits(&server, "/robots.txt").await, 1);
    let pages = server.received_requests().await.unwrap().len() - 1;
    assert_eq!(pages, 50);
}

/// SIGTERM with a call in flight: the call completes, then the process exits 0.
/// The origin holds the page until the server has begun shutting down, so the
/// call is in flight through the whole shutdown, however slow the machine.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_sigterm_lets_the_call_in_flight_finish_then_exits_0() {
    let origin = Origin::start(PAGE);
    let mut served = Served::start(&Config::new(&[origin.port()]), &[], &[]);
    let addr = served.addr;
    let target = target(&origin.url("/held/slow"));
    let mut call = tokio::spawn(async move { get(addr, &target).await });
    // The page request reached the origin: the call is in flight.
    until(origin.wait_for("/held/slow", 1), [&mut call]).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(served.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    until(served.logs_with("serve_shutdown", 1), [&mut call]).await;
    origin.open();
    let reply = call.await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["title"], "Served");
    let (status, mut served) = tokio::task::spawn_blocking(move || {
        let status = wait_within(&mut served.child, Duration::from_secs(60));
        (status, served)
    })
    .await
    .unwrap();
    // It has exited: the wait ends with the line or with the pipe's end.
    let logs = served.logs_with("webfetch serve: stopped", 1).await;
    assert!(status.success(), "{status:?}: {logs}");
    // stdout carries nothing: logs and the announcement go to stderr.
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut served.child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(stdout, "");
}

/// Scale past one machine: two `serve` processes on one cache directory. What
/// one fetched, the other serves from the cache (same `fetched_at`, no second
/// upstream request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_two_processes_share_one_cache_directory() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let cache = tempfile::tempdir().unwrap();
    let config = Config::new(&[server.address().port()]).cache(cache.path());
    let first = Served::start(&config, &[], &[]);
    let second = Served::start(&config, &[], &[]);
    let target = fetch_target(&server, "/page", "");
    let fresh = get(first.addr, &target).await;
    assert_eq!(fresh.status, 200, "{}", fresh.body);
    let cached = get(second.addr, &target).await;
    assert_eq!(cached.status, 200, "{}", cached.body);
    let (fresh, cached) = (fresh.json(), cached.json());
    assert_eq!(cached["notes"], json!(["cache_hit"]));
    assert_eq!(cached["fetched_at"], fresh["fetched_at"]);
    assert_eq!(cached["chunks"], fresh["chunks"]);
    assert_eq!(hits(&server, "/page").await, 1);
}

/// A loopback server that holds each `/page*` request for `hold` and records how
/// many were in flight at once; anything else is a 404 at once.
struct Upstream {
    port: u16,
    pages: Arc<Mutex<(usize, usize, usize)>>,
}

impl Upstream {
    fn start(hold: Duration) -> Upstream {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // (in flight, most at once, total)
        let pages = Arc::new(Mutex::new((0, 0, 0)));
        let counts = Arc::clone(&pages);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let counts = Arc::clone(&counts);
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let Some(path) = request_path(&stream) else {
                        return;
                    };
                    let is_page = path.starts_with("/page");
                    let reply = if is_page {
                        {
                            let mut c = counts.lock().unwrap();
                            c.0 += 1;
                            c.1 = c.1.max(c.0);
                            c.2 += 1;
                        }
                        std::thread::sleep(hold);
                        counts.lock().unwrap().0 -= 1;
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                            PAGE.len()
                        )
                    } else {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_owned()
                    };
                    let _ = stream.write_all(reply.as_bytes());
                });
            }
        });
        Upstream { port, pages }
    }
}

/// `[tools.webfetch.browser] max_concurrent_renders = 1`: three browser calls at
/// once render one after the other (the upstream never sees two page requests
/// at once), and all succeed within their timeout. Needs Chromium
/// (`FORGE_TEST_CHROMIUM_PATH`), skipped otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_caps_concurrent_browser_renders() {
    let Some(chromium) = chromium() else { return };
    let upstream = Upstream::start(Duration::from_millis(800));
    let config = Config::new(&[upstream.port])
        .timeout(60)
        .section(&browser_section(&chromium, "max_concurrent_renders = 1"));
    let served = Served::start(&config, &[], &[]);
    let addr = served.addr;
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let url = format!("http://127.0.0.1:{}/page{i}", upstream.port);
            let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
            let target = format!("/v1/fetch?url={encoded}&force_browser=true");
            tokio::spawn(async move { get(addr, &target).await })
        })
        .collect();
    for call in calls {
        let reply = call.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["rendering_method"], "browser");
    }
    let (_, most, total) = *upstream.pages.lock().unwrap();
    assert_eq!(total, 3);
    assert_eq!(most, 1, "renders overlapped");
}

/// `POST /v1/fetch_batch`: the batch tool's arguments as a JSON body, its
/// items in order; only JSON is taken, only by POST, and arguments that are
/// not a batch are `400 bad_args`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_fetch_batch_answers_each_url_in_order() {
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let config = Config::new(&[server.address().port()]);
    let served = Served::start(&config, &[], &[]);
    let page = format!("http://127.0.0.1:{}/page", server.address().port());
    let body = json!({ "urls": [page, "http://10.0.0.1/"], "extraction": "srd" }).to_string();
    let json_type = ["Content-Type: application/json"];
    let reply = exchange(served.addr, "POST", "/v1/fetch_batch", &json_type, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer: webfetch::BatchResponse = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(answer.results.len(), 2);
    assert_eq!(answer.results[0].url, page);
    let response = answer.results[0].response.as_ref().expect("the page");
    assert!(
        response.chunks[0]
            .text
            .contains("A page fetched through webfetch serve.")
    );
    assert_eq!(
        answer.results[1].error.as_ref().unwrap().code,
        "ssrf_blocked"
    );

    let get = exchange(served.addr, "GET", "/v1/fetch_batch", &[], "").await;
    assert_eq!(get.status, 405);
    let form = ["Content-Type: application/x-www-form-urlencoded"];
    let not_json = exchange(served.addr, "POST", "/v1/fetch_batch", &form, &body).await;
    assert_eq!(not_json.status, 415);
    let empty = json!({ "urls": [] }).to_string();
    let refused = exchange(served.addr, "POST", "/v1/fetch_batch", &json_type, &empty).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["code"], "bad_args");
}
