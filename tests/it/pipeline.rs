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
use webfetch::ArgsSchema;
use webfetch::CanonicalUrl;
use webfetch::ExtractionMode;
use webfetch::RenderingMethod;
use webfetch::Timestamp;
use webfetch::WebFetchTool;
use webfetch::internals::cache::{CacheKey, DiskCache, Fresh, Variant};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::testing::run_tool;
use webfetch::{ErrorCode, FetchError};
use webfetch::{ToolCtx, ToolError, ToolExecutor, ToolResult};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, Ordered, hits, html, json_files, robots, serve, site};

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
    response["chunks"]
        .as_array()
        .expect("chunks is an array")
        .iter()
        .map(|c| c["text"].as_str().expect("text is a string"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_code(error: &FetchError, code: ErrorCode) {
    assert_eq!(error.code, code, "unexpected error: {}", error.to_json());
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

// ---------------------------------------------------------------- robots.txt

#[tokio::test]
async fn t_wf_rob_01_pipeline_disallowed_path_is_never_fetched() {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nDisallow: /private/\n").await;
    serve(&server, "/private/page", html(ARTICLE)).await;
    let port = server.address().port();
    let tool = config(&server).tool();
    let error = fetch_err(&tool, url_args(&server, "/private/page?token=abc")).await;
    assert_code(&error, ErrorCode::RobotsDisallowed);
    assert!(!error.retryable);
    assert_eq!(error.details_json()["path"], "/private/page");
    assert_eq!(
        error.details_json()["origin"],
        format!("http://site.test:{port}")
    );
    assert!(
        !error.to_json().contains("token=abc"),
        "the query is not echoed"
    );
    assert_eq!(hits(&server, "/private/page").await, 0);
    assert_eq!(hits(&server, "/robots.txt").await, 1);
}

#[tokio::test]
async fn fr_wf_07e_redirect_to_disallowed_path_on_another_origin() {
    let first = MockServer::start().await;
    let second = MockServer::start().await;
    let target = format!("http://other.test:{}/private/x", second.address().port());
    serve(
        &first,
        "/start",
        ResponseTemplate::new(302).insert_header("location", target.as_str()),
    )
    .await;
    robots(&second, "User-agent: *\nDisallow: /private/\n").await;
    serve(&second, "/private/x", html(ARTICLE)).await;
    let tool = Config::new(&[first.address().port(), second.address().port()]).tool();

    let error = fetch_err(&tool, json!({ "url": site(&first, "/start") })).await;
    assert_code(&error, ErrorCode::RobotsDisallowed);
    assert_eq!(
        error.details_json()["origin"],
        format!("http://other.test:{}", second.address().port())
    );
    assert_eq!(error.details_json()["path"], "/private/x");
    // The first origin's robots.txt (404: allow-all) and the hop were requested;
    // the second origin got its robots.txt request and nothing else.
    assert_eq!(hits(&first, "/robots.txt").await, 1);
    assert_eq!(hits(&first, "/start").await, 1);
    assert_eq!(hits(&second, "/robots.txt").await, 1);
    assert_eq!(hits(&second, "/private/x").await, 0);
}

#[tokio::test]
async fn t_wf_rob_06_robots_404_allows_everything() {
    let server = MockServer::start().await;
    serve(&server, "/robots.txt", ResponseTemplate::new(404)).await;
    serve(&server, "/page", html(ARTICLE)).await;
    let tool = config(&server).tool();
    let response = fetch_ok(&tool, url_args(&server, "/page")).await;
    assert_eq!(response["notes"], json!([]));
    assert_eq!(hits(&server, "/robots.txt").await, 1);
    assert_eq!(hits(&server, "/page").await, 1);
}

#[tokio::test]
async fn fr_wf_09a_robots_503_fail_open_succeeds_with_note() {
    let server = MockServer::start().await;
    serve(&server, "/robots.txt", ResponseTemplate::new(503)).await;
    serve(&server, "/page", html(ARTICLE)).await;
    let port = server.address().port();
    let url = site(&server, "/page");

    let open = config(&server).section(FAIL_OPEN).tool();
    let response = fetch_ok(&open, json!({ "url": url })).await;
    assert_eq!(notes(&response), ["robots_unavailable_fail_open"]);
    assert!(!response["chunks"].as_array().unwrap().is_empty());

    // The default (fail closed) refuses the same page without fetching it.
    let closed = config(&server).tool();
    let before = hits(&server, "/page").await;
    let error = fetch_err(&closed, json!({ "url": url })).await;
    assert_code(&error, ErrorCode::RobotsUnavailable);
    assert!(error.retryable);
    assert_eq!(
        error.details_json()["origin"],
        format!("http://site.test:{port}")
    );
    assert_eq!(hits(&server, "/page").await, before);
}

#[tokio::test]
async fn fr_wf_08h_no_cache_does_not_bypass_robots() {
    let server = article_server("/page").await;
    let cache = tempfile::tempdir().unwrap();
    let config = config(&server).cache(cache.path());
    let url = site(&server, "/page");
    // Allowed today (robots.txt 404): fetched and cached.
    fetch_ok(&config.tool(), json!({ "url": url })).await;
    assert_eq!(json_files(cache.path()).len(), 1);

    // The site now forbids the page. A new tool (a new process: an empty robots
    // origin cache) asked to skip the response cache must still obey robots.txt.
    server.reset().await;
    robots(&server, "User-agent: *\nDisallow: /page\n").await;
    serve(&server, "/page", html(ARTICLE)).await;
    let tool = config.tool();
    let error = fetch_err(&tool, json!({ "url": url, "no_cache": true })).await;
    assert_code(&error, ErrorCode::RobotsDisallowed);
    assert_eq!(hits(&server, "/robots.txt").await, 1);
    assert_eq!(hits(&server, "/page").await, 0);

    // Without no_cache, Appendix B serves the cache before SSRF and robots.
    let response = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(notes(&response), ["cache_hit"]);
    assert_eq!(hits(&server, "/page").await, 0);
}

// ---------------------------------------------------------------- cache

#[tokio::test]
async fn t_wf_cch_01_pipeline_hit_keeps_fetched_at() {
    let server = article_server("/page").await;
    let (_cache, tool) = cached_tool(&server);
    let url = site(&server, "/page");

    let first = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(first["notes"], json!([]));
    assert_eq!(hits(&server, "/page").await, 1);
    let second = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(notes(&second), ["cache_hit"]);
    assert_eq!(second["fetched_at"], first["fetched_at"]);
    assert_eq!(second["chunks"], first["chunks"]);
    assert_eq!(second["title"], first["title"]);
    assert_eq!(second["final_url"], first["final_url"]);
    assert_eq!(
        hits(&server, "/page").await,
        1,
        "the server is not contacted"
    );
}

#[tokio::test]
async fn t_wf_cch_01_pipeline_hit_reports_the_stored_fetch_time() {
    // An entry fetched two days ago: a hit must report that time, not now.
    let server = article_server("/old").await;
    let cache = tempfile::tempdir().unwrap();
    let config = config(&server).cache(cache.path());
    let url = site(&server, "/old");
    let two_days_ago = OffsetDateTime::now_utc() - Duration::from_secs(2 * 86_400);
    let stored = DiskCache::open(&config.settings().cache).unwrap();
    let document = ExtractedDocument {
        markdown: "# Stored\n\nFrom the cache.\n".to_owned(),
        title: Some("Stored".to_owned()),
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    };
    stored
        .put(Fresh::new(
            &CanonicalUrl::parse(&url).unwrap(),
            RenderingMethod::Http,
            &document,
            two_days_ago,
            two_days_ago,
        ))
        .unwrap();

    let response = fetch_ok(&config.tool(), json!({ "url": url })).await;
    assert_eq!(notes(&response), ["cache_hit"]);
    let at = Timestamp::parse(response["fetched_at"].as_str().unwrap()).unwrap();
    assert_eq!(at.unix_seconds(), two_days_ago.unix_timestamp());
    assert_eq!(response["title"], "Stored");
    assert!(response.get("language").is_none());
    assert_eq!(all_text(&response), "# Stored\n\nFrom the cache.");
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "no robots.txt, no page"
    );
}

#[tokio::test]
async fn t_wf_cch_02_pipeline_no_cache_skips_read_still_writes() {
    let server = MockServer::start().await;
    serve(&server, "/page", html("<main><p>version one</p></main>")).await;
    let (cache, tool) = cached_tool(&server);
    let url = site(&server, "/page");

    let first = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(all_text(&first), "version one");

    server.reset().await;
    serve(&server, "/page", html("<main><p>version two</p></main>")).await;
    let second = fetch_ok(&tool, json!({ "url": url, "no_cache": true })).await;
    assert_eq!(all_text(&second), "version two");
    assert_eq!(second["notes"], json!([]));
    assert_eq!(
        hits(&server, "/page").await,
        1,
        "no_cache contacts the server"
    );

    // The no_cache fetch overwrote the entry: the next plain call hits it.
    let third = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(notes(&third), ["cache_hit"]);
    assert_eq!(all_text(&third), "version two");
    assert_eq!(third["fetched_at"], second["fetched_at"]);
    assert_eq!(hits(&server, "/page").await, 1);
    assert_eq!(json_files(cache.path()).len(), 1);
}

#[tokio::test]
async fn t_wf_cch_07_pipeline_rechunks_one_entry() {
    let server = MockServer::start().await;
    serve(&server, "/long", html(&long_article(8))).await;
    let (cache, tool) = cached_tool(&server);
    let url = site(&server, "/long");

    let wide = fetch_ok(&tool, json!({ "url": url, "max_chunk_tokens": 2048 })).await;
    let narrow = fetch_ok(&tool, json!({ "url": url, "max_chunk_tokens": 128 })).await;
    assert_eq!(notes(&narrow), ["cache_hit"]);
    let wide_chunks = wide["chunks"].as_array().unwrap().len();
    let narrow_chunks = narrow["chunks"].as_array().unwrap().len();
    assert!(
        narrow_chunks > wide_chunks,
        "{narrow_chunks} vs {wide_chunks}"
    );
    for chunk in narrow["chunks"].as_array().unwrap() {
        assert!(chunk["token_count"].as_u64().unwrap() <= 128);
    }
    assert_eq!(hits(&server, "/long").await, 1);
    assert_eq!(json_files(cache.path()).len(), 1, "one entry for both");
}

#[tokio::test]
async fn srd_readings_21_redirect_is_cached_under_the_final_url() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/old",
        ResponseTemplate::new(301).insert_header("location", "/new"),
    )
    .await;
    serve(&server, "/new", html(ARTICLE)).await;
    let (cache, tool) = cached_tool(&server);

    let response = fetch_ok(&tool, url_args(&server, "/old")).await;
    assert_eq!(response["requested_url"], site(&server, "/old"));
    assert_eq!(response["final_url"], site(&server, "/new"));
    let final_url = CanonicalUrl::parse(&site(&server, "/new")).unwrap();
    let expected = CacheKey::new(&final_url, RenderingMethod::Http, Variant::default())
        .entry_path(cache.path());
    assert_eq!(json_files(cache.path()), [expected]);

    // The final URL hits; the redirecting URL misses and is fetched again.
    let direct = fetch_ok(&tool, url_args(&server, "/new")).await;
    assert_eq!(notes(&direct), ["cache_hit"]);
    assert_eq!(hits(&server, "/new").await, 1);
    let again = fetch_ok(&tool, url_args(&server, "/old")).await;
    assert_eq!(again["notes"], json!([]));
    assert_eq!(hits(&server, "/old").await, 2);
}

#[tokio::test]
async fn fr_wf_cch_enable_01_disabled_cache_has_no_cache_notes() {
    let server = article_server("/page").await;
    let tool = config(&server).tool(); // cache_dir = ""
    assert_eq!(tool.settings().cache.dir, None);
    let url = site(&server, "/page");
    for no_cache in [false, false, true] {
        let response = fetch_ok(&tool, json!({ "url": url, "no_cache": no_cache })).await;
        assert_eq!(response["notes"], json!([]));
    }
    assert_eq!(hits(&server, "/page").await, 3);
}

#[tokio::test]
async fn fr_wf_19a_cache_write_failure_is_a_note_not_an_error() {
    let server = article_server("/page").await;
    let (cache, tool) = cached_tool(&server);
    let url = site(&server, "/page");
    // Occupy the entry's shard directory name with a file: works as root too, where
    // a read-only directory would not stop the write.
    let key = CacheKey::new(
        &CanonicalUrl::parse(&url).unwrap(),
        RenderingMethod::Http,
        Variant::default(),
    );
    std::fs::write(cache.path().join(key.shard()), "not a directory").unwrap();

    let response = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(notes(&response), ["cache_write_failed"]);
    assert!(!response["chunks"].as_array().unwrap().is_empty());
    assert!(json_files(cache.path()).is_empty());
    // Nothing was cached: the next call fetches again.
    let again = fetch_ok(&tool, json!({ "url": url })).await;
    assert_eq!(notes(&again), ["cache_write_failed"]);
    assert_eq!(hits(&server, "/page").await, 2);
}

#[tokio::test]
async fn t_wf_cch_13_pipeline_uncreatable_cache_dir_disables_caching() {
    let server = article_server("/page").await;
    // A cache_dir under a regular file can not be created, even by root.
    let scratch = tempfile::tempdir().unwrap();
    let blocker = scratch.path().join("file");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let tool = config(&server).cache(&blocker.join("cache")).tool();
    let url = site(&server, "/page");
    for _ in 0..2 {
        let response = fetch_ok(&tool, json!({ "url": url })).await;
        // FR-WF-CCH-ENABLE-01: neither cache_hit nor cache_write_failed.
        assert_eq!(response["notes"], json!([]));
    }
    assert_eq!(hits(&server, "/page").await, 2);
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
    assert!(!error.retryable);
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
    assert_eq!(forced.unwrap_err().code, ErrorCode::BrowserUnavailable);
}

/// Issue 14 item 4: an HTTP result cached while the browser was unavailable is
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
    assert!(!error.retryable);
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
    assert!(error.retryable);
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

// ---------------------------------------------------------------- extension: extraction

/// A page on which a scoring (article) extractor finds no main content: a body of
/// two words. Article mode falls back to the SRD extraction and says so with the
/// `article_fallback_srd` note, with today's stub and the real algorithm alike.
const TINY: &str = "<html><head><title>Tiny</title></head><body><p>Two words.</p></body></html>";

/// `response` without `fetched_at`, which may tick between two calls.
fn timeless(mut response: Value) -> Value {
    response
        .as_object_mut()
        .expect("a response object")
        .remove("fetched_at");
    response
}

/// The tool of `config` that accepts the extension properties (as MCP and the
/// CLI do).
fn extended(config: &Config) -> WebFetchTool {
    config
        .builder()
        .schema(ArgsSchema::Extended)
        .build()
        .unwrap()
}

#[tokio::test]
async fn ext_extraction_executor_seam_refuses_the_extension_property() {
    let server = article_server("/page").await;
    let tool = config(&server).tool();
    assert_eq!(tool.schema(), ArgsSchema::Srd);
    assert_eq!(tool.input_schema(), ArgsSchema::Srd.input_schema());
    assert!(
        tool.input_schema()["properties"]
            .get("extraction")
            .is_none()
    );
    let args = json!({ "url": site(&server, "/page"), "extraction": "srd" });

    let mut ctx = ToolCtx::new(1 << 20, 1 << 20);
    match tool.execute(args.clone(), &mut ctx).await {
        Err(ToolError::BadArgs { message }) => assert_eq!(
            message,
            "unknown property `extraction` (additionalProperties is false)"
        ),
        other => panic!("expected a schema error, got {other:?}"),
    }
    let result = run_tool(&tool, args.clone(), &mut ctx).await;
    assert!(result.is_error);
    let envelope: Value = serde_json::from_str(&result.content).unwrap();
    assert_eq!(envelope["code"], "bad_args");
    assert_code(&fetch_err(&tool, args).await, ErrorCode::BadArgs);
    assert_eq!(hits(&server, "/page").await, 0);
}

#[tokio::test]
async fn ext_extraction_unused_changes_nothing_and_article_falls_back_with_a_note() {
    let server = MockServer::start().await;
    serve(&server, "/tiny", html(TINY)).await;
    serve(&server, "/article", html(ARTICLE)).await;
    let strict = config(&server).tool();
    let tool = extended(&config(&server));
    assert_eq!(tool.input_schema(), ArgsSchema::Extended.input_schema());

    // No extension used: the extended tool answers exactly as the SRD tool.
    for path in ["/tiny", "/article"] {
        let srd = fetch_ok(&strict, url_args(&server, path)).await;
        let same = fetch_ok(&tool, url_args(&server, path)).await;
        let explicit = fetch_ok(
            &tool,
            json!({ "url": site(&server, path), "extraction": "srd" }),
        )
        .await;
        assert_eq!(timeless(same), timeless(srd.clone()), "{path}");
        assert_eq!(timeless(explicit), timeless(srd), "{path}");
    }

    let srd = fetch_ok(&tool, url_args(&server, "/tiny")).await;
    let article = fetch_ok(
        &tool,
        json!({ "url": site(&server, "/tiny"), "extraction": "article" }),
    )
    .await;
    assert_eq!(notes(&srd), Vec::<&str>::new());
    assert_eq!(notes(&article), ["article_fallback_srd"]);
    // The fallback is the SRD document, and the note does not truncate anything.
    assert_eq!(article["chunks"], srd["chunks"]);
    assert_eq!(article["title"], "Tiny");
    assert_eq!(article["truncated"], false);
}

#[tokio::test]
async fn ext_extraction_config_default_applies_unless_a_call_names_a_mode() {
    let server = MockServer::start().await;
    serve(&server, "/tiny", html(TINY)).await;
    let configured = config(&server).section("[tools.webfetch.extraction]\nmode = \"article\"");
    let tool = extended(&configured);
    let default = fetch_ok(&tool, url_args(&server, "/tiny")).await;
    assert_eq!(notes(&default), ["article_fallback_srd"]);
    let srd = fetch_ok(
        &tool,
        json!({ "url": site(&server, "/tiny"), "extraction": "srd" }),
    )
    .await;
    assert_eq!(notes(&srd), Vec::<&str>::new());
    // The config applies behind the executor seam too, whose schema is unchanged.
    let seam = configured.tool();
    let mut ctx = ToolCtx::new(1 << 20, 1 << 20);
    let text = seam
        .execute(url_args(&server, "/tiny"), &mut ctx)
        .await
        .unwrap();
    let response: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(notes(&response), ["article_fallback_srd"]);
}

#[tokio::test]
async fn ext_extraction_cache_keeps_the_modes_apart() {
    let server = MockServer::start().await;
    serve(&server, "/srd-first", html(TINY)).await;
    serve(&server, "/article-first", html(TINY)).await;
    let dir = tempfile::tempdir().unwrap();
    let tool = extended(&config(&server).cache(dir.path()));
    let with = |path: &str, mode: Option<&str>| match mode {
        Some(mode) => json!({ "url": site(&server, path), "extraction": mode }),
        None => json!({ "url": site(&server, path) }),
    };

    for (path, first, second) in [
        ("/srd-first", None, Some("article")),
        ("/article-first", Some("article"), None),
    ] {
        let one = fetch_ok(&tool, with(path, first)).await;
        let other = fetch_ok(&tool, with(path, second)).await;
        assert!(!notes(&one).contains(&"cache_hit"), "{path}");
        assert!(
            !notes(&other).contains(&"cache_hit"),
            "{path}: a document of the other mode was served"
        );
        assert_eq!(hits(&server, path).await, 2, "{path}");
        // Each mode now hits its own entry.
        for mode in [first, second] {
            let again = fetch_ok(&tool, with(path, mode)).await;
            assert_eq!(notes(&again), ["cache_hit"], "{path} {mode:?}");
        }
        assert_eq!(hits(&server, path).await, 2, "{path}");

        // The SRD entry keeps the SRD key; the article one has its own.
        let canonical = CanonicalUrl::parse(&site(&server, path)).unwrap();
        let files = json_files(dir.path());
        let srd_key = CacheKey::new(&canonical, RenderingMethod::Http, Variant::default());
        let article_key = CacheKey::new(
            &canonical,
            RenderingMethod::Http,
            ExtractionMode::Article.into(),
        );
        for key in [srd_key, article_key] {
            assert!(files.contains(&key.entry_path(dir.path())), "{path} {key}");
        }
        let srd_entry = std::fs::read_to_string(srd_key.entry_path(dir.path())).unwrap();
        assert!(!srd_entry.contains("extraction"), "{srd_entry}");
    }
    assert_eq!(json_files(dir.path()).len(), 4);
}

#[tokio::test]
async fn ext_extraction_text_plain_is_the_same_in_both_modes() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/notes.txt",
        typed(
            b"Plain   notes\r\n\r\n\r\n\r\nmore",
            "text/plain; charset=utf-8",
        ),
    )
    .await;
    let tool = extended(&config(&server));
    let srd = fetch_ok(&tool, url_args(&server, "/notes.txt")).await;
    let article = fetch_ok(
        &tool,
        json!({ "url": site(&server, "/notes.txt"), "extraction": "article" }),
    )
    .await;
    assert_eq!(notes(&article), Vec::<&str>::new());
    assert_eq!(timeless(article), timeless(srd));
}

/// SRD-READINGS 29: an SPA shell that extracts to nothing is `extraction_failed`
/// over HTTP (FR-WF-12f: no fallback after an HTTP-mode error), and its message
/// says the page looks client-rendered and that `force_browser` may help; a page
/// without SPA markers keeps the plain message.
#[tokio::test]
async fn srd_readings_29_empty_spa_shell_is_extraction_failed_saying_why() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/shell",
        html("<html><body><div id=\"root\"></div><script type=\"module\" src=\"/app.js\"></script></body></html>"),
    )
    .await;
    serve(
        &server,
        "/empty",
        html("<html><body><div></div></body></html>"),
    )
    .await;
    let tool = config(&server).tool();

    let error = fetch_err(&tool, url_args(&server, "/shell")).await;
    assert_eq!(error.code, ErrorCode::ExtractionFailed);
    assert_eq!(error.details_json()["error"], "no_extractable_content");
    let message = &error.message;
    assert!(
        message.contains("client-rendered") && message.contains("force_browser"),
        "{message}"
    );

    let error = fetch_err(&tool, url_args(&server, "/empty")).await;
    assert_eq!(error.details_json()["error"], "no_extractable_content");
    assert!(
        !error.message.contains("client-rendered"),
        "{}",
        error.message
    );
}

// ---------------------------------------------------------------- embedding (issue 19)

/// A host's own tokenizer: one token per character.
struct CharCounter;

impl webfetch::TokenCounter for CharCounter {
    fn count_str(&self, text: &str) -> usize {
        text.chars().count()
    }
}

#[tokio::test]
async fn embed_builder_token_counter_sizes_the_chunks() {
    let server = article_server("/page").await;
    let settings = config(&server).settings();
    let validator = std::sync::Arc::new(crate::support::stub(&settings));
    let tool = WebFetchTool::builder(settings)
        .ssrf_validator(validator)
        .token_counter(std::sync::Arc::new(CharCounter))
        .build()
        .unwrap();
    let args = json!({ "url": site(&server, "/page"), "max_chunk_tokens": 128 });
    let response = fetch_ok(&tool, args.clone()).await;
    let chunks = response["chunks"].as_array().unwrap();
    for chunk in chunks {
        let text = chunk["text"].as_str().unwrap();
        assert_eq!(chunk["token_count"], text.chars().count(), "{text:?}");
        assert!(text.chars().count() <= 128, "{text:?}");
    }
    // cl100k needs fewer chunks for the same page: the counter was really used.
    let default = fetch_ok(&config(&server).tool(), args).await;
    assert!(chunks.len() > default["chunks"].as_array().unwrap().len());
}

#[tokio::test]
async fn embed_fetch_response_reads_the_json_back_byte_for_byte() {
    let server = MockServer::start().await;
    serve(&server, "/robots.txt", ResponseTemplate::new(503)).await;
    serve(&server, "/page", html(&long_article(40))).await;
    let tool = config(&server).section(FAIL_OPEN).tool();
    let args = json!({ "url": site(&server, "/page"), "max_chunk_tokens": 128 });
    // A response with notes, a title and a truncation reason.
    let json = tool
        .call(&args, 4_000)
        .await
        .map(|built| built.json)
        .unwrap();
    let response: webfetch::FetchResponse = serde_json::from_str(&json).unwrap();
    assert!(response.truncated);
    assert_eq!(
        response.truncation_reason,
        Some(webfetch::TruncationReason::ToolOutputLimit)
    );
    assert!(
        response
            .notes
            .contains(webfetch::Note::RobotsUnavailableFailOpen)
    );
    assert_eq!(serde_json::to_string(&response).unwrap(), json);
}
