//! The HTTP-first fallback to the browser for an SPA shell, through the whole
//! pipeline (IT-WF-BR-07, T-WF-CCH-10, SRD-READINGS 30).

use super::*;

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
    assert_eq!(error.code(), ErrorCode::SsrfBlocked, "{}", error.to_json());
    assert_never_contacted(&internal).await;
}
