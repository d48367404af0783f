//! Browser mode reads a page as HTTP mode does: the top document is
//! handed to Chromium with the charset HTTP mode's rules choose (FR-WF-10i,
//! CHARSET-01..04, SRD-READINGS 31), so both modes give the same text and the same
//! `charset_fallback` note. Runs where `FORGE_TEST_CHROMIUM_PATH` names a Chromium.

use serde_json::{Value, json};
use webfetch::WebFetchTool;
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, browser_section, chromium, chunk_texts, serve, site};

/// A tool for `server` with the browser at `FORGE_TEST_CHROMIUM_PATH`, or `None`
/// (skipped, with a message) when it is not set.
fn browser_tool(server: &MockServer) -> Option<WebFetchTool> {
    let chromium = chromium()?;
    Some(
        Config::new(&[server.address().port()])
            .section(&browser_section(&chromium, ""))
            .tool(),
    )
}

/// The page at `path` over HTTP and with `force_browser`, uncached.
async fn both_modes(tool: &WebFetchTool, server: &MockServer, path: &str) -> [Value; 2] {
    let mut out = Vec::new();
    for force_browser in [false, true] {
        let args =
            json!({ "url": site(server, path), "force_browser": force_browser, "no_cache": true });
        let json = tool
            .call(&args, usize::MAX)
            .await
            .map(|built| built.json)
            .unwrap_or_else(|error| {
                panic!("{path} (browser: {force_browser}): {}", error.to_json())
            });
        out.push(serde_json::from_str(&json).unwrap());
    }
    out.try_into().unwrap()
}

fn text(response: &Value) -> String {
    chunk_texts(response).concat()
}

/// Serves `body` as `text/html` with no charset parameter.
async fn serve_undeclared(server: &MockServer, at: &str, body: Vec<u8>) {
    serve(
        server,
        at,
        ResponseTemplate::new(200).set_body_raw(body, "text/html"),
    )
    .await;
}

#[tokio::test]
async fn srd_readings_31_undeclared_utf8_reads_the_same_in_both_modes() {
    let server = MockServer::start().await;
    let Some(tool) = browser_tool(&server) else {
        return;
    };
    let page = "<html><head><title>Offer</title></head><body><article><h1>Offer</h1>\
        <p>Play…and Pay: “quoted” text, naïve café, 東京.</p></article></body></html>";
    serve_undeclared(&server, "/utf8", page.as_bytes().to_vec()).await;

    let [http, browser] = both_modes(&tool, &server, "/utf8").await;
    assert_eq!(browser["rendering_method"], "browser");
    assert!(text(&http).contains("Play…and Pay"), "{http}");
    assert_eq!(text(&browser), text(&http));
    assert_eq!(http["notes"], json!(["charset_fallback"]));
    assert_eq!(browser["notes"], http["notes"]);
}

#[tokio::test]
async fn srd_readings_31_meta_windows_1252_reads_the_same_in_both_modes() {
    let server = MockServer::start().await;
    let Some(tool) = browser_tool(&server) else {
        return;
    };
    // 0x85 is "…" and 0xE9 "é" in windows-1252; as UTF-8 they are invalid.
    let mut page = b"<html><head><meta charset=\"windows-1252\"><title>Offer</title></head>\
        <body><article><h1>Offer</h1><p>Play"
        .to_vec();
    page.extend_from_slice(b"\x85and Pay at the caf\xe9.</p></article></body></html>");
    serve_undeclared(&server, "/cp1252", page).await;

    let [http, browser] = both_modes(&tool, &server, "/cp1252").await;
    assert!(text(&http).contains("Play…and Pay at the café."), "{http}");
    assert_eq!(text(&browser), text(&http));
    assert_eq!(http["notes"], json!([]));
    assert_eq!(browser["notes"], json!([]));
}

#[tokio::test]
async fn srd_readings_31_a_real_page_without_a_charset_reads_the_same_in_both_modes() {
    let server = MockServer::start().await;
    let Some(tool) = browser_tool(&server) else {
        return;
    };
    // A real-world page shape with its charset declaration removed.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/article/docs-reference.html"
    );
    let page = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("<meta charset=\"utf-8\">", "")
        .replace("<meta charset=utf-8>", "");
    assert!(!page.to_ascii_lowercase().contains("charset"));
    serve_undeclared(&server, "/doc", page.into_bytes()).await;

    let [http, browser] = both_modes(&tool, &server, "/doc").await;
    assert_eq!(text(&browser), text(&http));
    assert_eq!(http["notes"], json!(["charset_fallback"]));
    assert_eq!(browser["notes"], http["notes"]);
}
