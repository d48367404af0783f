//! Choosing the renderer, content types, text/plain, and stalled servers and
//! robots.txt through the pipeline (IT-WF-BR-02, 07, IT-WF-HTTP-03, FR-WF-10a,
//! SRD-READINGS 19, 26).

use super::*;

// ---------------------------------------------------------------- rendering

/// An unrendered SPA shell: an indicator and almost no text.
const SPA_SHELL: &str = r#"<!DOCTYPE html><html><head><title>App</title>
<script type="module" src="/assets/app.js"></script></head>
<body><div id="root"><p>Loading the application</p></div></body></html>"#;

#[tokio::test]
async fn it_wf_br_07_spa_shell_with_browser_unavailable_uses_http() {
    let server = MockServer::start().await;
    serve(&server, "/app", html(SPA_SHELL)).await;
    let url = site(&server, "/app");

    let (cache, tool) = cached_tool(&server); // browser.enabled = false
    let response = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(response["rendering_method"], "http");
    assert_eq!(notes(&response), ["browser_unavailable_used_http"]);
    assert_eq!(all_text(&response), "Loading the application");
    // FR-WF-CCH-KEY-03: the result returned (HTTP) is what is cached.
    let key = CacheKey::new(
        &CanonicalUrl::parse(&url).unwrap(),
        RenderingMethod::Http,
        Variant::default(),
    );
    assert_eq!(json_files(cache.path()), [key.entry_path(cache.path())]);

    // FR-WF-12e: with the fallback off, no attempt and no note.
    let off = config(&server)
        .section("[tools.webfetch.rendering]\nspa_fallback_enabled = false")
        .tool();
    let response = fetch_ok(&off, json!({ "url": url })).await;
    assert_eq!(response["notes"], json!([]));

    // Enough text: not an SPA shell whatever the markers say.
    serve(
        &server,
        "/rich",
        html(&long_article(3).replace("<main>", "<main id=\"root\">")),
    )
    .await;
    let response = fetch_ok(&tool, url_args(&server, "/rich")).await;
    assert_eq!(response["notes"], json!([]));
}

#[tokio::test]
async fn it_wf_br_02_force_browser_with_browser_disabled_is_browser_unavailable() {
    let server = article_server("/page").await;
    let tool = config(&server).tool();
    let error = fetch_err(
        &tool,
        json!({ "url": site(&server, "/page"), "force_browser": true }),
    )
    .await;
    assert_code(&error, ErrorCode::BrowserUnavailable);
    assert!(!error.is_retryable());
    assert!(error.details_json().contains_key("chromium_path"));
    assert!(error.details_json().contains_key("error"));
    assert_eq!(
        hits(&server, "/page").await,
        0,
        "no HTTP fallback when forced"
    );
}

#[tokio::test]
async fn srd_readings_19_js_heavy_host_without_browser_uses_http() {
    let server = article_server("/page").await;
    let cache_dir = tempfile::tempdir().unwrap();
    let tool = config(&server)
        .cache(cache_dir.path())
        .section("[tools.webfetch.rendering]\njs_heavy_domains = [\"site.test\"]")
        .tool();
    let response = fetch_ok(&tool, url_args(&server, "/page")).await;
    assert_eq!(response["rendering_method"], "http");
    assert_eq!(notes(&response), ["browser_unavailable_used_http"]);
    assert!(all_text(&response).contains("Pipelines in Rust"));
    // The HTTP result was cached under `http`; the next call finds it there.
    let again = fetch_ok(&tool, url_args(&server, "/page")).await;
    assert_eq!(notes(&again), ["cache_hit"]);
    assert_eq!(again["rendering_method"], "http");
    assert_eq!(hits(&server, "/page").await, 1);
    // force_browser never takes an HTTP entry for a browser render.
    let forced = call(
        &tool,
        json!({ "url": site(&server, "/page"), "force_browser": true }),
    )
    .await;
    assert_eq!(forced.unwrap_err().code(), ErrorCode::BrowserUnavailable);
}

/// An HTTP result cached while the browser was unavailable is
/// served while it stays unavailable, and passed over once a browser is found
/// (here `/bin/false`: found, so available, but it fails to start, which gives
/// the HTTP result and its note again; with a real Chromium the call renders).
#[tokio::test]
async fn an_http_stand_in_is_not_served_once_a_browser_is_available() {
    let server = article_server("/page").await;
    serve(&server, "/other", html(ARTICLE)).await;
    let cache_dir = tempfile::tempdir().unwrap();
    let js_heavy = "[tools.webfetch.rendering]\njs_heavy_domains = [\"site.test\"]";
    let without = config(&server)
        .cache(cache_dir.path())
        .section(js_heavy)
        .tool();
    let first = fetch_ok(&without, url_args(&server, "/page")).await;
    assert_eq!(notes(&first), ["browser_unavailable_used_http"]);
    let still = fetch_ok(&without, url_args(&server, "/page")).await;
    assert_eq!(notes(&still), ["cache_hit"]);
    assert_eq!(hits(&server, "/page").await, 1);

    let with = config(&server)
        .cache(cache_dir.path())
        .section(js_heavy)
        .section("[tools.webfetch.browser]\nchromium_path = \"/bin/false\"")
        .tool();
    let again = fetch_ok(&with, url_args(&server, "/page")).await;
    assert_eq!(notes(&again), ["browser_unavailable_used_http"], "{again}");
    assert_eq!(
        hits(&server, "/page").await,
        2,
        "rendered again, not served"
    );
    // A page HTTP rendered by plan is served whatever the browser's state.
    let plain = config(&server).cache(cache_dir.path()).tool();
    let other = fetch_ok(&plain, url_args(&server, "/other")).await;
    assert_eq!(notes(&other), Vec::<&str>::new());
    let plain_with = config(&server)
        .cache(cache_dir.path())
        .section("[tools.webfetch.browser]\nchromium_path = \"/bin/false\"")
        .tool();
    let hit = fetch_ok(&plain_with, url_args(&server, "/other")).await;
    assert_eq!(notes(&hit), ["cache_hit"]);
}

#[tokio::test]
async fn t_wf_ext_08_pipeline_boilerplate_only_page_is_extraction_failed() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/empty",
        html("<html><body><nav>Home About</nav><footer>(c) 2026</footer></body></html>"),
    )
    .await;
    let tool = config(&server).tool();
    let error = fetch_err(&tool, url_args(&server, "/empty")).await;
    assert_code(&error, ErrorCode::ExtractionFailed);
    assert_eq!(error.details_json()["error"], "no_extractable_content");
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn fr_wf_13c_text_plain_is_whitespace_normalised_only() {
    let server = MockServer::start().await;
    let body = "Plain   notes\r\n\r\n\r\n\r\n<b>not html</b>   \n# not a heading either\n";
    serve(
        &server,
        "/notes.txt",
        typed(body.as_bytes(), "text/plain; charset=utf-8"),
    )
    .await;
    serve(
        &server,
        "/bare.txt",
        typed(b"caf\xc3\xa9 \xff", "text/plain"),
    )
    .await;
    let tool = config(&server).tool();

    let response = fetch_ok(&tool, url_args(&server, "/notes.txt")).await;
    assert_eq!(response["rendering_method"], "http");
    assert!(response.get("title").is_none() && response.get("language").is_none());
    assert_eq!(response["notes"], json!([]));
    let text = all_text(&response);
    assert!(text.contains("<b>not html</b>"), "{text:?}");
    // FR-WF-13b: CRLF to LF, runs of blank lines cut to two, trailing spaces gone.
    assert_eq!(
        text,
        "Plain   notes\n\n\n<b>not html</b>\n# not a heading either"
    );

    // SRD-READINGS 12: no declared charset, text/plain included.
    let response = fetch_ok(&tool, url_args(&server, "/bare.txt")).await;
    assert_eq!(notes(&response), ["charset_fallback"]);
    assert_eq!(all_text(&response), "café \u{fffd}");

    // An empty text/plain body is an error like an empty HTML page, never `chunks: []`.
    serve(
        &server,
        "/blank.txt",
        typed(b" \r\n\t\n", "text/plain; charset=utf-8"),
    )
    .await;
    let error = fetch_err(&tool, url_args(&server, "/blank.txt")).await;
    assert_code(&error, ErrorCode::ExtractionFailed);
    assert_eq!(error.details_json()["error"], "no_extractable_content");
}

#[tokio::test]
async fn it_wf_http_03_pipeline_unsupported_content_type() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/file",
        typed(b"%PDF-1.7 binary", "application/pdf"),
    )
    .await;
    let tool = config(&server).tool();
    let error = fetch_err(&tool, url_args(&server, "/file")).await;
    assert_code(&error, ErrorCode::UnsupportedContentType);
    assert_eq!(error.details_json()["content_type"], "application/pdf");
}

#[tokio::test]
async fn fr_wf_10a_stalled_server_is_a_structured_timeout() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/slow",
        html(ARTICLE).set_delay(Duration::from_secs(120)),
    )
    .await;
    let tool = config(&server).top("timeout_seconds = 1").tool();
    let error = fetch_err(&tool, url_args(&server, "/slow")).await;
    assert_code(&error, ErrorCode::Timeout);
    assert!(error.is_retryable());
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    assert_eq!(error.details_json()["phase"], "request");
}

/// A robots.txt that stalls: answered only after two minutes, far past
/// `timeout_seconds = 1` (the server accepts and never answers in time).
fn stalled_robots() -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_raw(b"User-agent: *\nDisallow: /\n".to_vec(), "text/plain")
        .set_delay(Duration::from_secs(120))
}

/// SRD-READINGS 26: robots.txt has its own budget; the document then gets its full
/// budget. Failing open, a stalled robots.txt is allow-all with the note and the
/// page is fetched (the budgets are not shared: the page would otherwise time out
/// at the moment robots.txt does).
#[tokio::test]
async fn srd_readings_26_stalled_robots_fail_open_then_full_document_budget() {
    let server = article_server("/article").await;
    serve(&server, "/robots.txt", stalled_robots()).await;
    let tool = config(&server)
        .top("timeout_seconds = 1")
        .section(FAIL_OPEN)
        .tool();
    let response = fetch_ok(&tool, url_args(&server, "/article")).await;
    assert_eq!(notes(&response), ["robots_unavailable_fail_open"]);
    assert!(all_text(&response).contains("Pipelines in Rust"));
    assert_eq!(hits(&server, "/article").await, 1);
}

/// SRD-READINGS 26, failing closed: `timeout` in phase `robots`, the page never
/// requested.
#[tokio::test]
async fn srd_readings_26_stalled_robots_fail_closed_is_a_robots_timeout() {
    let server = article_server("/article").await;
    serve(&server, "/robots.txt", stalled_robots()).await;
    let tool = config(&server).top("timeout_seconds = 1").tool();
    let error = fetch_err(&tool, url_args(&server, "/article")).await;
    assert_code(&error, ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "robots");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    assert_eq!(hits(&server, "/article").await, 0);
}

/// SRD-READINGS 26 on a redirect hop: the hop's robots.txt check has its own
/// budget and the document's budget is not spent meanwhile, so a stalled robots.txt
/// on the target origin fails open and the target page is still fetched; failing
/// closed it is the robots timeout.
#[tokio::test]
async fn srd_readings_26_stalled_robots_of_a_redirect_hop_has_its_own_budget() {
    let target = article_server("/article").await;
    serve(&target, "/robots.txt", stalled_robots()).await;
    let source = MockServer::start().await;
    serve(&source, "/robots.txt", ResponseTemplate::new(404)).await;
    let location = format!("http://other.test:{}/article", target.address().port());
    serve(
        &source,
        "/start",
        ResponseTemplate::new(302).insert_header("location", location.as_str()),
    )
    .await;
    let ports = [source.address().port(), target.address().port()];

    let open = Config::new(&ports)
        .top("timeout_seconds = 1")
        .section(FAIL_OPEN)
        .tool();
    let response = fetch_ok(&open, url_args(&source, "/start")).await;
    assert_eq!(notes(&response), ["robots_unavailable_fail_open"]);
    assert_eq!(response["final_url"], location);
    assert!(all_text(&response).contains("Pipelines in Rust"));

    let strict = Config::new(&ports).top("timeout_seconds = 1").tool();
    let error = fetch_err(&strict, url_args(&source, "/start")).await;
    assert_code(&error, ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "robots");
    assert_eq!(
        hits(&target, "/article").await,
        1,
        "only the fail-open fetch"
    );
}
