//! Fetch tests: the real HTTP client against loopback servers (wiremock, and a
//! small plain+TLS server for the scheme-change redirects). DNS is the stub.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::ErrorCode;
use webfetch::FetchError;
use webfetch::Settings;
use webfetch::internals::pass::Pass;
use webfetch::internals::render::{FetchedDocument, fetch_document};
use webfetch::internals::robots::{CROSS_ORIGIN_REDIRECT, RobotsChecker, RobotsHopCheck};
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{Note, Notes};
use webfetch::{SsrfError, SsrfValidator};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// One tool instance: settings from TOML through the real loader, the client
/// with the stub resolver, the checker with its origin cache.
struct Tool {
    settings: Arc<Settings>,
    client: HttpClient,
    checker: RobotsChecker,
}

impl Tool {
    /// `top` goes in `[tools.webfetch]`, `robots` in `[tools.webfetch.robots]`.
    /// Loopback is unblocked through the visible gate; everything else stays
    /// blocked.
    fn new(ports: &[u16], top: &str, robots: &str) -> Tool {
        Tool::with_root(ports, top, robots, None)
    }

    fn with_root(ports: &[u16], top: &str, robots: &str, root: Option<Vec<u8>>) -> Tool {
        Tool::build(ports, top, robots, root, |stub| Arc::new(stub))
    }

    /// [`Tool::new`] resolving through a [`Counting`] wrapper of the stub, returned
    /// with it.
    fn counting(ports: &[u16], top: &str, robots: &str) -> (Tool, Arc<Counting>) {
        let mut counting = None;
        let tool = Tool::build(ports, top, robots, None, |stub| {
            let wrapper = Arc::new(Counting {
                inner: stub,
                resolved: Mutex::new(Vec::new()),
                validated: Mutex::new(Vec::new()),
            });
            counting = Some(Arc::clone(&wrapper));
            wrapper
        });
        (tool, counting.unwrap())
    }

    fn build(
        ports: &[u16],
        top: &str,
        robots: &str,
        root: Option<Vec<u8>>,
        wrap: impl FnOnce(StubValidator) -> Arc<dyn SsrfValidator>,
    ) -> Tool {
        let toml = format!(
            "[tools.webfetch]\n{top}\n\
             [tools.webfetch.security]\nallow_insecure_overrides = true\n\
             block_loopback = false\nallowed_ports = {ports:?}\n\
             [tools.webfetch.robots]\n{robots}\n"
        );
        let settings = Arc::new(
            webfetch::load_str(&toml, webfetch::LoadOptions::default())
                .unwrap()
                .settings,
        );
        let validator = StubValidator::new(&settings.security)
            .with_host("site.test", &[LOOPBACK])
            .with_host("other.test", &[LOOPBACK])
            .with_host("blocked.test", &["10.0.0.1".parse().unwrap()]);
        let mut client = HttpClient::new(Arc::clone(&settings), wrap(validator));
        if let Some(der) = root {
            client = client.with_root_certificate(der).unwrap();
        }
        let checker = RobotsChecker::new(Arc::clone(&settings));
        Tool {
            settings,
            client,
            checker,
        }
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.settings.timeout()
    }

    /// `start` fetched as a document with robots.txt checked for every URL of
    /// its chain, within one pass; the notes the checks added.
    async fn fetch_checked(&self, start: &str) -> (Result<FetchedDocument, FetchError>, Notes) {
        let start = CanonicalUrl::parse(start).unwrap();
        let pass = Pass::new();
        let hook = RobotsHopCheck::new(&self.checker, &self.client, &pass);
        let fetched = fetch_document(
            &self.client,
            &start,
            self.deadline(),
            Some(&hook),
            Some(&pass),
        )
        .await;
        (fetched, hook.into_notes())
    }

    async fn check(&self, target: &str) -> (Result<(), FetchError>, Notes) {
        let mut notes = Notes::new();
        let url = CanonicalUrl::parse(target).unwrap();
        let result = self
            .checker
            .check(&self.client, &url, self.deadline(), &mut notes)
            .await;
        (result, notes)
    }
}

/// The stub resolver, recording every name it is asked to resolve and every
/// address it is asked to check.
struct Counting {
    inner: StubValidator,
    resolved: Mutex<Vec<String>>,
    validated: Mutex<Vec<IpAddr>>,
}

impl Counting {
    fn resolved(&self) -> Vec<String> {
        self.resolved.lock().unwrap().clone()
    }

    fn validated(&self) -> Vec<IpAddr> {
        self.validated.lock().unwrap().clone()
    }
}

impl SsrfValidator for Counting {
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError> {
        self.validated.lock().unwrap().push(ip);
        self.inner.validate_ip(ip)
    }

    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError> {
        self.resolved.lock().unwrap().push(host.to_owned());
        self.inner.resolve_and_validate(host)
    }
}

async fn robots(server: &MockServer, response: ResponseTemplate, times: u64) {
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .respond_with(response)
        .expect(times)
        .mount(server)
        .await;
}

fn text(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/plain")
        .set_body_string(body)
}

/// [`text`] answered only after 30 s, far past a 1 s timeout.
fn slow_text(body: &str) -> ResponseTemplate {
    text(body).set_delay(Duration::from_secs(30))
}

fn redirect(status: u16, location: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).insert_header("location", location)
}

/// A new server whose robots.txt answers `response`, expected `times` times, and a
/// [`Tool`] for its port built by [`Tool::new`] from `top` and `robots_section`.
async fn robots_server(
    response: ResponseTemplate,
    times: u64,
    top: &str,
    robots_section: &str,
) -> (MockServer, Tool) {
    let server = MockServer::start().await;
    robots(&server, response, times).await;
    let tool = Tool::new(&[port(&server)], top, robots_section);
    (server, tool)
}

/// `path` on `server` as an `http://127.0.0.1:PORT` URL.
fn local(server: &MockServer, path: &str) -> String {
    format!("http://127.0.0.1:{}{path}", port(server))
}

fn port(server: &MockServer) -> u16 {
    server.address().port()
}

fn code(result: &Result<(), FetchError>) -> Option<ErrorCode> {
    result.as_ref().err().map(|e| e.code())
}

#[tokio::test]
async fn t_wf_rob_06_404_is_allow_all_and_cached() {
    let (server, tool) = robots_server(ResponseTemplate::new(404), 1, "", "").await;
    for target in ["/", "/private/x", "/any?q=1"] {
        let (result, notes) = tool.check(&local(&server, target)).await;
        assert!(result.is_ok(), "{target}: {result:?}");
        assert!(notes.is_empty());
    }
}

#[tokio::test]
async fn t_wf_rob_07_timeout_without_fail_open_is_timeout_phase_robots() {
    let slow = slow_text("User-agent: *\nAllow: /\n");
    let (server, tool) = robots_server(slow, 1, "timeout_seconds = 1", "fail_open = false").await;
    let (result, notes) = tool.check(&local(&server, "/page")).await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "robots");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    assert!(notes.is_empty());
}

#[tokio::test]
async fn t_wf_rob_08_timeout_with_fail_open_allows_with_note() {
    let slow = slow_text("User-agent: *\nDisallow: /\n");
    let (server, tool) = robots_server(slow, 1, "timeout_seconds = 1", "fail_open = true").await;
    let (result, notes) = tool.check(&local(&server, "/page")).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(notes.contains(Note::RobotsUnavailableFailOpen));
    assert!(tool.checker.cache().is_empty(), "fail-open is never cached");
}

#[tokio::test]
async fn t_wf_rob_09_origins_are_isolated_by_port_and_scheme() {
    let strict = MockServer::start().await;
    robots(&strict, text("User-agent: *\nDisallow: /x\n"), 1).await;
    let open = MockServer::start().await;
    robots(&open, ResponseTemplate::new(404), 1).await;
    let tool = Tool::new(&[port(&strict), port(&open)], "", "");
    let (strict_result, _) = tool.check(&local(&strict, "/x")).await;
    assert_eq!(code(&strict_result), Some(ErrorCode::RobotsDisallowed));
    let (open_result, _) = tool.check(&local(&open, "/x")).await;
    assert!(open_result.is_ok(), "another port is another origin");
    // Same host and port, other scheme: its own retrieval (a TLS handshake with
    // a plain-HTTP server, which fails), not the cached http rules.
    let (https_result, _) = tool
        .check(&format!("https://127.0.0.1:{}/y", port(&strict)))
        .await;
    let error = https_result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(
        error.details_json()["origin"],
        format!("https://127.0.0.1:{}", port(&strict))
    );
    // And the http origin is still served from its cache (expect(1) above).
    let (again, _) = tool.check(&local(&strict, "/x")).await;
    assert_eq!(code(&again), Some(ErrorCode::RobotsDisallowed));
}

#[tokio::test]
async fn t_wf_rob_12_403_and_other_4xx_are_allow_all() {
    for status in [401, 403, 410, 429] {
        let (server, tool) =
            robots_server(ResponseTemplate::new(status), 1, "", "fail_open = false").await;
        for _ in 0..2 {
            let (result, notes) = tool.check(&local(&server, "/private")).await;
            assert!(result.is_ok(), "{status}: {result:?}");
            assert!(notes.is_empty());
        }
    }
}

#[tokio::test]
async fn t_wf_rob_13_oversized_robots_parses_the_prefix_only() {
    let logs = crate::support::LogBuffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // 64-byte cap: the cut falls inside `Disallow: /second`, after `/seco`.
    let body = "User-agent: *\nDisallow: /first\n# padding padding\nDisallow: /second\n";
    assert_eq!(
        &body[..64],
        "User-agent: *\nDisallow: /first\n# padding padding\nDisallow: /seco"
    );
    let (server, tool) = robots_server(text(body), 1, "", "max_robots_bytes = 64").await;
    let (first, notes) = tool.check(&local(&server, "/first")).await;
    assert_eq!(code(&first), Some(ErrorCode::RobotsDisallowed));
    assert!(notes.is_empty(), "truncation is silent: no note");
    let (second, _) = tool.check(&local(&server, "/second")).await;
    assert!(second.is_ok(), "rules past the cap do not apply");
    let (partial, _) = tool.check(&local(&server, "/seco")).await;
    assert!(
        partial.is_ok(),
        "the partial line must not become `Disallow: /seco`"
    );
    assert!(
        logs.text().contains("robots.txt truncated at 64 bytes"),
        "{}",
        logs.text()
    );
}

#[tokio::test]
async fn robots_size_01a_the_cap_applies_to_decompressed_bytes() {
    let mut body = String::from("User-agent: *\nDisallow: /early\n");
    body.push_str(&"# padding, very compressible\n".repeat(2_000));
    body.push_str("Disallow: /late\n");
    let mut gzipped = Vec::new();
    async_compression::tokio::bufread::GzipEncoder::new(body.as_bytes())
        .read_to_end(&mut gzipped)
        .await
        .unwrap();
    assert!(gzipped.len() < 1_000 && body.len() > 20_000);
    let response = ResponseTemplate::new(200)
        .insert_header("content-type", "text/plain")
        .insert_header("content-encoding", "gzip")
        .set_body_bytes(gzipped);
    let (server, tool) = robots_server(response, 1, "", "max_robots_bytes = 1000").await;
    let (early, _) = tool.check(&local(&server, "/early")).await;
    assert_eq!(code(&early), Some(ErrorCode::RobotsDisallowed));
    let (late, _) = tool.check(&local(&server, "/late")).await;
    assert!(late.is_ok(), "rules past the decompressed cap do not apply");
}

#[tokio::test]
async fn robots_ua_02_robots_is_fetched_with_the_configured_user_agent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .and(header("user-agent", "AcmeBot/2.0 (+https://acme.example)"))
        .respond_with(text("User-agent: acmebot\nDisallow: /no\n"))
        .expect(1)
        .mount(&server)
        .await;
    let tool = Tool::new(
        &[port(&server)],
        "user_agent = \"AcmeBot/2.0 (+https://acme.example)\"",
        "",
    );
    let (result, _) = tool.check(&local(&server, "/no")).await;
    assert_eq!(code(&result), Some(ErrorCode::RobotsDisallowed));
}

#[tokio::test]
async fn t_wf_rob_16_cross_origin_redirect_is_unavailable() {
    let elsewhere = MockServer::start().await;
    robots(&elsewhere, text("User-agent: *\nAllow: /\n"), 0).await;
    let server = MockServer::start().await;
    let target = local(&elsewhere, "/robots.txt");
    robots(&server, redirect(301, &target), 2).await;
    let ports = [port(&server), port(&elsewhere)];
    let page = local(&server, "/page");

    let strict = Tool::new(&ports, "", "fail_open = false");
    let (result, _) = strict.check(&page).await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
    assert_eq!(
        error.details_json()["origin"],
        format!("http://127.0.0.1:{}", port(&server))
    );

    let open = Tool::new(&ports, "", "fail_open = true");
    let (result, notes) = open.check(&page).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(notes.contains(Note::RobotsUnavailableFailOpen));
}

#[tokio::test]
async fn t_wf_rob_17_fail_open_outcomes_are_not_cached() {
    let (server, tool) = robots_server(ResponseTemplate::new(503), 3, "", "fail_open = true").await;
    for _ in 0..3 {
        let (result, notes) = tool.check(&local(&server, "/x")).await;
        assert!(result.is_ok());
        assert!(notes.contains(Note::RobotsUnavailableFailOpen));
    }
    assert!(tool.checker.cache().is_empty());
}

#[tokio::test]
async fn fr_wf_09a_5xx_without_fail_open_is_robots_unavailable() {
    let (server, tool) =
        robots_server(ResponseTemplate::new(503), 2, "", "fail_open = false").await;
    for _ in 0..2 {
        let (result, notes) = tool.check(&local(&server, "/x")).await;
        let error = result.unwrap_err();
        assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
        assert_eq!(error.details_json()["error"], "http_5xx");
        assert!(error.is_retryable());
        assert!(notes.is_empty());
    }
}

/// A loopback server answering plain HTTP and TLS on one port (a first byte of
/// 0x16 is a TLS handshake), one fixed response per protocol. Needed because a
/// same-port http <-> https redirect cannot be served by two servers.
struct DualServer {
    port: u16,
    root: Vec<u8>,
    plain_hits: Arc<AtomicUsize>,
    tls_hits: Arc<AtomicUsize>,
}

impl DualServer {
    async fn start(plain: impl Fn(u16) -> String, tls: impl Fn(u16) -> String) -> DualServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let (plain, tls) = (Arc::new(plain(port)), Arc::new(tls(port)));
        let plain_hits = Arc::new(AtomicUsize::new(0));
        let tls_hits = Arc::new(AtomicUsize::new(0));
        let (plain_count, tls_count) = (Arc::clone(&plain_hits), Arc::clone(&tls_hits));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, plain, tls) =
                    (acceptor.clone(), Arc::clone(&plain), Arc::clone(&tls));
                let (plain_count, tls_count) = (Arc::clone(&plain_count), Arc::clone(&tls_count));
                tokio::spawn(async move {
                    let mut first = [0u8; 1];
                    if stream.peek(&mut first).await.is_err() {
                        return;
                    }
                    if first[0] == 0x16 {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            answer(stream, &tls, &tls_count).await;
                        }
                    } else {
                        answer(stream, &plain, &plain_count).await;
                    }
                });
            }
        });
        DualServer {
            port,
            root: cert.der().to_vec(),
            plain_hits,
            tls_hits,
        }
    }

    /// A [`Tool`] trusting this server's certificate, with `robots` settings.
    fn tool(&self, robots: &str) -> Tool {
        Tool::with_root(&[self.port], "", robots, Some(self.root.clone()))
    }

    /// `path` on this server under `scheme` (`http` or `https`).
    fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }
}

/// Reads one request head, counts it, writes the canned response, closes.
async fn answer(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
    response: &str,
    hits: &AtomicUsize,
) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16_384 {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn raw_redirect(location: &str) -> String {
    format!(
        "HTTP/1.1 301 Moved Permanently\r\nLocation: {location}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

fn raw_text(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test]
async fn t_wf_rob_18_http_to_https_redirect_on_same_host_is_followed() {
    let server = DualServer::start(
        |port| raw_redirect(&format!("https://127.0.0.1:{port}/robots.txt")),
        |_| raw_text("User-agent: *\nDisallow: /secret\n"),
    )
    .await;
    let tool = server.tool("fail_open = false");
    let (result, notes) = tool.check(&server.url("http", "/secret")).await;
    // Disallowed by the rules served over https: the upgrade was followed.
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsDisallowed, "{error:?}");
    assert_eq!(
        error.details_json()["origin"],
        format!("http://127.0.0.1:{}", server.port)
    );
    assert!(notes.is_empty());
    assert_eq!(server.plain_hits.load(Ordering::SeqCst), 1);
    assert_eq!(server.tls_hits.load(Ordering::SeqCst), 1);
    let (other, _) = tool.check(&server.url("http", "/public")).await;
    assert!(other.is_ok());
}

#[tokio::test]
async fn t_wf_rob_19_https_to_http_redirect_is_unavailable() {
    let server = DualServer::start(
        |_| raw_text("User-agent: *\nAllow: /\n"),
        |port| raw_redirect(&format!("http://127.0.0.1:{port}/robots.txt")),
    )
    .await;
    let tool = server.tool("fail_open = false");
    let (result, _) = tool.check(&server.url("https", "/page")).await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable, "{error:?}");
    assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
    assert_eq!(
        error.details_json()["origin"],
        format!("https://127.0.0.1:{}", server.port)
    );
    assert_eq!(server.tls_hits.load(Ordering::SeqCst), 1);
    assert_eq!(
        server.plain_hits.load(Ordering::SeqCst),
        0,
        "the downgrade is never fetched"
    );

    let open = server.tool("fail_open = true");
    let (result, notes) = open.check(&server.url("https", "/page")).await;
    assert!(result.is_ok());
    assert!(notes.contains(Note::RobotsUnavailableFailOpen));
}

#[tokio::test]
async fn t_wf_rob_20_redirect_to_another_host_is_unavailable() {
    let server = MockServer::start().await;
    let target = format!("http://other.test:{}/robots.txt", port(&server));
    // Exactly one request: the hop to other.test (same server) is never sent.
    robots(&server, redirect(302, &target), 1).await;
    let tool = Tool::new(&[port(&server)], "", "fail_open = false");
    let (result, _) = tool
        .check(&format!("http://site.test:{}/page", port(&server)))
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
    assert_eq!(
        error.details_json()["origin"],
        format!("http://site.test:{}", port(&server))
    );
}

/// SRD-READINGS 27: the scope is judged on the Location URL before the port
/// policy. `127.0.0.1:1` is another port and not in `allowed_ports`: the hop is
/// out of scope (unavailable), never `port_blocked`, and never contacted.
#[tokio::test]
async fn srd_readings_27_redirect_to_another_port_is_out_of_scope_not_port_blocked() {
    let server = MockServer::start().await;
    robots(&server, redirect(302, "http://127.0.0.1:1/robots.txt"), 2).await;
    let (strict, counting) = Tool::counting(&[port(&server)], "", "fail_open = false");
    let (result, notes) = strict.check(&local(&server, "/page")).await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
    assert_eq!(
        error.details_json()["origin"],
        format!("http://127.0.0.1:{}", port(&server))
    );
    assert!(notes.is_empty());
    // Only the robots.txt origin's own address was ever checked.
    assert_eq!(counting.validated(), [LOOPBACK]);

    let open = Tool::new(&[port(&server)], "", "fail_open = true");
    let (result, notes) = open.check(&local(&server, "/page")).await;
    assert!(result.is_ok());
    assert!(notes.contains(Note::RobotsUnavailableFailOpen));
}

/// SRD-READINGS 27: a hop to the metadata address is out of scope before it is
/// an SSRF question: unavailable (failing open with a note when configured),
/// never `ssrf_blocked`, and the address is never checked or contacted.
#[tokio::test]
async fn srd_readings_27_redirect_to_metadata_address_is_unavailable_not_ssrf_blocked() {
    for fail_open in [false, true] {
        let server = MockServer::start().await;
        robots(
            &server,
            redirect(301, "http://169.254.169.254/robots.txt"),
            1,
        )
        .await;
        let (tool, counting) = Tool::counting(
            &[80, port(&server)],
            "",
            &format!("fail_open = {fail_open}"),
        );
        let (result, notes) = tool.check(&local(&server, "/page")).await;
        if fail_open {
            assert!(result.is_ok());
            assert!(notes.contains(Note::RobotsUnavailableFailOpen));
        } else {
            let error = result.unwrap_err();
            assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
            assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
        }
        assert_eq!(counting.validated(), [LOOPBACK], "fail_open = {fail_open}");
        assert!(counting.resolved().is_empty());
    }
}

/// SRD-READINGS 27: the out-of-scope host is never resolved (and the same
/// server behind it gets no second request), while the robots.txt origin's
/// own name is resolved once.
#[tokio::test]
async fn srd_readings_27_out_of_scope_host_is_never_resolved() {
    let server = MockServer::start().await;
    let target = format!("http://other.test:{}/robots.txt", port(&server));
    robots(&server, redirect(302, &target), 1).await;
    let (tool, counting) = Tool::counting(&[port(&server)], "", "fail_open = false");
    let (result, _) = tool
        .check(&format!("http://site.test:{}/page", port(&server)))
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(error.details_json()["error"], CROSS_ORIGIN_REDIRECT);
    assert_eq!(counting.resolved(), ["site.test"]);
}

#[tokio::test]
async fn robots_fetch_01_same_origin_redirects_are_followed_up_to_the_limit() {
    let (server, tool) = robots_server(redirect(301, "/moved/robots.txt"), 1, "", "").await;
    Mock::given(path("/moved/robots.txt"))
        .respond_with(text("User-agent: *\nDisallow: /p\n"))
        .expect(1)
        .mount(&server)
        .await;
    let (result, _) = tool.check(&local(&server, "/p")).await;
    assert_eq!(code(&result), Some(ErrorCode::RobotsDisallowed));

    // A loop past max_redirects is unavailable, not a document error.
    let (looping, tool) =
        robots_server(redirect(302, "/robots.txt"), 3, "max_redirects = 2", "").await;
    let (result, _) = tool.check(&local(&looping, "/p")).await;
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsUnavailable);
    assert_eq!(error.details_json()["error"], "redirect_limit");
}

#[tokio::test]
async fn robots_fetch_01_ssrf_policy_applies_to_the_robots_retrieval() {
    // blocked.test resolves to 10.0.0.1 (private, still blocked): no connection
    // is attempted, and the refusal keeps its code even under fail_open.
    for fail_open in [false, true] {
        let tool = Tool::new(&[80], "", &format!("fail_open = {fail_open}"));
        for target in [
            "http://blocked.test/page",
            "http://169.254.169.254/latest",
            "http://[::ffff:10.0.0.1]/x",
        ] {
            let (result, notes) = tool.check(target).await;
            let error = result.unwrap_err();
            assert_eq!(error.code(), ErrorCode::SsrfBlocked, "{target}");
            assert!(notes.is_empty());
        }
    }
    // The port policy too: 8081 is not allowed.
    let tool = Tool::new(&[80], "", "fail_open = true");
    let (result, _) = tool.check("http://site.test:8081/page").await;
    assert_eq!(code(&result), Some(ErrorCode::PortBlocked));
}

#[tokio::test]
async fn fr_wf_07e_every_redirect_hop_of_a_document_is_checked() {
    let (server, tool) =
        robots_server(text("User-agent: *\nDisallow: /blocked\n"), 1, "", "").await;
    Mock::given(path("/start"))
        .respond_with(redirect(302, "/blocked"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/blocked"))
        .respond_with(text("secret"))
        .expect(0)
        .mount(&server)
        .await;
    let error = tool
        .fetch_checked(&local(&server, "/start"))
        .await
        .0
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::RobotsDisallowed);
    assert_eq!(error.details_json()["path"], "/blocked");
}

#[tokio::test]
async fn fr_wf_07e_a_hop_to_another_origin_uses_that_origins_robots() {
    let target = MockServer::start().await;
    robots(&target, ResponseTemplate::new(503), 1).await;
    Mock::given(path("/page"))
        .respond_with(text("hello"))
        .expect(1)
        .mount(&target)
        .await;
    let source = MockServer::start().await;
    let location = local(&target, "/page");
    Mock::given(path("/start"))
        .respond_with(redirect(301, &location))
        .expect(1)
        .mount(&source)
        .await;
    let tool = Tool::new(&[port(&source), port(&target)], "", "fail_open = true");
    let (document, notes) = tool.fetch_checked(&local(&source, "/start")).await;
    assert_eq!(&document.unwrap().body[..], b"hello");
    assert!(notes.contains(Note::RobotsUnavailableFailOpen));
}
