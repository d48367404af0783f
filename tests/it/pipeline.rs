//! The whole `web_fetch` pipeline (SRD Appendix B) end to end against wiremock on
//! loopback: validation, cache, SSRF, robots.txt, HTTP fetch, charset, extraction,
//! the SPA fallback seam, chunking, output fitting and cache write, through
//! `WebFetchTool::call` and the `ToolExecutor` seam a host uses.
//!
//! DNS is the stub resolver (T-WF-INFRA-01); loopback is unblocked through the
//! visible gate while 10/8, 169.254/16 and `::ffff:10.0.0.1` stay blocked; caches live
//! in tempdirs (T-WF-INFRA-03).

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use time::OffsetDateTime;
use webfetch::CanonicalUrl;
use webfetch::ExtractionMode;
use webfetch::Profile;
use webfetch::RenderingMethod;
use webfetch::Timestamp;
use webfetch::WebFetchTool;
use webfetch::internals::cache::{CacheKey, DiskCache, Fresh, Variant};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::testing::run_tool;
use webfetch::{ErrorCode, FetchError};
use webfetch::{ToolCtx, ToolError, ToolExecutor, ToolResult};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, Ordered, chunk_texts, hits, html, json_files, robots, serve, site};

mod errors;
mod extensions;
mod rendering;
mod robots_and_cache;

/// No byte budget (the CLI's default).
const UNLIMITED: usize = usize::MAX;

/// The config section that lets a robots.txt failure through with a note.
const FAIL_OPEN: &str = "[tools.webfetch.robots]\nfail_open = true";

/// A realistic article: navigation, header, sidebar and footer around the content,
/// relative links, a title and a language.
const ARTICLE: &str = r#"<!DOCTYPE html>
<html lang="en-GB">
<head>
  <meta charset="utf-8">
  <title>Field Notes: Pipelines in Rust</title>
  <link rel="stylesheet" href="/site.css">
  <script>window.analytics = "SCRIPTSENTINEL";</script>
</head>
<body>
  <nav class="site-nav"><a href="/">Home</a> <a href="/about">About NAVSENTINEL</a></nav>
  <header><p>Subscribe to HEADERSENTINEL today</p></header>
  <main>
    <article>
      <h1>Pipelines in Rust</h1>
      <p>A pipeline is a chain of small stages. Read <a href="/docs/guide#install">the guide</a>
         or the <a href="../archive/2024.html">archive</a> first.</p>
      <h2>Stages</h2>
      <p>Each stage does <strong>one job</strong> and hands a value to the next.</p>
      <ul>
        <li>validate the input</li>
        <li>fetch the page</li>
      </ul>
      <p><img src="img/diagram.png" alt="Diagram"></p>
    </article>
  </main>
  <aside class="sidebar">Related: SIDEBARSENTINEL</aside>
  <footer>FOOTERSENTINEL &copy; 2026</footer>
</body>
</html>"#;

/// A long article: `sections` headed sections of several sentences each.
fn long_article(sections: usize) -> String {
    let mut body = String::from("<html><head><title>Long</title></head><body><main>");
    for s in 0..sections {
        body.push_str(&format!("<h2>Section {s}</h2>"));
        for p in 0..3 {
            body.push_str(&format!(
                "<p>Paragraph {p} of section {s} explains one more detail of the topic at \
                 some length, so that every section is worth a good number of tokens and \
                 the document as a whole needs several chunks at the smallest budget.</p>"
            ));
        }
    }
    body.push_str("</main></body></html>");
    body
}

/// A loopback config allowing `server`'s port (no cache, browser disabled).
fn config(server: &MockServer) -> Config {
    Config::new(&[server.address().port()])
}

/// A tool for `server` caching in a new tempdir, returned with it to keep it alive.
fn cached_tool(server: &MockServer) -> (TempDir, WebFetchTool) {
    let dir = tempfile::tempdir().unwrap();
    let tool = config(server).cache(dir.path()).tool();
    (dir, tool)
}

/// A new server answering `GET at` with [`ARTICLE`].
async fn article_server(at: &str) -> MockServer {
    let server = MockServer::start().await;
    serve(&server, at, html(ARTICLE)).await;
    server
}

/// The tool arguments fetching `path` on `server` through `site.test`.
fn url_args(server: &MockServer, path: &str) -> Value {
    json!({ "url": site(server, path) })
}

/// A 200 response carrying `body` as `content_type`.
fn typed(body: &[u8], content_type: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_vec(), content_type)
}

async fn call(tool: &WebFetchTool, args: Value) -> Result<Value, FetchError> {
    let text = tool.call(&args, UNLIMITED).await.map(|built| built.json)?;
    Ok(serde_json::from_str(&text).expect("the response is JSON"))
}

async fn fetch_ok(tool: &WebFetchTool, args: Value) -> Value {
    match call(tool, args).await {
        Ok(value) => value,
        Err(error) => panic!("unexpected error: {}", error.to_json()),
    }
}

async fn fetch_err(tool: &WebFetchTool, args: Value) -> FetchError {
    match call(tool, args).await {
        Ok(value) => panic!("unexpected success: {value}"),
        Err(error) => error,
    }
}

fn notes(response: &Value) -> Vec<&str> {
    response["notes"]
        .as_array()
        .expect("notes is an array")
        .iter()
        .map(|n| n.as_str().expect("note is a string"))
        .collect()
}

fn all_text(response: &Value) -> String {
    chunk_texts(response).join("\n")
}

fn assert_code(error: &FetchError, code: ErrorCode) {
    assert_eq!(error.code(), code, "unexpected error: {}", error.to_json());
}

// ---------------------------------------------------------------- IT-WF-HTTP-01

#[tokio::test]
async fn it_wf_http_01_fetch_and_extract_markdown() {
    let server = article_server("/Blog/Post").await;
    let port = server.address().port();
    let tool = config(&server).tool();
    // Mixed-case scheme and host, a default-less port, a query and a fragment: the
    // response echoes it verbatim and reports the canonical form.
    let requested = format!("HTTP://Site.TEST:{port}/Blog/Post?id=7#Section-2");

    let before = OffsetDateTime::now_utc().unix_timestamp();
    let text = tool
        .call(&json!({ "url": requested }), UNLIMITED)
        .await
        .map(|built| built.json)
        .unwrap_or_else(|e| panic!("{}", e.to_json()));
    let after = OffsetDateTime::now_utc().unix_timestamp();

    // FR-WF-OUT-01a: compact, fields in the canonical order, chunks likewise.
    assert!(
        !text.contains('\n'),
        "one line: newlines appear only escaped"
    );
    let ordered = Ordered::parse(&text);
    assert_eq!(
        ordered.keys(),
        [
            "requested_url",
            "final_url",
            "fetched_at",
            "title",
            "language",
            "chunks",
            "rendering_method",
            "truncated",
            "notes"
        ]
    );
    for chunk in ordered.get("chunks").unwrap().items() {
        assert_eq!(chunk.keys(), ["heading", "text", "token_count"]);
    }
    assert_eq!(
        serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap())
            .unwrap()
            .len(),
        text.len(),
        "no whitespace beyond the required separators"
    );

    let response: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(response["requested_url"], requested.as_str());
    assert_eq!(
        response["final_url"],
        format!("http://site.test:{port}/Blog/Post?id=7")
    );
    // FR-WF-RESP-TIME-01: second precision, `Z`; the completion time of this call.
    let fetched_at = response["fetched_at"].as_str().unwrap();
    assert_eq!(
        fetched_at.len(),
        "2026-01-10T12:00:00Z".len(),
        "{fetched_at}"
    );
    let shape: Vec<bool> = fetched_at.chars().map(|c| c.is_ascii_digit()).collect();
    let digits_at = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    for (i, is_digit) in shape.iter().enumerate() {
        assert_eq!(*is_digit, digits_at.contains(&i), "{fetched_at}");
    }
    assert_eq!(&fetched_at[4..5], "-");
    assert_eq!(&fetched_at[10..11], "T");
    assert!(fetched_at.ends_with('Z'));
    let at = Timestamp::parse(fetched_at).unwrap().unix_seconds();
    assert!(before <= at && at <= after, "{fetched_at}");

    assert_eq!(response["title"], "Field Notes: Pipelines in Rust");
    assert_eq!(response["language"], "en-GB");
    assert_eq!(response["rendering_method"], "http");
    assert_eq!(response["truncated"], false);
    assert!(response.get("truncation_reason").is_none());
    assert_eq!(response["notes"], json!([]));

    let chunks = response["chunks"].as_array().unwrap();
    assert!(!chunks.is_empty());
    assert_eq!(chunks[0]["heading"], "Pipelines in Rust");
    assert!(
        chunks[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Pipelines in Rust\n")
    );
    for chunk in chunks {
        let count = chunk["token_count"].as_u64().unwrap();
        assert!(count > 0 && count <= 600, "{chunk}");
    }
    let markdown = all_text(&response);
    // FR-WF-13d: links and images absolute against the final URL; fragments kept.
    assert!(
        markdown.contains(&format!(
            "[the guide](http://site.test:{port}/docs/guide#install)"
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!(
            "[archive](http://site.test:{port}/archive/2024.html)"
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!(
            "![Diagram](http://site.test:{port}/Blog/img/diagram.png)"
        )),
        "{markdown}"
    );
    assert!(markdown.contains("## Stages"), "{markdown}");
    assert!(markdown.contains("**one job**"), "{markdown}");
    assert!(markdown.contains("- validate the input"), "{markdown}");
    // FR-WF-13: boilerplate and scripts never reach the model.
    for sentinel in [
        "NAVSENTINEL",
        "HEADERSENTINEL",
        "SIDEBARSENTINEL",
        "FOOTERSENTINEL",
        "SCRIPTSENTINEL",
    ] {
        assert!(!text.contains(sentinel), "{sentinel} leaked: {markdown}");
    }
}

#[tokio::test]
async fn it_wf_http_01_small_chunk_budget_gives_headed_chunks_in_order() {
    let server = MockServer::start().await;
    serve(&server, "/long", html(&long_article(8))).await;
    let tool = config(&server).tool();
    let response = fetch_ok(
        &tool,
        json!({ "url": site(&server, "/long"), "max_chunk_tokens": 128 }),
    )
    .await;
    let chunks = response["chunks"].as_array().unwrap();
    assert!(chunks.len() >= 8, "{}", chunks.len());
    let mut last_section = -1i64;
    for chunk in chunks {
        assert!(chunk["token_count"].as_u64().unwrap() <= 128, "{chunk}");
        let heading = chunk["heading"].as_str().unwrap();
        let section: i64 = heading.strip_prefix("Section ").unwrap().parse().unwrap();
        assert!(section >= last_section, "headings in document order");
        last_section = section;
    }
    assert_eq!(last_section, 7);
}

// ---------------------------------------------------------------- output limits

#[tokio::test]
async fn fr_wf_03a_execute_fits_the_smaller_budget() {
    let server = MockServer::start().await;
    serve(&server, "/long", html(&long_article(8))).await;
    let tool = config(&server).tool();
    let args = json!({ "url": site(&server, "/long"), "max_chunk_tokens": 128 });

    // Unconstrained, the page is well over 3000 bytes.
    let mut roomy = ToolCtx::new(1 << 20, 1 << 20);
    let full = tool.execute(args.clone(), &mut roomy).await.unwrap();
    assert!(full.len() > 3000, "{}", full.len());
    assert!(!roomy.allow_truncation);
    let full: Value = serde_json::from_str(&full).unwrap();
    assert_eq!(full["truncated"], false);

    for (max_output, available) in [(1 << 20, 3000), (3000, 1 << 20)] {
        let mut ctx = ToolCtx::new(max_output, available);
        assert!(ctx.allow_truncation);
        let text = tool.execute(args.clone(), &mut ctx).await.unwrap();
        assert!(
            !ctx.allow_truncation,
            "FR-WF-03a: the host must not cut the JSON"
        );
        assert!(text.len() <= 3000, "{}", text.len());
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(response["truncated"], true);
        assert_eq!(response["truncation_reason"], "tool_output_limit");
        assert_eq!(notes(&response), ["tool_output_limit"]);
        let kept = response["chunks"].as_array().unwrap();
        let all = full["chunks"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < all.len());
        // Leading chunks are kept whole (FR-WF-OUT-01 step 3).
        assert_eq!(kept[..], all[..kept.len()]);
        let order = Ordered::parse(&text);
        assert_eq!(
            order.keys(),
            [
                "requested_url",
                "final_url",
                "fetched_at",
                "title",
                "chunks",
                "rendering_method",
                "truncated",
                "truncation_reason",
                "notes"
            ]
        );
    }
}

#[tokio::test]
async fn fr_wf_out_02_budget_too_small_for_an_empty_chunk() {
    let server = article_server("/page").await;
    let tool = config(&server).tool();
    let args = url_args(&server, "/page");

    let mut ctx = ToolCtx::new(1 << 20, 120);
    match tool.execute(args.clone(), &mut ctx).await {
        Err(ToolError::ExecutionFailed { tool, message }) => {
            assert_eq!(tool, "web_fetch");
            let envelope: Value = serde_json::from_str(&message).unwrap();
            assert_eq!(envelope["code"], "internal");
        }
        other => panic!("expected the tool_output_limit error, got {other:?}"),
    }
    assert!(!ctx.allow_truncation);

    let mut ctx = ToolCtx::new(120, 1 << 20);
    let result = run_tool(&tool, args, &mut ctx).await;
    assert!(result.is_error);
    let envelope: Value = serde_json::from_str(&result.content).unwrap();
    assert_eq!(
        envelope,
        json!({
            "code": "internal",
            "message": "tool_output_limit",
            "retryable": false,
            "details": { "error": "tool_output_limit", "effective_max_bytes": 120 }
        })
    );
}
