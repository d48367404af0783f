//! Browser mode against real Chromium (SRD 6.7, T-WF-INFRA-04/05).
//!
//! Skipped unless `FORGE_TEST_CHROMIUM_PATH` names a Chromium binary
//! (T-WF-BR-ENV-01). Pages come from wiremock on 127.0.0.1; the test config opens
//! loopback only through the visible gate (`allow_insecure_overrides`,
//! `block_loopback = false`) and keeps the rest blocked: other ports by the port
//! allowlist, `127.0.0.2` by `additional_blocked_cidrs`, and the private,
//! link-local and metadata ranges by default. DNS is the stub (T-WF-INFRA-01).
//!
//! Every render uses its own profile root, and every test checks afterwards that
//! the root is empty and no process names it (BROWSER-ISO-01). Tests run one at a
//! time: each starts a whole browser.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener as StdTcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::time::Instant;
use tracing::instrument::WithSubscriber as _;
use webfetch::CanonicalUrl;
use webfetch::Settings;
use webfetch::internals::cache::Variant;
use webfetch::internals::render::browser::{BrowserPage, RenderContext, render};
use webfetch::internals::transport::{HopHook, HttpClient};
use webfetch::testing::StubValidator;
use webfetch::{ErrorCode, FetchError};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::gate::Gate;
use crate::support::{
    BrowserTurn, Config, LogBuffer, browser_section, browser_turn, chromium, live_processes_naming,
    toml_string,
};

const INTERNAL_SECRET: &str = "LEAKED_INTERNAL_DATA";
const UA: &str = "webfetch-browser-test/1.0";

/// One browser at a time: each test launches its own.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

mod fallback;
mod lifecycle;
mod navigation;
mod page_requests;
mod resources;
mod signed;
mod subresource_redirects;
mod walls;

/// The test configuration: loopback reachable on the listed ports only, 127.0.0.2
/// always blocked, `timeout_seconds = 15`, Chromium at `chromium` with
/// `network_idle_ms = 10000`. `browser` adds keys to `[tools.webfetch.browser]`.
fn config(chromium: &str, ports: &[u16], browser: &str) -> Config {
    Config::new(ports)
        .timeout(15)
        .top(&format!("user_agent = {}", toml_string(UA)))
        .security(r#"additional_blocked_cidrs = ["127.0.0.2/32"]"#)
        .section(&browser_section(chromium, browser))
}

/// [`config`] with no extra keys, through the real loader.
fn settings(chromium: &str, ports: &[u16]) -> Settings {
    config(chromium, ports, "").settings()
}

fn validator(settings: &Settings) -> StubValidator {
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    StubValidator::new(&settings.security)
        .with_host("page.test", &[ip("127.0.0.1")])
        .with_host("localhost", &[ip("127.0.0.1")])
        .with_host("internal.test", &[ip("127.0.0.2")])
        .with_host("metadata.test", &[ip("169.254.169.254")])
        .with_host("private.test", &[ip("10.0.0.1")])
        .with_host("mapped.test", &[ip("::ffff:10.0.0.1")])
}

/// A render plus what the test needs to inspect afterwards.
struct Run {
    result: Result<BrowserPage, FetchError>,
    logs: String,
}

impl Run {
    fn page(&self) -> &BrowserPage {
        match &self.result {
            Ok(page) => page,
            Err(error) => panic!("render failed: {}\nlogs:\n{}", error.to_json(), self.logs),
        }
    }

    fn error(&self) -> &FetchError {
        match &self.result {
            Ok(page) => panic!("render succeeded: {}", page.html),
            Err(error) => error,
        }
    }
}

/// The pinned client over the stub resolver.
fn stub_client(settings: Settings) -> HttpClient {
    let settings = Arc::new(settings);
    let validator = Arc::new(validator(&settings));
    HttpClient::new(settings, validator)
}

/// What one render needs to outlive its context: client, URL, profile root.
struct Target {
    client: HttpClient,
    url: CanonicalUrl,
    root: tempfile::TempDir,
}

impl Target {
    /// A target for `url` under `settings`, with a fresh profile root.
    fn new(settings: Settings, url: &str) -> Target {
        let client = stub_client(settings);
        let url = CanonicalUrl::parse(url).expect("test URL is valid");
        let root = profile_root();
        Target { client, url, root }
    }

    /// A render context due `timeout_seconds` from now, with profiles under `root`.
    fn context(&self) -> RenderContext<'_> {
        RenderContext::new(
            &self.client,
            &self.url,
            Instant::now() + self.client.settings().timeout(),
        )
        .with_profile_root(self.root.path().to_path_buf())
    }
}

/// Renders `url` with a fresh profile root, capturing `webfetch` logs, then checks
/// that nothing of the browser is left (BROWSER-ISO-01).
async fn run(settings: Settings, url: &str, hook: Option<&dyn HopHook>) -> Run {
    let target = Target::new(settings, url);
    let mut ctx = target.context();
    if let Some(hook) = hook {
        ctx = ctx.with_robots_hook(hook);
    }
    let buffer = LogBuffer::default();
    let subscriber = buffer.subscriber("webfetch=debug");
    let result = render(&ctx).with_subscriber(subscriber).await;
    assert_nothing_left(target.root.path());
    let logs = buffer.text();
    Run { result, logs }
}

/// A private profile root for one render: RAM-backed where possible, like the
/// default location. Mode 0711: run as root, Chromium runs as `nobody`, which
/// must pass through it to its own (0700) profile.
fn profile_root() -> tempfile::TempDir {
    let root = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    root
}

/// BROWSER-ISO-01 step 2: the profile is deleted and no process (Chromium,
/// helpers, crashpad, the watchdog) still names it.
fn assert_nothing_left(root: &Path) {
    let left: Vec<PathBuf> = walk(root);
    assert!(left.is_empty(), "profile left behind: {left:?}");
    let procs = live_processes_naming(root);
    assert!(procs.is_empty(), "processes left behind: {procs:?}");
}

/// Every path under `root`, recursively.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// Whether the page's `mark(text)` ran (the text as a paragraph, not in a script).
fn has_mark(page: &BrowserPage, text: &str) -> bool {
    page.html.contains(&format!("<p>{text}</p>"))
}

async fn page_server() -> MockServer {
    MockServer::start().await
}

/// One browser test's setup: its turn at the browser, the Chromium under test, a
/// page server on 127.0.0.1 and the [`Gate`] its gated pages hold the network
/// with until they are done.
struct Rig {
    chromium: String,
    server: MockServer,
    port: u16,
    gate: Gate,
    // Last, so the servers are gone before the next test takes its turn.
    _serial: BrowserTurn,
}

impl Rig {
    /// `None` (skip) without Chromium; otherwise waits its turn and starts the
    /// servers.
    async fn new() -> Option<Rig> {
        let chromium = chromium()?;
        let serial = browser_turn(&SERIAL).await;
        let server = page_server().await;
        let port = server.address().port();
        Some(Rig {
            chromium,
            server,
            port,
            gate: Gate::start().await,
            _serial: serial,
        })
    }

    /// `path` on the page server, by IP address.
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The test configuration ([`config`]) with the page server's and the gate's
    /// ports open, and `ports` too; `browser` adds keys to its browser table.
    fn config(&self, ports: &[u16], browser: &str) -> Config {
        let mut open = vec![self.port, self.gate.port()];
        open.extend_from_slice(ports);
        config(&self.chromium, &open, browser)
    }

    /// The test configuration with only the page server's and the gate's ports
    /// open.
    fn settings(&self) -> Settings {
        self.config(&[], "").settings()
    }

    /// [`html_page`] that also holds the network through the gate until its
    /// script calls `done()`, which marks `DONE` and releases the gate: the
    /// rendered DOM has every change the page made before, however slowly a
    /// loaded machine runs its scripts. The page must call
    /// `done()`, or its render ends in the network-idle timeout.
    fn gated_page(&self, body: &str) -> String {
        let gate = format!(
            "<script>\n{}function done() {{ mark('DONE'); gate_release(); }}\n</script>",
            self.gate.script()
        );
        format!(
            "<!doctype html><html><head><title>t</title>{HELPERS}{gate}</head><body>{body}</body></html>"
        )
    }

    /// Serves [`Rig::gated_page`]`(body)` at `at`.
    async fn serve_gated(&self, at: &str, body: &str) {
        serve_html(&self.server, at, &self.gated_page(body)).await;
    }

    /// Renders `path` of the page server under `settings`, without a top-frame hook.
    async fn render(&self, settings: Settings, path: &str) -> Run {
        run(settings, &self.url(path), None).await
    }
}

/// A wiremock on 127.0.0.2 (blocked by `additional_blocked_cidrs`) or 127.0.0.1,
/// serving the secret, with its port; its request log must stay empty (T-WF-INFRA-05).
async fn internal_server(ip: Ipv4Addr) -> (MockServer, u16) {
    let listener = StdTcpListener::bind(SocketAddr::from((ip, 0))).unwrap();
    let server = MockServer::builder().listener(listener).start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string(INTERNAL_SECRET))
        .mount(&server)
        .await;
    let port = server.address().port();
    (server, port)
}

async fn serve_html(server: &MockServer, at: &str, html: &str) {
    let html = html.to_owned();
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html; charset=utf-8"))
        .mount(server)
        .await;
}

/// Serves `html_page(body)`, the page with the helper script, at `/`.
async fn serve_page(server: &MockServer, body: &str) {
    serve_html(server, "/", &html_page(body)).await;
}

async fn serve(server: &MockServer, at: &str, content_type: &str, body: impl Into<Vec<u8>>) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.into(), content_type))
        .mount(server)
        .await;
}

/// Paths the server received, in order.
async fn received_paths(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect()
}

async fn assert_never_contacted(server: &MockServer) {
    let received = server.received_requests().await.unwrap_or_default();
    assert!(
        received.is_empty(),
        "internal server was contacted: {:?}",
        received
            .iter()
            .map(|r| r.url.to_string())
            .collect::<Vec<_>>()
    );
}

/// A helper script for pages: `mark(text)` appends a `<p>` to the body, and
/// `settle(urls)` fetches every URL, pastes what comes back into the body and
/// marks `SETTLED:` with each fetch's outcome. (`done()` is on gated pages,
/// [`Rig::gated_page`].)
const HELPERS: &str = r#"<script>
function mark(t) { const p = document.createElement('p'); p.textContent = t; document.body.appendChild(p); }
function settle(urls) {
  return Promise.allSettled(urls.map(u => fetch(u).then(r => r.text()).then(t => { document.body.innerHTML += t; })))
    .then(results => mark('SETTLED:' + results.map(r => r.status).join(',')));
}
</script>"#;

fn html_page(body: &str) -> String {
    format!("<!doctype html><html><head><title>t</title>{HELPERS}</head><body>{body}</body></html>")
}

/// What a page of `settle(urls)` probes ([`HELPERS`]) must show: the secret is not in it, each
/// of its `probes` settled `rejected`, and the page finished.
fn assert_probes_rejected(page: &BrowserPage, probes: usize) {
    assert!(!page.html.contains(INTERNAL_SECRET), "{}", page.html);
    let rejected = vec!["rejected"; probes].join(",");
    assert!(
        has_mark(page, &format!("SETTLED:{rejected}")),
        "{}",
        page.html
    );
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

/// Records every URL it is asked about (`from -> to`, `from` empty for the page
/// itself) and refuses paths starting with `/private`.
#[derive(Default)]
struct RecordingRobots(Mutex<Vec<String>>);

impl HopHook for RecordingRobots {
    fn before_hop<'a>(
        &'a self,
        from: Option<&'a CanonicalUrl>,
        to: &'a CanonicalUrl,
    ) -> futures_util::future::BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async move {
            let from = from.map(|from| from.as_url().path()).unwrap_or("");
            self.0
                .lock()
                .unwrap()
                .push(format!("{from} -> {}", to.as_url().path()));
            if to.as_url().path().starts_with("/private") {
                Err(FetchError::robots_disallowed(
                    to.as_url().path(),
                    &to.origin().to_string(),
                ))
            } else {
                Ok(())
            }
        })
    }
}

async fn redirect(server: &MockServer, from: &str, status: u16, to: &str) {
    Mock::given(path(from))
        .respond_with(ResponseTemplate::new(status).insert_header("location", to))
        .mount(server)
        .await;
}

/// A raw listener that records whether anything connected to it.
struct Tripwire(StdTcpListener);

impl Tripwire {
    fn new() -> Tripwire {
        let listener = StdTcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Tripwire(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    /// Connections completed so far: the kernel queues them whether or not we
    /// accept, so a connection made before this call is always seen.
    fn connections(&self) -> usize {
        let mut n = 0;
        while self.0.accept().is_ok() {
            n += 1;
        }
        n
    }
}

/// Lines of the captured log that mention `event` and `needle`.
/// Asserts that some `event` log line contains `needle`.
fn assert_logged(logs: &str, event: &str, needle: &str) {
    assert!(
        !log_lines(logs, event, needle).is_empty(),
        "no {event} event naming {needle:?} in:\n{logs}"
    );
}

fn log_lines<'a>(logs: &'a str, event: &str, needle: &str) -> Vec<&'a str> {
    logs.lines()
        .filter(|l| {
            l.contains(&format!("event=\"{event}\"")) || l.contains(&format!("event={event}"))
        })
        .filter(|l| l.contains(needle))
        .collect()
}

/// A script of at least `size` bytes that marks `NAME-RAN` when it runs.
fn sized_script(name: &str, size: usize) -> Vec<u8> {
    let mut js = format!("mark('{name}-RAN');\n");
    while js.len() < size {
        js.push_str("// padding padding padding padding padding padding padding padding\n");
    }
    js.into_bytes()
}
