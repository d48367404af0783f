//! FR-WF-DNS-01 step 3 through the whole tool: "re-resolution during a fetch is
//! forbidden". A counting resolver shows one resolution per host per tool call,
//! shared by robots.txt, the document, a redirect back to a host already seen,
//! and in browser mode the page's pre-launch check, its top document and its
//! subresources; one more per redirect to a new host.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use webfetch::WebFetchTool;
use webfetch::testing::StubValidator;
use webfetch::{SsrfError, SsrfValidator};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, browser_section, chromium, hits, html, robots, serve, site, stub};

/// The stub resolver of `support`, recording every name it is asked to resolve.
struct Counting {
    inner: StubValidator,
    lookups: Mutex<Vec<String>>,
}

impl Counting {
    fn lookups(&self) -> Vec<String> {
        self.lookups.lock().unwrap().clone()
    }
}

impl SsrfValidator for Counting {
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError> {
        self.inner.validate_ip(ip)
    }

    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError> {
        self.lookups.lock().unwrap().push(host.to_owned());
        self.inner.resolve_and_validate(host)
    }
}

/// A tool over `config` whose resolver counts.
fn counting_tool(config: &Config) -> (WebFetchTool, Arc<Counting>) {
    let settings = config.settings();
    let counting = Arc::new(Counting {
        inner: stub(&settings),
        lookups: Mutex::new(Vec::new()),
    });
    let validator: Arc<dyn SsrfValidator> = Arc::clone(&counting) as _;
    let tool = WebFetchTool::builder(settings)
        .ssrf_validator(validator)
        .build()
        .unwrap();
    (tool, counting)
}

async fn call_ok(tool: &WebFetchTool, args: Value) -> Value {
    let json = tool
        .call(&args, usize::MAX)
        .await
        .map(|built| built.json)
        .expect("fetch succeeds");
    serde_json::from_str(&json).expect("response is JSON")
}

const PAGE: &str = "<html><head><title>T</title></head><body><article><p>\
    One resolution per host per call, whatever asks for it.</p></article></body></html>";

#[tokio::test]
async fn fr_wf_dns_01_3_robots_and_document_share_one_resolution() {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    serve(&server, "/page", html(PAGE)).await;
    let (tool, counting) = counting_tool(&Config::new(&[server.address().port()]));

    let args = json!({ "url": site(&server, "/page") });
    call_ok(&tool, args.clone()).await;
    assert_eq!(hits(&server, "/robots.txt").await, 1);
    assert_eq!(hits(&server, "/page").await, 1);
    assert_eq!(counting.lookups(), ["site.test"]);

    // A new call is a new fetch: its own resolution (robots.txt is cached now).
    let mut again = args;
    again["no_cache"] = json!(true);
    call_ok(&tool, again).await;
    assert_eq!(counting.lookups(), ["site.test", "site.test"]);
}

#[tokio::test]
async fn fr_wf_dns_01_3_one_more_resolution_per_new_host_of_a_redirect_chain() {
    let server = MockServer::start().await;
    let port = server.address().port();
    robots(&server, "User-agent: *\nAllow: /\n").await;
    let redirect = |to: String| ResponseTemplate::new(302).insert_header("location", to);
    serve(
        &server,
        "/a",
        redirect(format!("http://other.test:{port}/b")),
    )
    .await;
    serve(
        &server,
        "/b",
        redirect(format!("http://site.test:{port}/c")),
    )
    .await;
    serve(
        &server,
        "/c",
        redirect(format!("http://other.test:{port}/page")),
    )
    .await;
    serve(&server, "/page", html(PAGE)).await;
    let (tool, counting) = counting_tool(&Config::new(&[port]));

    let response = call_ok(&tool, json!({ "url": site(&server, "/a") })).await;
    assert_eq!(
        response["final_url"],
        format!("http://other.test:{port}/page")
    );
    // robots.txt of both origins was read (same listener, two origins) ...
    assert_eq!(hits(&server, "/robots.txt").await, 2);
    // ... and each host was resolved once, when the chain first reached it.
    assert_eq!(counting.lookups(), ["site.test", "other.test"]);
}

#[tokio::test]
async fn fr_wf_dns_01_3_a_refused_host_is_not_resolved_again_within_the_call() {
    // `internal.test` resolves to 10.0.0.5: blocked. The refusal ends the call; the
    // count shows the document was not looked up a second time for robots.txt.
    let server = MockServer::start().await;
    let port = server.address().port();
    let (tool, counting) = counting_tool(&Config::new(&[port]));
    let error = tool
        .call(
            &json!({ "url": format!("http://internal.test:{port}/") }),
            usize::MAX,
        )
        .await
        .map(|built| built.json)
        .unwrap_err();
    assert_eq!(error.code(), webfetch::ErrorCode::SsrfBlocked);
    assert_eq!(counting.lookups(), ["internal.test"]);
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// Browser mode, when `FORGE_TEST_CHROMIUM_PATH` names a Chromium: the page's
/// check before launch, its top document, a redirect back to the same host and
/// its subresources all use the one resolution; the SPA fallback (HTTP, then the
/// browser) too.
#[tokio::test]
async fn fr_wf_dns_01_3_browser_top_document_and_subresources_share_the_resolution() {
    let Some(chromium) = chromium() else { return };
    let server = MockServer::start().await;
    let port = server.address().port();
    robots(&server, "User-agent: *\nAllow: /\n").await;
    serve(
        &server,
        "/start",
        ResponseTemplate::new(302).insert_header("location", "/page"),
    )
    .await;
    let page = "<html><head><title>T</title><link rel=stylesheet href=/style.css></head>\
        <body><div id=\"root\"></div><img src=/pixel.png><p>Rendered page text.</p></body></html>";
    serve(&server, "/page", html(page)).await;
    serve(
        &server,
        "/style.css",
        ResponseTemplate::new(200).set_body_raw("p{}", "text/css"),
    )
    .await;
    serve(
        &server,
        "/pixel.png",
        ResponseTemplate::new(200).set_body_raw(b"\x89PNG\r\n\x1a\n".to_vec(), "image/png"),
    )
    .await;
    let config = Config::new(&[port]).section(&browser_section(&chromium, ""));

    let (tool, counting) = counting_tool(&config);
    let forced = json!({ "url": site(&server, "/start"), "force_browser": true });
    let response = call_ok(&tool, forced).await;
    assert_eq!(response["rendering_method"], "browser", "{response}");
    assert!(hits(&server, "/style.css").await + hits(&server, "/pixel.png").await >= 1);
    assert_eq!(counting.lookups(), ["site.test"]);

    // An SPA shell over HTTP that falls back to the browser: still one.
    serve(
        &server,
        "/shell",
        html("<html><body><p>Loading</p><div id=\"root\"></div><script src=/bundle.js></script></body></html>"),
    )
    .await;
    let bundle = "document.getElementById('root').innerHTML = \
        '<main><p>' + 'Rendered by the bundle. '.repeat(30) + '</p></main>';";
    serve(
        &server,
        "/bundle.js",
        ResponseTemplate::new(200).set_body_raw(bundle, "text/javascript"),
    )
    .await;
    let (tool, counting) = counting_tool(&config);
    let response = call_ok(&tool, json!({ "url": site(&server, "/shell") })).await;
    assert_eq!(response["rendering_method"], "browser", "{response}");
    assert_eq!(counting.lookups(), ["site.test"]);
}
