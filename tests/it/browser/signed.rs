//! Web Bot Auth in browser mode: the document and its subresources, which
//! Chromium asks for and webfetch's pinned client fetches, arrive signed.

use super::*;
use crate::bot_auth::{Received, TestKey, assert_signed};

#[tokio::test]
async fn the_document_and_its_subresources_arrive_signed() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<link rel="stylesheet" href="/style.css"><script src="/app.js"></script>
<script>fetch('/data.txt').then(r => r.text()).then(t => { mark(t); done(); });</script>"#,
    )
    .await;
    serve(server, "/style.css", "text/css", "body {}").await;
    serve(server, "/app.js", "text/javascript", "mark('SCRIPT-RAN');").await;
    serve(server, "/data.txt", "text/plain", "DATA-FETCHED").await;
    let key = TestKey::new();
    let settings = rig.config(&[], "").section(&key.section()).settings();

    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert!(has_mark(page, "SCRIPT-RAN"), "{}", page.html);
    assert!(has_mark(page, "DATA-FETCHED"), "{}", page.html);

    let authority = format!("127.0.0.1:{}", rig.port);
    let mut paths = Vec::new();
    for request in server.received_requests().await.unwrap() {
        let received = Received::of(&request);
        assert_signed(&received, &key, &authority);
        paths.push(received.path);
    }
    for want in ["/", "/style.css", "/app.js", "/data.txt"] {
        assert!(paths.iter().any(|p| p == want), "{want}: {paths:?}");
    }
}
