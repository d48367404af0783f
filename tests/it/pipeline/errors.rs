//! Every error path gives the JSON envelope, and every registry code is produced
//! (T-WF-ERR-01, 02), with the SSRF and charset cases through the pipeline.

use super::*;

// ---------------------------------------------------------------- errors

/// Registry codes no path of this build can produce, with the reason. T-WF-ERR-02
/// fails if a code is produced that is listed here, or if one that is not listed
/// is no longer produced.
const NOT_PRODUCIBLE: [(ErrorCode, &str); 1] = [(
    ErrorCode::BrowserCrashed,
    "needs a real Chromium to kill mid-render: produced and asserted by \
     tests/browser.rs::fr_wf_11_browser_dying_mid_render_is_browser_crashed, which runs \
     where FORGE_TEST_CHROMIUM_PATH is set (CI installs Chromium)",
)];

/// One row of [`every_error_path`]: label, expected code, tool, arguments and the
/// output budget.
type ErrorCase<'a> = (&'static str, ErrorCode, &'a WebFetchTool, Value, usize);

/// An error case run by `tool` with a roomy (1 MiB) output budget.
fn case<'a>(
    label: &'static str,
    code: ErrorCode,
    tool: &'a WebFetchTool,
    args: Value,
) -> ErrorCase<'a> {
    (label, code, tool, args, 1 << 20)
}

/// One real path per registry code, each run the way a host runs the tool
/// (`run_tool`, `ToolCtx`); returns (label, expected code, result).
async fn every_error_path() -> Vec<(&'static str, ErrorCode, ToolResult)> {
    let server = MockServer::start().await;
    let port = server.address().port();
    let blocked = format!("http://site.test:{}/", if port == 9 { 10 } else { 9 });
    robots(
        &server,
        "User-agent: *\nDisallow: /forbidden\n\nUser-agent: other\nAllow: /\n",
    )
    .await;
    serve(&server, "/page", html(ARTICLE)).await;
    serve(
        &server,
        "/hop",
        ResponseTemplate::new(302).insert_header("location", "/page"),
    )
    .await;
    serve(&server, "/missing", ResponseTemplate::new(404)).await;
    serve(&server, "/broken", ResponseTemplate::new(500)).await;
    serve(
        &server,
        "/big",
        html(&format!("<p>{}</p>", "x".repeat(4096))),
    )
    .await;
    serve(&server, "/binary", typed(b"\x89PNG\r\n\x1a\n", "image/png")).await;
    serve(
        &server,
        "/encoded",
        html(ARTICLE).insert_header("content-encoding", "snappy"),
    )
    .await;
    serve(
        &server,
        "/empty",
        html("<html><body><nav>only navigation</nav></body></html>"),
    )
    .await;
    serve(
        &server,
        "/slow",
        html(ARTICLE).set_delay(Duration::from_secs(120)),
    )
    .await;
    // A second origin whose robots.txt is unavailable (fail closed by default).
    let down = MockServer::start().await;
    serve(&down, "/robots.txt", ResponseTemplate::new(503)).await;

    let tool = Config::new(&[port, down.address().port()])
        .top("max_redirects = 0")
        .top("max_download_bytes = 1024")
        .tool();
    let slow_tool = config(&server).top("timeout_seconds = 1").tool();

    // Arguments for a literal URL, and for a path on `server`.
    let raw = |text: &str| json!({ "url": text });
    let url = |path: &str| url_args(&server, path);
    let internal = format!("http://internal.test:{port}/");
    let nowhere = format!("http://nowhere.test:{port}/");
    let down_page = format!("http://other.test:{}/page", down.address().port());
    let forced = json!({ "url": site(&server, "/page"), "force_browser": true });
    // One row a case, in the order they run.
    #[rustfmt::skip]
    let cases: Vec<ErrorCase> = vec![
        case("whitespace url", ErrorCode::BadArgs, &tool, raw("  ")),
        case("unparsable url", ErrorCode::InvalidUrl, &tool, raw("http://")),
        case("ftp scheme", ErrorCode::InvalidScheme, &tool, raw("ftp://site.test/")),
        case("hex IPv4 host", ErrorCode::InvalidHost, &tool, raw("http://0x7f000001/")),
        case("port not allowed", ErrorCode::PortBlocked, &tool, raw(&blocked)),
        case("name resolving to 10/8", ErrorCode::SsrfBlocked, &tool, raw(&internal)),
        case("unknown name", ErrorCode::DnsFailed, &tool, raw(&nowhere)),
        case("robots disallow", ErrorCode::RobotsDisallowed, &tool, url("/forbidden")),
        case("robots 503, fail closed", ErrorCode::RobotsUnavailable, &tool, raw(&down_page)),
        case("redirect with max_redirects = 0", ErrorCode::RedirectLimit, &tool, url("/hop")),
        case("stalled response", ErrorCode::Timeout, &slow_tool, url("/slow")),
        case("unknown content-encoding", ErrorCode::Network, &tool, url("/encoded")),
        case("body over max_download_bytes", ErrorCode::ResponseTooLarge, &tool, url("/big")),
        case("image/png", ErrorCode::UnsupportedContentType, &tool, url("/binary")),
        case("404", ErrorCode::Http4xx, &tool, url("/missing")),
        case("500", ErrorCode::Http5xx, &tool, url("/broken")),
        case("force_browser, browser disabled", ErrorCode::BrowserUnavailable, &tool, forced),
        case("boilerplate only", ErrorCode::ExtractionFailed, &tool, url("/empty")),
        ("output budget of 64 bytes", ErrorCode::Internal, &tool, url("/page"), 64),
    ];
    let mut out = Vec::new();
    for (label, code, tool, args, budget) in cases {
        let mut ctx = ToolCtx::new(budget, 1 << 20);
        let result = run_tool(tool, args, &mut ctx).await;
        out.push((label, code, result));
    }
    out
}

#[tokio::test]
async fn t_wf_err_01_every_error_is_a_json_envelope() {
    let mut results: Vec<(&str, ToolResult)> = every_error_path()
        .await
        .into_iter()
        .map(|(label, _, result)| (label, result))
        .collect();
    // Schema violations reach the model as the same envelope (FR-ERR-JSON-02).
    let tool = Config::new(&[80]).tool();
    for (label, args) in [
        (
            "unknown property",
            json!({ "url": "https://example.com/", "extra": 1 }),
        ),
        ("missing url", json!({})),
        ("url not a string", json!({ "url": 5 })),
        ("not an object", json!(["https://example.com/"])),
        (
            "block_resources",
            json!({ "url": "https://example.com/", "block_resources": [] }),
        ),
    ] {
        let mut ctx = ToolCtx::new(1 << 20, 1 << 20);
        results.push((label, run_tool(&tool, args, &mut ctx).await));
    }
    for (label, result) in results {
        assert!(result.is_error, "{label}: {}", result.content);
        let ordered = Ordered::parse(&result.content);
        assert_eq!(
            ordered.keys(),
            ["code", "message", "retryable", "details"],
            "{label}: {}",
            result.content
        );
        let envelope: Value = serde_json::from_str(&result.content).unwrap();
        let code = envelope["code"].as_str().unwrap();
        assert!(
            ErrorCode::ALL.iter().any(|c| c.as_str() == code),
            "{label}: unknown code {code}"
        );
        assert!(!envelope["message"].as_str().unwrap().is_empty(), "{label}");
        assert!(envelope["retryable"].is_boolean(), "{label}");
        assert!(envelope["details"].is_object(), "{label}");
        assert!(!result.content.contains('\n'), "{label}: compact");
    }
}

#[tokio::test]
async fn t_wf_err_02_every_registry_code_is_produced() {
    let mut produced = BTreeSet::new();
    for (label, expected, result) in every_error_path().await {
        assert!(result.is_error, "{label}: {}", result.content);
        let envelope: Value = serde_json::from_str(&result.content).unwrap();
        assert_eq!(
            envelope["code"],
            expected.as_str(),
            "{label}: {}",
            result.content
        );
        let retryable = if expected == ErrorCode::Internal {
            false // tool_output_limit (FR-WF-OUT-02)
        } else {
            expected.default_retryable()
        };
        assert_eq!(envelope["retryable"], retryable, "{label}");
        produced.insert(expected);
    }
    let missing: BTreeSet<ErrorCode> = ErrorCode::ALL
        .into_iter()
        .filter(|c| !produced.contains(c))
        .collect();
    let excused: BTreeSet<ErrorCode> = NOT_PRODUCIBLE.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        missing, excused,
        "codes without a tested path must be exactly the excused ones: {NOT_PRODUCIBLE:?}"
    );
}

#[tokio::test]
async fn t_wf_ssrf_pipeline_blocked_ranges_stay_blocked_with_loopback_open() {
    let server = article_server("/").await;
    let port = server.address().port();
    let tool = config(&server).tool();
    for (host, ip, toggle) in [
        ("internal.test", "10.0.0.5", "block_private_ips"),
        ("metadata.test", "169.254.169.254", "block_link_local"),
        ("mapped.test", "::ffff:10.0.0.1", "block_private_ips"),
    ] {
        let error = fetch_err(&tool, json!({ "url": format!("http://{host}:{port}/") })).await;
        assert_code(&error, ErrorCode::SsrfBlocked);
        assert_eq!(error.details_json()["blocked_ip"], ip, "{host}");
        assert_eq!(error.details_json()["toggle"], toggle, "{host}");
    }
    // Literal addresses are refused before any connection too.
    let error = fetch_err(&tool, json!({ "url": format!("http://10.1.2.3:{port}/") })).await;
    assert_code(&error, ErrorCode::SsrfBlocked);
    assert!(server.received_requests().await.unwrap().is_empty());
    // And loopback itself works, which is what every other test relies on.
    let ok = fetch_ok(&tool, json!({ "url": format!("http://127.0.0.1:{port}/") })).await;
    assert_eq!(ok["rendering_method"], "http");
}

/// A port that nothing listens on, for completeness of the network path: a refused
/// connection to robots.txt is "unavailable" (SRD-READINGS 13), not `network`.
#[tokio::test]
async fn srd_readings_13_refused_robots_connection_is_robots_unavailable() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let tool = Config::new(&[port]).tool();
    let error = fetch_err(
        &tool,
        json!({ "url": format!("http://site.test:{port}/page") }),
    )
    .await;
    assert_code(&error, ErrorCode::RobotsUnavailable);
    let open = Config::new(&[port]).section(FAIL_OPEN).tool();
    let error = fetch_err(
        &open,
        json!({ "url": format!("http://site.test:{port}/page") }),
    )
    .await;
    assert_code(&error, ErrorCode::Network);
}

/// IT-WF-HTTP-05 over a real server: an ISO-8859-1 page (declared in the header)
/// arrives as correct UTF-8, with no `charset_fallback` note.
#[tokio::test]
async fn it_wf_http_05_pipeline_latin1_page_decoded_to_utf8() {
    let server = MockServer::start().await;
    let mut body = b"<html><head><title>Caf\xe9</title></head><body><main><p>Cr\xe8me br\xfbl\xe9e \xe0 \xa3 5, na\xefve r\xe9sum\xe9.</p></main></body></html>".to_vec();
    body.shrink_to_fit();
    serve(
        &server,
        "/latin1",
        typed(&body, "text/html; charset=ISO-8859-1"),
    )
    .await;
    let tool = config(&server).tool();
    let response = fetch_ok(&tool, url_args(&server, "/latin1")).await;
    assert_eq!(response["title"], "Café");
    assert_eq!(all_text(&response), "Crème brûlée à £ 5, naïve résumé.");
    assert_eq!(response["notes"], json!([]));
}

/// IT-WF-HTTP-06 over a real server: the header charset wins over a conflicting
/// `<meta charset>`; without a header charset, the meta tag is used.
#[tokio::test]
async fn it_wf_http_06_pipeline_header_charset_beats_meta() {
    let server = MockServer::start().await;
    // UTF-8 bytes for "é" (C3 A9) read as windows-1252 give "Ã©".
    let page = "<html><head><meta charset=\"windows-1252\"><title>x</title></head><body><main><p>caf\u{e9}</p></main></body></html>";
    serve(
        &server,
        "/header-wins",
        typed(page.as_bytes(), "text/html; charset=utf-8"),
    )
    .await;
    serve(&server, "/meta-only", typed(page.as_bytes(), "text/html")).await;
    let tool = config(&server).tool();
    let header = fetch_ok(&tool, url_args(&server, "/header-wins")).await;
    assert_eq!(all_text(&header), "caf\u{e9}");
    assert_eq!(header["notes"], json!([]));
    let meta = fetch_ok(&tool, url_args(&server, "/meta-only")).await;
    assert_eq!(all_text(&meta), "caf\u{c3}\u{a9}");
    assert_eq!(meta["notes"], json!([]));
}
