//! robots.txt and the response cache inside the whole pipeline (T-WF-ROB-01, 06,
//! T-WF-CCH-01, 02, 07, 13, FR-WF-07e, 08h, 09a, 19a).

use super::*;

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
    assert!(!error.is_retryable());
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
    assert!(error.is_retryable());
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
