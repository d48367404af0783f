//! The extensions through the pipeline: extraction modes and embedding.

use super::*;

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
    assert_eq!(error.code(), ErrorCode::ExtractionFailed);
    assert_eq!(error.details_json()["error"], "no_extractable_content");
    let message = &error.message();
    assert!(
        message.contains("client-rendered") && message.contains("force_browser"),
        "{message}"
    );

    let error = fetch_err(&tool, url_args(&server, "/empty")).await;
    assert_eq!(error.details_json()["error"], "no_extractable_content");
    assert!(
        !error.message().contains("client-rendered"),
        "{}",
        error.message()
    );
}

// ---------------------------------------------------------------- embedding

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
