//! Rendering selection through the real configuration loader and extractor
//! (SRD 3.4.6, Appendix B.3), and the browser-unavailable paths that need no
//! Chromium (FR-WF-11a). Browser renders themselves are in `tests/browser.rs`.

use std::sync::Arc;

use tokio::time::Instant;
use webfetch::Settings;

use crate::support::load as settings;
use webfetch::CanonicalUrl;
use webfetch::ErrorCode;
use webfetch::ExtractionMode;
use webfetch::SsrfValidator;
use webfetch::internals::extract::extract_html;
use webfetch::internals::render::browser::{RenderContext, render};
use webfetch::internals::render::select::{RenderPlan, extracted_chars, plan, should_fall_back};
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;

fn url(text: &str) -> CanonicalUrl {
    CanonicalUrl::parse(text).unwrap()
}

#[test]
fn t_wf_ren_01_js_heavy_domains_from_a_config_file() {
    let s = settings(
        r#"[tools.webfetch.rendering]
           js_heavy_domains = ["Dashboard.Example.com", ".SPA.example", "Bücher.example"]"#,
    );
    let cases = [
        (
            "https://dashboard.example.com/x",
            RenderPlan::BrowserPreferred,
        ),
        (
            "https://DASHBOARD.example.com:8443/",
            RenderPlan::BrowserPreferred,
        ),
        (
            "https://www.dashboard.example.com/",
            RenderPlan::HttpThenMaybeBrowser,
        ),
        ("https://app.spa.example/", RenderPlan::BrowserPreferred),
        (
            "https://deep.app.spa.example/",
            RenderPlan::BrowserPreferred,
        ),
        ("https://spa.example/", RenderPlan::HttpThenMaybeBrowser),
        // The URL host and the entry both go through IDNA.
        ("https://bücher.example/", RenderPlan::BrowserPreferred),
        (
            "https://xn--bcher-kva.example/",
            RenderPlan::BrowserPreferred,
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(plan(false, &url(text), &s), expected, "{text}");
    }
    assert_eq!(
        plan(true, &url("https://other.example/"), &s),
        RenderPlan::Browser
    );
}

const SPA_SHELL: &str = r#"<!doctype html><html><head><title>App</title>
<script type="module" src="/assets/index.js"></script></head>
<body><p>Loading…</p><div id="app"></div></body></html>"#;

fn article() -> String {
    format!(
        "<html><body><div id=\"root\"><article><h1>Post</h1><p>{}</p></article></div></body></html>",
        "Server-rendered prose that needs no script. ".repeat(15)
    )
}

#[test]
fn fr_wf_12c_fallback_decision_on_real_extraction() {
    let s = settings("");
    let base = url::Url::parse("https://site.example/").unwrap();
    let shell = extract_html(SPA_SHELL, &base, ExtractionMode::Srd)
        .unwrap()
        .document;
    assert!(extracted_chars(&shell.markdown) < 400);
    assert!(should_fall_back(
        extracted_chars(&shell.markdown),
        SPA_SHELL,
        true,
        &s.rendering
    ));
    // Not after a non-200 answer (FR-WF-12f), not with enough text, not when
    // disabled (FR-WF-12e).
    assert!(!should_fall_back(
        extracted_chars(&shell.markdown),
        SPA_SHELL,
        false,
        &s.rendering
    ));
    let html = article();
    let full = extract_html(&html, &base, ExtractionMode::Srd)
        .unwrap()
        .document;
    assert!(!should_fall_back(
        extracted_chars(&full.markdown),
        &html,
        true,
        &s.rendering
    ));
    let off = settings("[tools.webfetch.rendering]\nspa_fallback_enabled = false");
    assert!(!should_fall_back(0, SPA_SHELL, true, &off.rendering));
    assert_eq!(
        plan(false, &url("https://site.example/"), &off),
        RenderPlan::Http
    );
}

async fn render_with(settings: Settings) -> webfetch::FetchError {
    let settings = Arc::new(settings);
    // The page passes the client's checks before any browser is looked for: a
    // public address, and nothing is connected to.
    let public = [std::net::IpAddr::from([93, 184, 216, 34])];
    let validator: Arc<dyn SsrfValidator> =
        Arc::new(StubValidator::new(&settings.security).with_host("site.example", &public));
    let client = HttpClient::new(Arc::clone(&settings), validator);
    let target = url("https://site.example/");
    let ctx = RenderContext::new(&client, &target, Instant::now() + settings.timeout());
    render(&ctx).await.expect_err("no browser can render here")
}

#[tokio::test]
async fn fr_wf_11a_disabled_or_missing_browser_is_unavailable() {
    let disabled = render_with(settings("[tools.webfetch.browser]\nenabled = false")).await;
    assert_eq!(disabled.code(), ErrorCode::BrowserUnavailable);
    assert!(!disabled.is_retryable());
    let missing = render_with(settings(
        "[tools.webfetch.browser]\nchromium_path = \"/nonexistent/chromium\"",
    ))
    .await;
    assert_eq!(missing.code(), ErrorCode::BrowserUnavailable);
    assert_eq!(
        missing.details_json()["chromium_path"],
        "/nonexistent/chromium"
    );
    // What the pipeline does with it depends on the plan (FR-WF-11a, 12d,
    // SRD-READINGS 19).
    assert!(!RenderPlan::Browser.falls_back_to_http_when_unavailable());
    assert!(RenderPlan::BrowserPreferred.falls_back_to_http_when_unavailable());
}
