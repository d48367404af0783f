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
    /// loaded machine runs its scripts (issue 30 item 8). The page must call
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

#[tokio::test]
async fn it_wf_br_01_forced_render_runs_scripts_and_fetches_through_the_client() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<div id="root"></div>
<script src="/app.js"></script>
<script>
document.cookie = 'sid=secret-cookie';
mark('UA:' + navigator.userAgent);
fetch('/api/data', { headers: { 'Accept': 'application/json' } })
  .then(r => r.json()).then(j => mark('API:' + j.message)).then(done);
</script>"#,
    )
    .await;
    serve(
        server,
        "/app.js",
        "text/javascript",
        "document.getElementById('root').innerHTML = '<h1>Rendered by JavaScript</h1>';",
    )
    .await;
    serve(
        server,
        "/api/data",
        "application/json",
        r#"{"message":"hello from the api"}"#,
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        page.html.contains("<h1>Rendered by JavaScript</h1>"),
        "{}",
        page.html
    );
    assert!(has_mark(page, "API:hello from the api"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
    // FR-WF-BROWSER-UA-01: the configured User-Agent, in JS and on the wire.
    assert!(has_mark(page, &format!("UA:{UA}")), "{}", page.html);
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    assert!(!page.dom_truncated);
    assert!(!page.blocked_non_get);
    let requests = server.received_requests().await.unwrap();
    for request in &requests {
        let ua = request.headers.get("user-agent").unwrap().to_str().unwrap();
        assert_eq!(ua, UA, "{}", request.url);
        // FR-WF-BSSR-HEADERS-01: no cookies ever leave.
        assert!(request.headers.get("cookie").is_none(), "{}", request.url);
    }
    let api = requests
        .iter()
        .find(|r| r.url.path() == "/api/data")
        .unwrap();
    assert_eq!(api.headers.get("accept").unwrap(), "application/json");
    assert!(
        api.headers
            .get("referer")
            .is_some_and(|r| r.to_str().unwrap().starts_with(&rig.url("/")))
    );
    let _ = std::io::stderr().flush();
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

#[tokio::test]
async fn it_wf_br_03_page_js_fetching_private_ranges_is_blocked_by_ssrf() {
    let Some(rig) = Rig::new().await else { return };
    // 127.0.0.2 is blocked by range (additional_blocked_cidrs), on an allowed port,
    // so only the SSRF check stands between the page and the secret.
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>
const targets = [
  'http://127.0.0.2:{iport}/secret',
  'http://internal.test:{iport}/secret',
  'http://metadata.test/latest/meta-data/',
  'http://private.test/admin',
  'http://mapped.test/x',
  'http://169.254.169.254/latest/meta-data/',
];
settle(targets).then(done);
</script>"#
        ),
    )
    .await;

    let settings = rig.config(&[iport, 80], "").settings();
    let run = rig.render(settings, "/").await;
    assert_probes_rejected(run.page(), 6);
    assert_never_contacted(&internal).await;
    // T-WF-INFRA-05 step 6: the block events name the internal addresses.
    for ip in [
        "127.0.0.2",
        "169.254.169.254",
        "10.0.0.1",
        "::ffff:10.0.0.1",
    ] {
        assert_logged(&run.logs, "ssrf_blocked", ip);
    }
}

/// Issue 15 ("no bypass by any path"): the internal address spelled every way a URL
/// parser accepts (hex, octal, a single decimal number, the short form, IPv4-mapped
/// IPv6 in both notations), behind a same-origin redirect, and reached by every
/// page-side channel that is not a plain fetch (a beacon, an event stream, a CSS
/// `@import`, a prefetch hint, `<object>`, `<embed>`, a video poster, an SVG
/// image): none reaches the internal server. Each request is refused by the SSRF
/// check, except those refused earlier: images by type, the beacon (a POST) as a
/// non-GET.
#[tokio::test]
async fn fr_wf_11b_odd_spellings_and_side_channels_never_reach_internal() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<style>@import url('http://127.0.0.2:{iport}/css-import');</style>
<link rel="prefetch" href="http://127.0.0.2:{iport}/prefetch">
<object data="http://127.0.0.2:{iport}/object"></object>
<embed src="http://127.0.0.2:{iport}/embed">
<video poster="http://127.0.0.2:{iport}/poster"></video>
<svg><image href="http://127.0.0.2:{iport}/svg-image"/></svg>
<script>
const targets = [
  'http://0x7f.0.0.2:{iport}/hex',
  'http://0177.0.0.2:{iport}/octal',
  'http://2130706434:{iport}/decimal',
  'http://127.2:{iport}/short',
  'http://[::ffff:127.0.0.2]:{iport}/mapped',
  'http://[::ffff:7f00:2]:{iport}/mapped-hex',
  '/hop',
];
const beacon = navigator.sendBeacon('http://127.0.0.2:{iport}/beacon', 'x');
const stream = new Promise(resolve => {{
  const source = new EventSource('http://127.0.0.2:{iport}/events');
  source.onmessage = () => {{ source.close(); resolve('message'); }};
  source.onerror = () => {{ source.close(); resolve('error'); }};
}});
settle(targets)
  .then(() => stream).then(outcome => mark('STREAM:' + outcome))
  .then(done);
</script>"#
        ),
    )
    .await;
    // A same-origin hop that redirects to the internal address.
    let to = format!("http://127.0.0.2:{iport}/redirected");
    redirect(server, "/hop", 302, &to).await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert_probes_rejected(page, 7);
    assert!(has_mark(page, "STREAM:error"), "{}", page.html);
    assert_never_contacted(&internal).await;
    // Every request was issued, reached the SSRF check as the address it means,
    // and was refused there (not skipped by Chromium, which would prove nothing).
    for path in [
        "/hex",
        "/octal",
        "/decimal",
        "/short",
        "/mapped",
        "/mapped-hex",
        "/object",
        "/embed",
        "/events",
        "/css-import",
        "/prefetch",
    ] {
        assert_logged(&run.logs, "ssrf_blocked", &format!(":{iport}{path}"));
    }
    assert_logged(&run.logs, "ssrf_blocked", "::ffff:127.0.0.2");
    // The redirect is followed by the interceptor, hop by hop through the SSRF
    // check: the block names the request and the hop's address.
    let hop = log_lines(&run.logs, "ssrf_blocked", &format!(":{}/hop", rig.port));
    assert!(
        hop.iter().any(|l| l.contains("blocked_ip=127.0.0.2")),
        "{}",
        run.logs
    );
    // Images (a video poster, an SVG image) are refused by type (FR-WF-11g) first.
    for path in ["/poster", "/svg-image"] {
        assert_logged(&run.logs, "resource_blocked", &format!(":{iport}{path}"));
    }
    // A beacon is a POST: refused before any address is looked at.
    assert_logged(&run.logs, "non_get_blocked", &format!(":{iport}/beacon"));
    assert!(page.blocked_non_get);
}

#[tokio::test]
async fn it_wf_br_04_xhr_and_fetch_to_localhost_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    // T-WF-INFRA-05 exactly: the internal wiremock on 127.0.0.1:{internal_port}.
    let (internal, iport) = internal_server(Ipv4Addr::LOCALHOST).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>fetch('http://127.0.0.1:{iport}/secret').then(r=>r.text()).then(t=>document.body.innerHTML+=t)</script>
<script>
const xhr = new XMLHttpRequest();
xhr.open('GET', 'http://localhost:{iport}/secret');
xhr.onload = () => {{ document.body.innerHTML += xhr.responseText; done(); }};
xhr.onerror = () => {{ mark('XHR-BLOCKED'); done(); }};
xhr.send();
</script>"#
        ),
    )
    .await;

    // Loopback is open for the page's port only.
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(!page.html.contains(INTERNAL_SECRET), "{}", page.html);
    assert!(has_mark(page, "XHR-BLOCKED"), "{}", page.html);
    assert_never_contacted(&internal).await;
    assert_logged(&run.logs, "port_blocked", &format!("127.0.0.1:{iport}"));
    assert_logged(&run.logs, "port_blocked", &format!("localhost:{iport}"));
}

#[tokio::test]
async fn fr_wf_11b_iframes_workers_popups_and_service_workers_never_reach_internal() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    let secret = format!("http://127.0.0.2:{iport}/secret");
    rig.serve_gated(
        "/",
        &format!(
            r#"<iframe src="http://page.test:{port}/frame"></iframe>
<iframe src="{secret}"></iframe>
<script>
window.open('{secret}');
const w = new Worker('/worker.js');
const worker = new Promise(res => {{ w.onmessage = e => {{ mark('WORKER:' + e.data); res(); }}; }});
const frame = new Promise(res => window.addEventListener('message', e => {{ mark('FRAME:' + e.data); res(); }}));
const sw = navigator.serviceWorker.register('/sw.js').then(() => mark('SW-REGISTERED'), () => mark('SW-FAILED'));
Promise.all([worker, frame, sw]).then(done);
</script>"#
        ),
    )
    .await;
    // A cross-origin iframe (page.test vs 127.0.0.1) whose script tries the secret.
    serve_html(
        server,
        "/frame",
        &format!(
            r#"<script>fetch('{secret}').then(r => r.text()).then(t => parent.postMessage(t, '*'), () => parent.postMessage('blocked', '*'));</script>"#
        ),
    )
    .await;
    serve(
        server,
        "/worker.js",
        "text/javascript",
        format!("fetch('{secret}').then(r => r.text()).then(t => postMessage(t), () => postMessage('blocked'));"),
    )
    .await;
    serve(
        server,
        "/sw.js",
        "text/javascript",
        "self.addEventListener('fetch', () => {});",
    )
    .await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert!(!page.html.contains(INTERNAL_SECRET), "{}", page.html);
    assert!(has_mark(page, "WORKER:blocked"), "{}", page.html);
    assert!(has_mark(page, "FRAME:blocked"), "{}", page.html);
    // The service-worker script is fetched by Chromium's own networking, which
    // reaches nothing: registration fails and the server never sees the script.
    assert!(has_mark(page, "SW-FAILED"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/frame".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/worker.js".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/sw.js".to_owned()), "{paths:?}");
    assert_never_contacted(&internal).await;
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

#[tokio::test]
async fn it_wf_br_14_websockets_preconnect_and_dns_prefetch_open_no_connection() {
    let Some(rig) = Rig::new().await else { return };
    let ws = Tripwire::new();
    let wsport = ws.port();
    let pre = Tripwire::new();
    let preport = pre.port();
    rig.serve_gated(
        "/",
        &format!(
            r#"<link rel="preconnect" href="http://127.0.0.1:{preport}">
<link rel="dns-prefetch" href="//internal.test">
<script>
function tryWs(url) {{
  return new Promise(res => {{
    let s;
    try {{ s = new WebSocket(url); }} catch (e) {{ mark('WS-THROWN'); return res(); }}
    s.onopen = () => {{ mark('WS-OPEN'); res(); }};
    s.onerror = () => {{ mark('WS-ERROR'); res(); }};
  }});
}}
Promise.all([tryWs('ws://127.0.0.1:{wsport}/'), tryWs('ws://localhost:{wsport}/chat'), tryWs('wss://127.0.0.1:{wsport}/')])
  .then(done);
</script>"#
        ),
    )
    .await;

    let settings = rig.config(&[wsport, preport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert_eq!(
        ws.connections(),
        0,
        "a WebSocket handshake left the browser"
    );
    assert_eq!(pre.connections(), 0, "a preconnect left the browser");
    assert!(!has_mark(page, "WS-OPEN"), "{}", page.html);
    // The handshakes failed before the page went idle.
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

#[tokio::test]
async fn fr_wf_11b_webrtc_sends_no_udp() {
    let Some(rig) = Rig::new().await else { return };
    let stun = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    stun.set_nonblocking(true).unwrap();
    let stun_port = stun.local_addr().unwrap().port();
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>
const pc = new RTCPeerConnection({{ iceServers: [{{ urls: 'stun:127.0.0.1:{stun_port}' }}] }});
pc.createDataChannel('x');
const gathered = new Promise(res => {{
  pc.onicegatheringstatechange = () => {{ if (pc.iceGatheringState === 'complete') res(); }};
}});
pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => gathered)
  .then(() => mark('ICE-COMPLETE:' + (pc.localDescription.sdp.match(/a=candidate/g) || []).length))
  .then(done);
</script>"#
        ),
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    let mut buf = [0u8; 1500];
    assert!(
        stun.recv_from(&mut buf).is_err(),
        "a STUN packet left the browser"
    );
    // Gathering finished before the page went idle, so any packet would be here.
    assert!(page.html.contains("<p>ICE-COMPLETE:"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

#[tokio::test]
async fn it_wf_br_02_unavailable_browser_is_an_error() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let url = "http://127.0.0.1:80/";
    // Missing binary.
    let missing = settings("/nonexistent/chromium", &[80]);
    let run1 = run(missing, url, None).await;
    assert_eq!(run1.error().code, ErrorCode::BrowserUnavailable);
    assert_eq!(
        run1.error().details_json()["chromium_path"],
        "/nonexistent/chromium"
    );
    // Disabled by configuration.
    let disabled = config(&chromium, &[80], "enabled = false").settings();
    let run2 = run(disabled, url, None).await;
    assert_eq!(run2.error().code, ErrorCode::BrowserUnavailable);
    assert!(
        run2.error().message.contains("disabled"),
        "{}",
        run2.error().message
    );
    // A binary that fails to launch.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("chromium");
    std::fs::write(&fake, "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let broken = settings(&fake.display().to_string(), &[80]);
    let run3 = run(broken, url, None).await;
    assert_eq!(run3.error().code, ErrorCode::BrowserUnavailable);
    assert!(
        run3.error().message.contains("cannot open display"),
        "{}",
        run3.error().message
    );
    assert!(!run3.error().retryable);
}

#[tokio::test]
async fn it_wf_br_05_network_idle_never_reached_is_a_timeout() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // A request that never gets an answer keeps the network busy.
    let hang = Tripwire::new();
    let hport = hang.port();
    serve_page(
        server,
        &format!("<p>content</p><script>fetch('http://127.0.0.1:{hport}/forever');</script>"),
    )
    .await;
    let mut settings = rig.config(&[hport], "").settings();
    settings.browser.network_idle_ms = 1000;
    let run = rig.render(settings, "/").await;
    let error = run.error();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "browser_network_idle");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    assert!(error.retryable);
    drop(hang);
}

#[tokio::test]
async fn it_wf_br_05_document_never_answered_is_a_navigation_timeout() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let hang = Tripwire::new();
    let hport = hang.port();
    let settings = settings(&chromium, &[hport]);
    let mut settings = settings;
    settings.timeout_seconds = 1;
    let run = run(settings, &format!("http://127.0.0.1:{hport}/"), None).await;
    let error = run.error();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "browser_navigation");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    drop(hang);
}

#[tokio::test]
async fn it_wf_br_06_blocked_resource_types_are_never_fetched() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<link rel="stylesheet" href="/style.css">
<img src="/photo.png"><video src="/clip.mp4"></video>
<script src="/app.js"></script>
<script>
const img = new Image();
img.onload = () => { mark('IMG-LOADED'); done(); };
img.onerror = () => { mark('IMG-BLOCKED'); done(); };
img.src = '/late.png';
</script>"#,
    )
    .await;
    serve(
        server,
        "/style.css",
        "text/css",
        "body { color: rgb(1, 2, 3); }",
    )
    .await;
    serve(server, "/app.js", "text/javascript", "mark('SCRIPT-RAN');").await;
    for png in ["/photo.png", "/late.png"] {
        serve(server, png, "image/png", b"\x89PNG\r\n\x1a\n".to_vec()).await;
    }
    serve(
        server,
        "/clip.mp4",
        "video/mp4",
        b"\0\0\0\x18ftypmp42".to_vec(),
    )
    .await;

    // FR-WF-11g defaults: Image, Media, Font blocked; scripts and styles not.
    let run1 = rig.render(rig.settings(), "/").await;
    let page = run1.page();
    assert!(has_mark(page, "SCRIPT-RAN"), "{}", page.html);
    assert!(has_mark(page, "IMG-BLOCKED"), "{}", page.html);
    let paths = received_paths(server).await;
    for blocked in ["/photo.png", "/late.png", "/clip.mp4"] {
        assert!(
            !paths.contains(&blocked.to_owned()),
            "{blocked} fetched: {paths:?}"
        );
    }
    assert!(has_mark(page, "DONE"), "{}", page.html);
    for allowed in ["/style.css", "/app.js"] {
        assert!(
            paths.contains(&allowed.to_owned()),
            "{allowed} missing: {paths:?}"
        );
    }

    // BLOCKRES-01: entries match CDP names case-insensitively.
    server.reset().await;
    rig.serve_gated(
        "/",
        r#"<link rel="stylesheet" href="/style.css"><script src="/app.js"></script><script>done();</script>"#,
    )
    .await;
    serve(server, "/style.css", "text/css", "body {}").await;
    serve(server, "/app.js", "text/javascript", "mark('SCRIPT-RAN');").await;
    let styles_off = rig
        .config(&[], r#"block_resources = ["STYLESHEET"]"#)
        .settings();
    let run2 = rig.render(styles_off, "/").await;
    assert!(has_mark(run2.page(), "SCRIPT-RAN"));
    let paths = received_paths(server).await;
    assert!(!paths.contains(&"/style.css".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/app.js".to_owned()), "{paths:?}");
}

#[tokio::test]
async fn it_wf_br_08_every_call_gets_a_fresh_profile() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script>
const before = [
  localStorage.getItem('k') ? 'local' : '',
  document.cookie.includes('k=1') ? 'cookie' : '',
  sessionStorage.getItem('k') ? 'session' : '',
].filter(Boolean).join('+') || 'none';
const idb = new Promise(res => {
  const open = indexedDB.open('webfetch-test', 1);
  open.onupgradeneeded = () => { open.result.createObjectStore('s'); res('none'); };
  open.onsuccess = () => res(open.result.objectStoreNames.length ? 'idb' : 'none');
  open.onerror = () => res('idb-error');
});
localStorage.setItem('k', 'v');
sessionStorage.setItem('k', 'v');
document.cookie = 'k=1; max-age=86400';
Promise.all([idb, caches.open('c').then(c => c.keys()).then(k => k.length ? 'cache' : 'none', () => 'none')])
  .then(([i, c]) => mark('STATE:' + before + '/' + i + '/' + c)).then(done);
</script>"#,
    )
    .await;
    for _ in 0..2 {
        let run = rig.render(rig.settings(), "/").await;
        // The second call sees nothing of the first: fresh profile, fresh process.
        assert!(
            has_mark(run.page(), "STATE:none/none/none"),
            "{}",
            run.page().html
        );
    }
}

/// Serves a page at `/` that requests `/slow`, which answers only after 30 s; the
/// receiver hears each time `/slow` is requested.
async fn serve_stalling_page(server: &MockServer) -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    serve_page(server, "<script>fetch('/slow');</script>").await;
    Mock::given(path("/slow"))
        .respond_with(move |_: &wiremock::Request| {
            let _ = tx.send(());
            ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30))
        })
        .mount(server)
        .await;
    rx
}

#[tokio::test]
async fn it_wf_br_08_cancelled_render_leaves_nothing_behind() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let mut stalled = serve_stalling_page(server).await;
    let target = Target::new(rig.settings(), &rig.url("/"));
    let ctx = target.context();
    // Drop the render future once the page is mid-load: the cancellation path.
    tokio::select! {
        result = render(&ctx) => panic!("render finished: {result:?}"),
        received = stalled.recv() => received.expect("the page's server is alive"),
    }
    assert!(
        std::fs::read_dir(target.root.path())
            .unwrap()
            .next()
            .is_none(),
        "profile left behind"
    );
    assert!(
        live_processes_naming(target.root.path()).is_empty(),
        "processes left behind"
    );
}

#[tokio::test]
async fn it_wf_br_09_non_get_subrequests_are_blocked_with_the_note() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<h1>Original page</h1>
<form id="f" method="POST" action="/submit"><input name="q" value="exfiltrated"></form>
<script>
navigator.sendBeacon('/beacon', 'payload');
Promise.allSettled([
  fetch('/api', {{ method: 'POST', body: 'secret-body' }}),
  fetch('/api', {{ method: 'PUT', body: 'x' }}),
  fetch('/api', {{ method: 'DELETE' }}),
  // Method before SSRF (SRD-READINGS 23): counted even to a blocked address.
  fetch('http://127.0.0.2:{iport}/secret', {{ method: 'POST', body: 'x' }}),
]).then(r => mark('POSTS:' + r.map(x => x.status).join(','))).then(done)
  .then(() => document.getElementById('f').submit());
</script>"#
        ),
    )
    .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("POST-ACCEPTED"))
        .mount(server)
        .await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert!(page.blocked_non_get);
    assert!(
        has_mark(page, "POSTS:rejected,rejected,rejected,rejected"),
        "{}",
        page.html
    );
    // The blocked form submission left the page as it was, not an error page.
    assert!(
        page.html.contains("<h1>Original page</h1>"),
        "{}",
        page.html
    );
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests.iter().all(|r| r.method.as_str() == "GET"),
        "{:?}",
        requests
            .iter()
            .map(|r| format!("{} {}", r.method, r.url))
            .collect::<Vec<_>>()
    );
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn it_wf_br_09_get_only_pages_have_no_note() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        "<script>fetch('/a', { method: 'HEAD' }).then(done);</script>",
    )
    .await;
    serve(server, "/a", "text/plain", "x").await;
    let run = rig.render(rig.settings(), "/").await;
    assert!(!run.page().blocked_non_get);
    assert!(has_mark(run.page(), "DONE"));
}

/// A script of at least `size` bytes that marks `NAME-RAN` when it runs.
fn sized_script(name: &str, size: usize) -> Vec<u8> {
    let mut js = format!("mark('{name}-RAN');\n");
    while js.len() < size {
        js.push_str("// padding padding padding padding padding padding padding padding\n");
    }
    js.into_bytes()
}

#[tokio::test]
async fn it_wf_br_10_subresource_budget_fails_everything_after_the_crossing_request() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // Budget 1 MiB (the minimum), per-resource 800 kB, loaded one after the other:
    // A (700 kB) fits; BIG (900 kB) fails alone and is not counted; B (700 kB)
    // crosses the budget and is still fulfilled (SRD-READINGS 25); C fails.
    rig.serve_gated(
        "/",
        r#"<script>
function load(name, then) {
  const s = document.createElement('script');
  s.src = '/' + name + '.js';
  s.onload = then;
  s.onerror = () => { mark(name + '-FAILED'); then(); };
  document.head.appendChild(s);
}
load('A', () => load('BIG', () => load('B', () => load('C', done))));
</script>"#,
    )
    .await;
    serve(
        server,
        "/A.js",
        "text/javascript",
        sized_script("A", 700_000),
    )
    .await;
    serve(
        server,
        "/BIG.js",
        "text/javascript",
        sized_script("BIG", 900_000),
    )
    .await;
    serve(
        server,
        "/B.js",
        "text/javascript",
        sized_script("B", 700_000),
    )
    .await;
    serve(server, "/C.js", "text/javascript", sized_script("C", 10)).await;

    let settings = rig
        .config(&[], "max_total_subresource_bytes = 1048576")
        .top("max_download_bytes = 800000")
        .settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    for mark in ["A-RAN", "BIG-FAILED", "B-RAN", "C-FAILED", "DONE"] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    for absent in ["BIG-RAN", "C-RAN"] {
        assert!(!has_mark(page, absent), "{absent}: {}", page.html);
    }
    // C was failed before any network: the budget was spent.
    let paths = received_paths(server).await;
    assert!(!paths.contains(&"/C.js".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/BIG.js".to_owned()), "{paths:?}");
    assert_logged(&run.logs, "subresource_budget_exceeded", "");
    assert_logged(&run.logs, "subresource_too_large", "BIG.js");
}

#[tokio::test]
async fn it_wf_br_11_data_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script src="data:text/javascript,mark('DATA%2DSCRIPT%2DRAN')"></script>
<iframe id="fr" src="data:text/html,<script>parent.postMessage('DATA%2DFRAME%2DRAN','*')</script>"></iframe>
<script>
window.addEventListener('message', e => mark(e.data));
const encoded = 'data:text/plain;base64,' + btoa('DATA_URI_' + 'SECRET');
Promise.allSettled([
  fetch(encoded).then(r => r.text()).then(t => mark(t)),
  new Promise((res, rej) => { const w = new Worker('data:text/javascript,postMessage(1)'); w.onmessage = res; w.onerror = rej; }),
]).then(r => mark('DATA:' + r.map(x => x.status).join(','))).then(done);
</script>"#,
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(has_mark(page, "DATA:rejected,rejected"), "{}", page.html);
    assert!(!has_mark(page, "DATA_URI_SECRET"), "{}", page.html);
    assert!(!has_mark(page, "DATA-SCRIPT-RAN"), "{}", page.html);
    assert!(!has_mark(page, "DATA-FRAME-RAN"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

#[tokio::test]
async fn it_wf_br_12_file_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "FILE_SECRET_CONTENT").unwrap();
    let script = dir.path().join("run.js");
    std::fs::write(&script, "mark('FILE-SCRIPT-RAN');").unwrap();
    rig.serve_gated(
        "/",
        &format!(
            r#"<script src="file://{script}"></script>
<iframe src="file://{secret}"></iframe>
<script>
Promise.allSettled([fetch('file://{secret}').then(r => r.text()).then(t => mark(t))])
  .then(r => mark('FILE:' + r[0].status)).then(done);
</script>"#,
            script = script.display(),
            secret = secret.display()
        ),
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(has_mark(page, "FILE:rejected"), "{}", page.html);
    assert!(!page.html.contains("FILE_SECRET_CONTENT"), "{}", page.html);
    assert!(!has_mark(page, "FILE-SCRIPT-RAN"), "{}", page.html);
}

#[tokio::test]
async fn it_wf_br_13_blob_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script>
const blob = (text, type) => URL.createObjectURL(new Blob([text], { type }));
const script = document.createElement('script');
script.src = blob("mark('BLOB' + '-SCRIPT-RAN')", 'text/javascript');
document.head.appendChild(script);
Promise.allSettled([
  fetch(blob('BLOB_' + 'SECRET', 'text/plain')).then(r => r.text()).then(t => mark(t)),
  new Promise((res, rej) => { const w = new Worker(blob('postMessage(1)', 'text/javascript')); w.onmessage = res; w.onerror = rej; }),
  new Promise((res, rej) => { const x = new XMLHttpRequest(); x.open('GET', blob('x', 'text/plain')); x.onload = res; x.onerror = rej; x.send(); }),
]).then(r => mark('BLOB:' + r.map(x => x.status).join(','))).then(done);
</script>"#,
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        has_mark(page, "BLOB:rejected,rejected,rejected"),
        "{}",
        page.html
    );
    assert!(!has_mark(page, "BLOB_SECRET"), "{}", page.html);
    assert!(!has_mark(page, "BLOB-SCRIPT-RAN"), "{}", page.html);
}

async fn compress(encoding: &str, data: &[u8]) -> Vec<u8> {
    use async_compression::tokio::bufread::{BrotliEncoder, GzipEncoder, ZlibEncoder};
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    match encoding {
        "gzip" => GzipEncoder::new(data).read_to_end(&mut out).await,
        "br" => BrotliEncoder::new(data).read_to_end(&mut out).await,
        "deflate" => ZlibEncoder::new(data).read_to_end(&mut out).await,
        other => panic!("{other}"),
    }
    .unwrap();
    out
}

#[tokio::test]
async fn it_wf_br_15_compressed_bodies_are_fulfilled_decoded_with_matching_length() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let document = rig.gated_page(
        r#"<h1>Compressed document</h1>
<script src="/gzip.js"></script><script src="/br.js"></script><script src="/deflate.js"></script>
<script>fetch('/data.json').then(r => r.json()).then(j => mark('JSON:' + j.word)).then(done);</script>"#,
    );
    let encoded = |body: Vec<u8>, encoding: &str, content_type: &str| {
        ResponseTemplate::new(200)
            .insert_header("content-encoding", encoding)
            .set_body_raw(body, content_type)
    };
    Mock::given(path("/"))
        .respond_with(encoded(
            compress("gzip", document.as_bytes()).await,
            "gzip",
            "text/html",
        ))
        .mount(server)
        .await;
    for encoding in ["gzip", "br", "deflate"] {
        // Long enough that a wrong Content-Length would cut the script short.
        let js = format!(
            "mark('{encoding}-RAN'); /* {} */ mark('{encoding}-END');",
            "x".repeat(50_000)
        );
        Mock::given(path(format!("/{encoding}.js")))
            .respond_with(encoded(
                compress(encoding, js.as_bytes()).await,
                encoding,
                "text/javascript",
            ))
            .mount(server)
            .await;
    }
    Mock::given(path("/data.json"))
        .respond_with(encoded(
            compress("br", br#"{"word":"decoded"}"#).await,
            "br",
            "application/json",
        ))
        .mount(server)
        .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        page.html.contains("<h1>Compressed document</h1>"),
        "{}",
        page.html
    );
    for mark in [
        "gzip-RAN",
        "gzip-END",
        "br-RAN",
        "br-END",
        "deflate-RAN",
        "deflate-END",
        "JSON:decoded",
        "DONE",
    ] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
}

async fn redirect(server: &MockServer, from: &str, status: u16, to: &str) {
    Mock::given(path(from))
        .respond_with(ResponseTemplate::new(status).insert_header("location", to))
        .mount(server)
        .await;
}

#[tokio::test]
async fn fr_wf_11c_document_redirects_are_followed_counted_and_revalidated() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    redirect(server, "/r1", 302, "/r2").await;
    redirect(
        server,
        "/r2",
        301,
        &format!("http://page.test:{port}/final?x=1"),
    )
    .await;
    redirect(
        server,
        "/to-internal",
        302,
        &format!("http://127.0.0.2:{iport}/secret"),
    )
    .await;
    serve_html(
        server,
        "/final",
        &rig.gated_page("<h1>Final</h1><script>mark('HREF:' + location.href); fetch('rel.txt').then(r => r.text()).then(mark).then(done);</script>"),
    )
    .await;
    serve(server, "/rel.txt", "text/plain", "RELATIVE-OK").await;
    let ports = [iport];

    let run1 = rig.render(rig.config(&ports, "").settings(), "/r1").await;
    let page = run1.page();
    assert_eq!(
        page.final_url.as_str(),
        format!("http://page.test:{port}/final?x=1")
    );
    // The page runs at its final URL: relative URLs resolve against it.
    assert!(
        has_mark(page, &format!("HREF:http://page.test:{port}/final?x=1")),
        "{}",
        page.html
    );
    assert!(has_mark(page, "RELATIVE-OK"), "{}", page.html);
    // Fetched once each: the redirect is replayed to Chromium, not refetched.
    let finals = received_paths(server)
        .await
        .iter()
        .filter(|p| *p == "/final")
        .count();
    assert_eq!(finals, 1);

    let run2 = rig
        .render(
            rig.config(&ports, "").top("max_redirects = 1").settings(),
            "/r1",
        )
        .await;
    assert_eq!(run2.error().code, ErrorCode::RedirectLimit);
    assert_eq!(run2.error().details_json()["count"], 2);

    let run3 = rig
        .render(rig.config(&ports, "").settings(), "/to-internal")
        .await;
    assert_eq!(run3.error().code, ErrorCode::SsrfBlocked);
    assert_eq!(run3.error().details_json()["blocked_ip"], "127.0.0.2");
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn srd_readings_22_script_and_meta_navigations_are_redirect_hops() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    serve_html(
        server,
        "/js",
        &html_page("<script>location.href = '/second';</script>"),
    )
    .await;
    serve_html(
        server,
        "/meta",
        "<html><head><meta http-equiv=\"refresh\" content=\"0; url=/second\"></head><body>first</body></html>",
    )
    .await;
    serve_html(server, "/second", &html_page("<h1>Second document</h1>")).await;
    serve_html(
        server,
        "/evil",
        &html_page(&format!(
            "<script>location.href = 'http://127.0.0.2:{iport}/secret';</script>"
        )),
    )
    .await;
    serve_html(
        server,
        "/blank",
        &html_page("<script>location.href = 'about:blank';</script>"),
    )
    .await;
    let ports = [iport];

    for start in ["/js", "/meta"] {
        let ok = rig.render(rig.config(&ports, "").settings(), start).await;
        let page = ok.page();
        assert!(
            page.html.contains("<h1>Second document</h1>"),
            "{start}: {}",
            page.html
        );
        assert_eq!(page.final_url.as_str(), rig.url("/second"));
        let limited = rig
            .render(
                rig.config(&ports, "").top("max_redirects = 0").settings(),
                start,
            )
            .await;
        assert_eq!(limited.error().code, ErrorCode::RedirectLimit, "{start}");
        assert_eq!(limited.error().details_json()["count"], 1);
    }
    // A blocked hop fails the fetch with the hop's error, never an error page.
    let evil = rig.render(rig.config(&ports, "").settings(), "/evil").await;
    assert_eq!(
        evil.error().code,
        ErrorCode::SsrfBlocked,
        "{}",
        evil.error().to_json()
    );
    assert_never_contacted(&internal).await;
    // A top-frame navigation away from the web is not a document we return.
    let blank = rig
        .render(rig.config(&ports, "").settings(), "/blank")
        .await;
    assert_eq!(
        blank.error().code,
        ErrorCode::InvalidScheme,
        "{}",
        blank.error().to_json()
    );
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

#[tokio::test]
async fn fr_wf_robots_scope_01_robots_applies_to_the_top_frame_chain_only() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    redirect(server, "/start", 302, "/page").await;
    serve_html(
        server,
        "/page",
        &html_page(
            r#"<iframe src="/private-frame"></iframe>
<script>
fetch('/private-data').then(r => r.text()).then(mark)
  .then(() => { location.href = '/private-area'; });
</script>"#,
        ),
    )
    .await;
    serve_html(server, "/private-frame", "<p>frame</p>").await;
    serve(server, "/private-data", "text/plain", "SUBRESOURCE-OK").await;
    serve_html(server, "/private-area", "<p>must not load</p>").await;
    let robots = RecordingRobots::default();
    let run = run(rig.settings(), &rig.url("/start"), Some(&robots)).await;
    assert_eq!(
        run.error().code,
        ErrorCode::RobotsDisallowed,
        "{}",
        run.error().to_json()
    );
    // The page is checked before Chromium starts and again when its document is
    // fetched (a real robots check answers the second time from what it found the
    // first); subresources (fetch, iframe) never asked robots.txt, and loaded.
    assert_eq!(
        *robots.0.lock().unwrap(),
        [
            " -> /start",
            " -> /start",
            "/start -> /page",
            "/page -> /private-area"
        ]
    );
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/private-data".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/private-frame".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/private-area".to_owned()), "{paths:?}");
}

#[tokio::test]
async fn main_document_status_and_media_type_follow_http_mode() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_string("not here"))
        .mount(server)
        .await;
    serve(server, "/doc.pdf", "application/pdf", b"%PDF-1.7".to_vec()).await;
    serve(server, "/notes.txt", "text/plain", "plain text notes").await;
    let missing = rig.render(rig.settings(), "/missing").await;
    assert_eq!(missing.error().code, ErrorCode::Http4xx);
    assert_eq!(missing.error().details_json()["status"], 404);
    let pdf = rig.render(rig.settings(), "/doc.pdf").await;
    assert_eq!(pdf.error().code, ErrorCode::UnsupportedContentType);
    let text = rig.render(rig.settings(), "/notes.txt").await;
    assert!(
        text.page().html.contains("plain text notes"),
        "{}",
        text.page().html
    );
}

#[tokio::test]
async fn fr_wf_domsize_01_02_large_dom_is_truncated_with_the_flag() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // 3-byte chars so the cut must land on a char boundary; keeps growing, so only
    // the size cap (not network idle) can end the wait.
    serve_page(
        server,
        r#"<script>
document.body.insertAdjacentHTML('beforeend', '<p>' + '日本語'.repeat(2000) + '</p>');
setInterval(() => fetch('/tick'), 100);
</script>"#,
    )
    .await;
    serve(server, "/tick", "text/plain", "t").await;
    let capped = rig.config(&[], "max_rendered_dom_bytes = 1024").settings();
    let big = rig.render(capped, "/").await;
    let page = big.page();
    assert!(page.dom_truncated);
    assert!(
        page.html.len() <= 1024 && page.html.len() > 1000,
        "{}",
        page.html.len()
    );
    assert!(
        page.html.starts_with("<html><head><title>t</title>"),
        "{}",
        page.html
    );

    // Under the cap: no flag.
    server.reset().await;
    serve_page(server, "<p>small</p>").await;
    let small = rig.render(rig.settings(), "/").await;
    assert!(!small.page().dom_truncated);
}

/// The Chromium processes of a profile root: (pid, is the browser process).
fn chromium_processes(root: &Path) -> Vec<(i32, bool)> {
    live_processes_naming(root)
        .iter()
        .filter(|line| line.contains("chromium") || line.contains("chrome"))
        .filter_map(|line| {
            let (pid, cmdline) = line.split_once(": ")?;
            Some((pid.parse().ok()?, !cmdline.contains("--type=")))
        })
        .collect()
}

async fn crash_mid_render(kill_browser: bool) -> FetchError {
    let chromium = chromium().expect("checked by the caller");
    let server = page_server().await;
    let port = server.address().port();
    let mut stalled = serve_stalling_page(&server).await;
    let target = Target::new(
        settings(&chromium, &[port]),
        &format!("http://127.0.0.1:{port}/"),
    );
    let ctx = target.context();
    let rendering = render(&ctx);
    tokio::pin!(rendering);
    // Kill once the page is mid-load; a render that ends first (a slow first
    // launch timing out, an early error) fails the test with what it returned,
    // instead of leaving the killer waiting for a request that never comes.
    tokio::select! {
        result = &mut rendering => panic!("the render ended before the page stalled: {result:?}"),
        received = stalled.recv() => received.expect("the page's server is alive"),
    }
    for (pid, browser) in chromium_processes(target.root.path()) {
        let is_renderer = !browser
            && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .unwrap_or_default()
                .contains("--type=renderer");
        if (kill_browser && browser) || (!kill_browser && is_renderer) {
            nix_kill(pid);
        }
    }
    let result = rendering.await;
    assert_nothing_left(target.root.path());
    result.expect_err("the render cannot succeed after a crash")
}

fn nix_kill(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    assert!(status.unwrap().success());
}

#[tokio::test]
async fn fr_wf_11_browser_dying_mid_render_is_browser_crashed() {
    if chromium().is_none() {
        return;
    }
    let _serial = browser_turn(&SERIAL).await;
    let error = crash_mid_render(true).await;
    assert_eq!(error.code, ErrorCode::BrowserCrashed, "{}", error.to_json());
    assert!(error.retryable);
    let error = crash_mid_render(false).await;
    assert_eq!(error.code, ErrorCode::BrowserCrashed, "{}", error.to_json());
    // The next call works (issue #18): a render right after the crashes succeeds,
    // and `run` checks that it too leaves nothing behind.
    let chromium = chromium().expect("checked above");
    let server = page_server().await;
    serve_page(&server, "<p>Rendered after the crash.</p>").await;
    let port = server.address().port();
    let after = run(
        settings(&chromium, &[port]),
        &format!("http://127.0.0.1:{port}/"),
        None,
    )
    .await;
    assert!(after.page().html.contains("Rendered after the crash."));
}

/// Serves at `at` an SPA shell whose only text is `loading`; its `/bundle.js`
/// renders a "Rendered SPA" article of `sentence` twenty times.
async fn serve_spa_shell(server: &MockServer, at: &str, loading: &str, sentence: &str) {
    let shell = format!(
        r#"<!doctype html><html><head><title>App</title></head>
<body><p>{loading}</p><div id="root"></div><script src="/bundle.js"></script></body></html>"#
    );
    serve_html(server, at, &shell).await;
    let bundle = format!(
        "document.getElementById('root').innerHTML = '<main><h1>Rendered SPA</h1><p>' + \
         '{sentence}'.repeat(20) + '</p></main>';"
    );
    serve(server, "/bundle.js", "text/javascript", bundle).await;
}

#[tokio::test]
async fn it_wf_br_07_spa_shell_falls_back_to_the_browser() {
    use webfetch::ExtractionMode;
    use webfetch::internals::content::charset;
    use webfetch::internals::extract;
    use webfetch::internals::render::select::{extracted_chars, should_fall_back};

    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    serve_spa_shell(
        server,
        "/",
        "Loading the application…",
        "The article text only the browser can see. ",
    )
    .await;
    serve_html(
        server,
        "/article",
        &format!("<html><body><div id=\"root\"><article><h1>Static</h1><p>{}</p></article></div></body></html>", "Plenty of server-rendered text. ".repeat(20)),
    )
    .await;
    let settings = rig.settings();
    let rendering = settings.rendering.clone();

    // HTTP first (FR-WF-12): what plain HTTP extracts from each page.
    let http_stage = |url: String| {
        let client = stub_client(settings.clone());
        async move {
            let url = CanonicalUrl::parse(&url).unwrap();
            let fetched = webfetch::internals::render::fetch_document(
                &client,
                &url,
                Instant::now() + client.settings().timeout(),
                None,
                None,
            )
            .await
            .unwrap();
            let decoded = charset::decode(&fetched.body, fetched.header_charset.as_deref(), true);
            let document = extract::extract_html(
                &decoded.text,
                fetched.final_url.as_url(),
                ExtractionMode::Srd,
            )
            .unwrap()
            .document;
            (decoded.text, document.markdown)
        }
    };
    let (raw, markdown) = http_stage(rig.url("/")).await;
    assert!(!markdown.contains("Rendered SPA"));
    assert!(
        should_fall_back(extracted_chars(&markdown), &raw, true, &rendering),
        "{markdown}"
    );
    // Enough server-rendered text: no fallback, whatever the markers.
    let (raw, markdown) = http_stage(rig.url("/article")).await;
    assert!(!should_fall_back(
        extracted_chars(&markdown),
        &raw,
        true,
        &rendering
    ));

    // The fallback renders the shell and the same extraction finds the content.
    let run = rig.render(settings.clone(), "/").await;
    let page = run.page();
    let document = extract::extract_html(&page.html, page.final_url.as_url(), ExtractionMode::Srd)
        .unwrap()
        .document;
    assert!(
        document.markdown.contains("# Rendered SPA"),
        "{}",
        document.markdown
    );
    assert!(extracted_chars(&document.markdown) >= rendering.min_extracted_chars as usize);
}

/// T-WF-CCH-10 and IT-WF-BR-07 through the whole pipeline: an SPA shell over HTTP
/// falls back to the browser, the response is the browser's, and only the browser
/// result is cached, under its own key and final URL (FR-WF-CCH-KEY-03).
#[tokio::test]
async fn t_wf_cch_10_fallback_caches_the_browser_result_only() {
    use webfetch::RenderingMethod;
    use webfetch::WebFetchTool;
    use webfetch::internals::cache::DiskCache;

    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    serve_spa_shell(
        server,
        "/app",
        "Loading…",
        "Only the browser sees this article text. ",
    )
    .await;
    let cache_dir = tempfile::tempdir().unwrap();
    let settings = rig.config(&[], "").cache(cache_dir.path()).settings();
    let cache_settings = settings.cache.clone();
    let tool = WebFetchTool::builder(settings.clone())
        .ssrf_validator(Arc::new(validator(&settings)))
        .build()
        .unwrap();

    let url = format!("http://page.test:{}/app", rig.port);
    let json = tool
        .call(&serde_json::json!({ "url": url }), usize::MAX)
        .await
        .map(|built| built.json)
        .unwrap();
    let response: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(response["rendering_method"], "browser", "{json}");
    assert!(json.contains("Rendered SPA"), "{json}");
    assert_eq!(response["notes"], serde_json::json!([]), "{json}");
    // The same call again is a hit on the browser entry, not a second render.
    let again = tool
        .call(&serde_json::json!({ "url": url }), usize::MAX)
        .await
        .map(|built| built.json)
        .unwrap();
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["notes"], serde_json::json!(["cache_hit"]), "{again}");
    assert_eq!(again["rendering_method"], "browser");
    assert_eq!(again["chunks"], response["chunks"]);

    let cache = DiskCache::open(&cache_settings).unwrap();
    let canonical = CanonicalUrl::parse(&url).unwrap();
    let now = time::OffsetDateTime::now_utc();
    let browser_entry = cache
        .get(
            &canonical,
            RenderingMethod::Browser,
            Variant::default(),
            now,
        )
        .expect("browser result cached");
    assert!(browser_entry.document.markdown.contains("Rendered SPA"));
    assert!(
        cache
            .get(&canonical, RenderingMethod::Http, Variant::default(), now)
            .is_none(),
        "the intermediate HTTP extraction must not be cached"
    );
    let files: Vec<PathBuf> = walk(cache_dir.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

/// SRD-READINGS 30: during an SPA fallback, a browser that is available but fails
/// (here the shell's script sends the top frame to a blocked address) answers with
/// that error; only an unavailable browser leaves the HTTP result standing.
#[tokio::test]
async fn srd_readings_30_a_failing_browser_during_the_fallback_is_the_answer() {
    use webfetch::WebFetchTool;

    let Some(rig) = Rig::new().await else { return };
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    serve_html(
        &rig.server,
        "/app",
        &format!(
            "<!doctype html><html><head><title>App</title></head><body><p>Loading…</p>\
             <div id=\"root\"></div><script>location.href = 'http://127.0.0.2:{iport}/secret';</script>\
             </body></html>"
        ),
    )
    .await;
    let settings = rig.config(&[iport], "").settings();
    let tool = WebFetchTool::builder(settings.clone())
        .ssrf_validator(Arc::new(validator(&settings)))
        .build()
        .unwrap();
    let url = format!("http://page.test:{}/app", rig.port);
    let error = tool
        .call(
            &serde_json::json!({ "url": url, "no_cache": true }),
            usize::MAX,
        )
        .await
        .map(|built| built.json)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::SsrfBlocked, "{}", error.to_json());
    assert_never_contacted(&internal).await;
}

/// Issue 15 item 1: a response our client fetched for a subresource redirect that
/// Chromium never follows (`redirect: 'manual'`) is never served to a later
/// top-frame navigation to its URL: that navigation is a hop of the main chain,
/// robots.txt checked and counted, and `final_url` names it.
#[tokio::test]
async fn issue_15_unfollowed_subresource_redirect_never_answers_a_navigation() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    // Each page fetches `redirecting` without following it, then navigates to
    // where it redirects.
    let attack = |redirecting: &str, to: &str| {
        html_page(&format!(
            "<script>fetch('{redirecting}', {{ redirect: 'manual' }}).then(r => {{ mark('TYPE:' + r.type); location.href = '{to}'; }});</script>"
        ))
    };
    let cross = format!("http://page.test:{port}/private");
    serve_html(server, "/same-origin", &attack("/r1", "/private")).await;
    serve_html(server, "/cross-origin", &attack("/r2", &cross)).await;
    serve_html(server, "/allowed", &attack("/r3", "/public")).await;
    redirect(server, "/r1", 302, "/private").await;
    redirect(server, "/r2", 302, &cross).await;
    redirect(server, "/r3", 302, "/public").await;
    serve_html(server, "/private", &html_page("<h1>Private</h1>")).await;
    serve_html(server, "/public", &html_page("<h1>Public</h1>")).await;

    for start in ["/same-origin", "/cross-origin"] {
        let robots = RecordingRobots::default();
        let run = run(rig.settings(), &rig.url(start), Some(&robots)).await;
        assert_eq!(
            run.result
                .as_ref()
                .map(|p| p.final_url.to_string())
                .map_err(|e| e.code),
            Err(ErrorCode::RobotsDisallowed),
            "{start}: {}",
            run.logs
        );
        let asked = robots.0.lock().unwrap().clone();
        assert_eq!(
            asked.last().unwrap(),
            &format!("{start} -> /private"),
            "{asked:?}"
        );
    }
    // Allowed by robots.txt: the navigation is a counted hop, fetched for the
    // main chain, and the page returned is the one navigated to.
    let robots = RecordingRobots::default();
    let ok = run(rig.settings(), &rig.url("/allowed"), Some(&robots)).await;
    let page = ok.page();
    assert!(page.html.contains("<h1>Public</h1>"), "{}", page.html);
    assert_eq!(page.final_url.as_str(), rig.url("/public"));
    assert_eq!(
        robots.0.lock().unwrap().last().unwrap(),
        "/allowed -> /public"
    );
    // Counted: one redirect to the page, then the navigation is the second hop
    // (max_redirects also limits the subresource's own redirect, so not 0).
    redirect(server, "/to-allowed", 302, "/allowed").await;
    let limited = rig
        .render(
            rig.config(&[], "").top("max_redirects = 1").settings(),
            "/to-allowed",
        )
        .await;
    assert_eq!(limited.error().code, ErrorCode::RedirectLimit);
    assert_eq!(limited.error().details_json()["count"], 2);
}

/// Issue 15 item 1 (regression): redirected subresources still load at their
/// final URL, replayed to Chromium rather than fetched twice.
#[tokio::test]
async fn issue_15_redirected_subresources_still_load() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<script src="/old.js"></script>
<iframe src="/old-frame"></iframe>
<script>
fetch('/old.txt').then(r => r.text().then(t => mark(t + '@' + new URL(r.url).pathname)))
  .then(() => new Promise(res => { if (window.FRAME_SEEN) res(); else window.frameSeen = res; }))
  .then(done);
</script>"#,
    )
    .await;
    redirect(server, "/old.js", 302, "/new.js").await;
    redirect(server, "/old.txt", 301, "/new.txt").await;
    redirect(server, "/old-frame", 302, "/new-frame").await;
    serve(server, "/new.js", "text/javascript", "mark('SCRIPT-OK');").await;
    serve(server, "/new.txt", "text/plain", "TEXT-OK").await;
    serve_html(
        server,
        "/new-frame",
        "<script>parent.mark('FRAME-OK@' + location.pathname); parent.FRAME_SEEN = true; if (parent.frameSeen) parent.frameSeen();</script>",
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    for mark in [
        "SCRIPT-OK",
        "TEXT-OK@/new.txt",
        "FRAME-OK@/new-frame",
        "DONE",
    ] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let paths = received_paths(server).await;
    for fetched_once in ["/new.js", "/new.txt", "/new-frame"] {
        assert_eq!(
            paths.iter().filter(|p| *p == fetched_once).count(),
            1,
            "{fetched_once}: {paths:?}"
        );
    }
}

/// Issue 15 item 6 (Appendix G steps 4 and 9, BROWSER-BUDGET-02): an iframe's
/// document is outside the subresource budget: it loads after the budget is
/// spent, while the frame's own subresources are refused.
#[tokio::test]
async fn issue_15_iframe_documents_are_outside_the_subresource_budget() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<script>
const s = document.createElement('script');
s.src = '/A.js';
s.onload = () => {
  const f = document.createElement('iframe');
  f.src = '/frame';
  document.body.appendChild(f);
};
document.head.appendChild(s);
</script>"#,
    )
    .await;
    serve(
        server,
        "/A.js",
        "text/javascript",
        sized_script("A", 1_100_000),
    )
    .await;
    serve_html(
        server,
        "/frame",
        r#"<p>frame</p><script>parent.mark('FRAME-DOC-RAN');</script>
<script src="/frame.js" onerror="parent.mark('FRAME-SUB-FAILED'); parent.done();"></script>"#,
    )
    .await;
    serve(
        server,
        "/frame.js",
        "text/javascript",
        "parent.mark('FRAME-SUB-RAN');",
    )
    .await;

    let settings = rig
        .config(&[], "max_total_subresource_bytes = 1048576")
        .top("max_download_bytes = 2000000")
        .settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    for mark in ["A-RAN", "FRAME-DOC-RAN", "FRAME-SUB-FAILED", "DONE"] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    assert!(!has_mark(page, "FRAME-SUB-RAN"), "{}", page.html);
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/frame".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/frame.js".to_owned()), "{paths:?}");
}

/// The value of `field` on a captured log line (`field=value`, unquoted numbers).
fn field_of(line: &str, field: &str) -> Option<u64> {
    let start = line.find(&format!(" {field}="))? + field.len() + 2;
    let digits: String = line[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Issue 15 item 8: a render's subrequests make one summary line, at WARN when
/// one hit a limit or a block and INFO otherwise; each one's own events are DEBUG
/// but for `ssrf_blocked` (FR-WF-19c, T-WF-INFRA-05 step 6).
#[tokio::test]
async fn issue_15_one_summary_line_per_render_for_the_subrequests() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    serve_html(
        server,
        "/busy",
        &rig.gated_page(&format!(
            r#"<script>
const tries = ['/a.txt', 'http://internal.test:{iport}/secret', '/big.txt'];
Promise.all(tries.map(u => fetch(u).then(r => r.text()).then(t => mark('OK:' + t.length), () => mark('FAILED'))))
  .then(done);
</script>"#
        )),
    )
    .await;
    rig.serve_gated("/quiet", "<script>done();</script>").await;
    serve(server, "/a.txt", "text/plain", "small").await;
    serve(server, "/big.txt", "text/plain", vec![b'x'; 200_000]).await;
    let settings = || {
        rig.config(&[iport], "")
            .top("max_download_bytes = 100000")
            .settings()
    };

    let busy = rig.render(settings(), "/busy").await;
    let page = busy.page();
    assert!(has_mark(page, "DONE"), "{}", page.html);
    let summary = log_lines(&busy.logs, "browser_subrequests", "");
    assert_eq!(summary.len(), 1, "{}", busy.logs);
    let line = summary[0];
    assert!(line.contains(" WARN "), "{line}");
    for (field, expected) in [
        ("ssrf_blocked", 1),
        ("too_large", 1),
        ("port_blocked", 0),
        ("timeouts", 0),
        ("over_budget", 0),
        ("failed", 0),
    ] {
        assert_eq!(field_of(line, field), Some(expected), "{field}: {line}");
    }
    // /a.txt and the gate's hold and release at least (Chromium may also ask
    // for a favicon).
    assert!(field_of(line, "fetched").unwrap() >= 2, "{line}");
    assert!(field_of(line, "bytes").unwrap() >= 7, "{line}");
    let too_large = log_lines(&busy.logs, "subresource_too_large", "big.txt");
    assert_eq!(too_large.len(), 1, "{}", busy.logs);
    assert!(too_large[0].contains(" DEBUG "), "{}", too_large[0]);
    let blocked = log_lines(&busy.logs, "ssrf_blocked", "127.0.0.2");
    assert_eq!(blocked.len(), 1, "{}", busy.logs);
    assert!(blocked[0].contains(" WARN "), "{}", blocked[0]);
    // Nothing else of the subrequests at WARN.
    let warnings: Vec<&str> = subrequest_warnings(&busy.logs);
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert_never_contacted(&internal).await;

    let quiet = rig.render(settings(), "/quiet").await;
    assert!(has_mark(quiet.page(), "DONE"), "{}", quiet.page().html);
    let summary = log_lines(&quiet.logs, "browser_subrequests", "");
    assert_eq!(summary.len(), 1, "{}", quiet.logs);
    assert!(summary[0].contains(" INFO "), "{}", summary[0]);
    assert_eq!(field_of(summary[0], "ssrf_blocked"), Some(0));
    assert!(
        subrequest_warnings(&quiet.logs).is_empty(),
        "{}",
        quiet.logs
    );
}

/// WARN lines about subrequests (their events all name one).
fn subrequest_warnings(logs: &str) -> Vec<&str> {
    logs.lines()
        .filter(|l| l.contains(" WARN ") && (l.contains("subre") || l.contains("ssrf_blocked")))
        .collect()
}

/// Issue 15 item 3 (SRD-READINGS 22, 23): a form POST submitted while the page is
/// still loading is cancelled and the page as it was is the answer, with the
/// note; never a wait for a DOMContentLoaded that the cancelled navigation took
/// away (which used to end in `timeout` after the whole budget).
#[tokio::test]
async fn issue_15_a_post_submitted_during_load_is_cancelled_not_waited_for() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    serve_page(
        server,
        r#"<h1>Original page</h1>
<form id="f" method="POST" action="/submit"><input name="q" value="x"></form>
<script>document.getElementById('f').submit();</script>
<p>Text after the form.</p>"#,
    )
    .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("POST-ACCEPTED"))
        .mount(server)
        .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(page.blocked_non_get);
    assert!(
        page.html.contains("<h1>Original page</h1>"),
        "{}",
        page.html
    );
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let requests = server.received_requests().await.unwrap();
    assert!(requests.iter().all(|r| r.method.as_str() == "GET"));
}
