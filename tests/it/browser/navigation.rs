//! The top frame's navigation: redirects counted and revalidated, script and
//! meta navigations as hops, robots.txt for the top chain only, and the main
//! document's status and media type (FR-WF-11c, SRD-READINGS 22).

use super::*;

#[tokio::test]
async fn fr_wf_11c_document_redirects_are_followed_counted_and_revalidated() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    redirect(server, "/r1", 302, "/r2").await;
    redirect(
        server,
        "/r2",
        301,
        &format!("http://page.test:{port}/final?x=1"),
    )
    .await;
    redirect(
        server,
        "/to-internal",
        302,
        &format!("http://127.0.0.2:{iport}/secret"),
    )
    .await;
    serve_html(
        server,
        "/final",
        &rig.gated_page("<h1>Final</h1><script>mark('HREF:' + location.href); fetch('rel.txt').then(r => r.text()).then(mark).then(done);</script>"),
    )
    .await;
    serve(server, "/rel.txt", "text/plain", "RELATIVE-OK").await;
    let ports = [iport];

    let run1 = rig.render(rig.config(&ports, "").settings(), "/r1").await;
    let page = run1.page();
    assert_eq!(
        page.final_url.as_str(),
        format!("http://page.test:{port}/final?x=1")
    );
    // The page runs at its final URL: relative URLs resolve against it.
    assert!(
        has_mark(page, &format!("HREF:http://page.test:{port}/final?x=1")),
        "{}",
        page.html
    );
    assert!(has_mark(page, "RELATIVE-OK"), "{}", page.html);
    // Fetched once each: the redirect is replayed to Chromium, not refetched.
    let finals = received_paths(server)
        .await
        .iter()
        .filter(|p| *p == "/final")
        .count();
    assert_eq!(finals, 1);

    let run2 = rig
        .render(
            rig.config(&ports, "").top("max_redirects = 1").settings(),
            "/r1",
        )
        .await;
    assert_eq!(run2.error().code(), ErrorCode::RedirectLimit);
    assert_eq!(run2.error().details_json()["count"], 2);

    let run3 = rig
        .render(rig.config(&ports, "").settings(), "/to-internal")
        .await;
    assert_eq!(run3.error().code(), ErrorCode::SsrfBlocked);
    assert_eq!(run3.error().details_json()["blocked_ip"], "127.0.0.2");
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn srd_readings_22_script_and_meta_navigations_are_redirect_hops() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    serve_html(
        server,
        "/js",
        &html_page("<script>location.href = '/second';</script>"),
    )
    .await;
    serve_html(
        server,
        "/meta",
        "<html><head><meta http-equiv=\"refresh\" content=\"0; url=/second\"></head><body>first</body></html>",
    )
    .await;
    serve_html(server, "/second", &html_page("<h1>Second document</h1>")).await;
    serve_html(
        server,
        "/evil",
        &html_page(&format!(
            "<script>location.href = 'http://127.0.0.2:{iport}/secret';</script>"
        )),
    )
    .await;
    serve_html(
        server,
        "/blank",
        &html_page("<script>location.href = 'about:blank';</script>"),
    )
    .await;
    let ports = [iport];

    for start in ["/js", "/meta"] {
        let ok = rig.render(rig.config(&ports, "").settings(), start).await;
        let page = ok.page();
        assert!(
            page.html.contains("<h1>Second document</h1>"),
            "{start}: {}",
            page.html
        );
        assert_eq!(page.final_url.as_str(), rig.url("/second"));
        let limited = rig
            .render(
                rig.config(&ports, "").top("max_redirects = 0").settings(),
                start,
            )
            .await;
        assert_eq!(limited.error().code(), ErrorCode::RedirectLimit, "{start}");
        assert_eq!(limited.error().details_json()["count"], 1);
    }
    // A blocked hop fails the fetch with the hop's error, never an error page.
    let evil = rig.render(rig.config(&ports, "").settings(), "/evil").await;
    assert_eq!(
        evil.error().code(),
        ErrorCode::SsrfBlocked,
        "{}",
        evil.error().to_json()
    );
    assert_never_contacted(&internal).await;
    // A top-frame navigation away from the web is not a document we return.
    let blank = rig
        .render(rig.config(&ports, "").settings(), "/blank")
        .await;
    assert_eq!(
        blank.error().code(),
        ErrorCode::InvalidScheme,
        "{}",
        blank.error().to_json()
    );
}

#[tokio::test]
async fn fr_wf_robots_scope_01_robots_applies_to_the_top_frame_chain_only() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    redirect(server, "/start", 302, "/page").await;
    serve_html(
        server,
        "/page",
        &html_page(
            r#"<iframe src="/private-frame"></iframe>
<script>
fetch('/private-data').then(r => r.text()).then(mark)
  .then(() => { location.href = '/private-area'; });
</script>"#,
        ),
    )
    .await;
    serve_html(server, "/private-frame", "<p>frame</p>").await;
    serve(server, "/private-data", "text/plain", "SUBRESOURCE-OK").await;
    serve_html(server, "/private-area", "<p>must not load</p>").await;
    let robots = RecordingRobots::default();
    let run = run(rig.settings(), &rig.url("/start"), Some(&robots)).await;
    assert_eq!(
        run.error().code(),
        ErrorCode::RobotsDisallowed,
        "{}",
        run.error().to_json()
    );
    // The page is checked before Chromium starts and again when its document is
    // fetched (a real robots check answers the second time from what it found the
    // first); subresources (fetch, iframe) never asked robots.txt, and loaded.
    assert_eq!(
        *robots.0.lock().unwrap(),
        [
            " -> /start",
            " -> /start",
            "/start -> /page",
            "/page -> /private-area"
        ]
    );
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/private-data".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/private-frame".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/private-area".to_owned()), "{paths:?}");
}

#[tokio::test]
async fn main_document_status_and_media_type_follow_http_mode() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_string("not here"))
        .mount(server)
        .await;
    serve(server, "/doc.pdf", "application/pdf", b"%PDF-1.7".to_vec()).await;
    serve(server, "/notes.txt", "text/plain", "plain text notes").await;
    let missing = rig.render(rig.settings(), "/missing").await;
    assert_eq!(missing.error().code(), ErrorCode::Http4xx);
    assert_eq!(missing.error().details_json()["status"], 404);
    let pdf = rig.render(rig.settings(), "/doc.pdf").await;
    assert_eq!(pdf.error().code(), ErrorCode::UnsupportedContentType);
    let text = rig.render(rig.settings(), "/notes.txt").await;
    assert!(
        text.page().html.contains("plain text notes"),
        "{}",
        text.page().html
    );
}
