//! Subresources the interceptor refuses or budgets: blocked types, non-GET
//! methods, the byte budget, data/file/blob URIs, compressed bodies (IT-WF-BR-06,
//! 09 .. 13, 15).

use super::*;

#[tokio::test]
async fn it_wf_br_06_blocked_resource_types_are_never_fetched() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<link rel="stylesheet" href="/style.css">
<img src="/photo.png"><video src="/clip.mp4"></video>
<script src="/app.js"></script>
<script>
const img = new Image();
img.onload = () => { mark('IMG-LOADED'); done(); };
img.onerror = () => { mark('IMG-BLOCKED'); done(); };
img.src = '/late.png';
</script>"#,
    )
    .await;
    serve(
        server,
        "/style.css",
        "text/css",
        "body { color: rgb(1, 2, 3); }",
    )
    .await;
    serve(server, "/app.js", "text/javascript", "mark('SCRIPT-RAN');").await;
    for png in ["/photo.png", "/late.png"] {
        serve(server, png, "image/png", b"\x89PNG\r\n\x1a\n".to_vec()).await;
    }
    serve(
        server,
        "/clip.mp4",
        "video/mp4",
        b"\0\0\0\x18ftypmp42".to_vec(),
    )
    .await;

    // FR-WF-11g defaults: Image, Media, Font blocked; scripts and styles not.
    let run1 = rig.render(rig.settings(), "/").await;
    let page = run1.page();
    assert!(has_mark(page, "SCRIPT-RAN"), "{}", page.html);
    assert!(has_mark(page, "IMG-BLOCKED"), "{}", page.html);
    let paths = received_paths(server).await;
    for blocked in ["/photo.png", "/late.png", "/clip.mp4"] {
        assert!(
            !paths.contains(&blocked.to_owned()),
            "{blocked} fetched: {paths:?}"
        );
    }
    assert!(has_mark(page, "DONE"), "{}", page.html);
    for allowed in ["/style.css", "/app.js"] {
        assert!(
            paths.contains(&allowed.to_owned()),
            "{allowed} missing: {paths:?}"
        );
    }

    // BLOCKRES-01: entries match CDP names case-insensitively.
    server.reset().await;
    rig.serve_gated(
        "/",
        r#"<link rel="stylesheet" href="/style.css"><script src="/app.js"></script><script>done();</script>"#,
    )
    .await;
    serve(server, "/style.css", "text/css", "body {}").await;
    serve(server, "/app.js", "text/javascript", "mark('SCRIPT-RAN');").await;
    let styles_off = rig
        .config(&[], r#"block_resources = ["STYLESHEET"]"#)
        .settings();
    let run2 = rig.render(styles_off, "/").await;
    assert!(has_mark(run2.page(), "SCRIPT-RAN"));
    let paths = received_paths(server).await;
    assert!(!paths.contains(&"/style.css".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/app.js".to_owned()), "{paths:?}");
}

#[tokio::test]
async fn it_wf_br_09_non_get_subrequests_are_blocked_with_the_note() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<h1>Original page</h1>
<form id="f" method="POST" action="/submit"><input name="q" value="exfiltrated"></form>
<script>
navigator.sendBeacon('/beacon', 'payload');
Promise.allSettled([
  fetch('/api', {{ method: 'POST', body: 'secret-body' }}),
  fetch('/api', {{ method: 'PUT', body: 'x' }}),
  fetch('/api', {{ method: 'DELETE' }}),
  // Method before SSRF (SRD-READINGS 23): counted even to a blocked address.
  fetch('http://127.0.0.2:{iport}/secret', {{ method: 'POST', body: 'x' }}),
]).then(r => mark('POSTS:' + r.map(x => x.status).join(','))).then(done)
  .then(() => document.getElementById('f').submit());
</script>"#
        ),
    )
    .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("POST-ACCEPTED"))
        .mount(server)
        .await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert!(page.blocked_non_get);
    assert!(
        has_mark(page, "POSTS:rejected,rejected,rejected,rejected"),
        "{}",
        page.html
    );
    // The blocked form submission left the page as it was, not an error page.
    assert!(
        page.html.contains("<h1>Original page</h1>"),
        "{}",
        page.html
    );
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests.iter().all(|r| r.method.as_str() == "GET"),
        "{:?}",
        requests
            .iter()
            .map(|r| format!("{} {}", r.method, r.url))
            .collect::<Vec<_>>()
    );
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn it_wf_br_09_get_only_pages_have_no_note() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        "<script>fetch('/a', { method: 'HEAD' }).then(done);</script>",
    )
    .await;
    serve(server, "/a", "text/plain", "x").await;
    let run = rig.render(rig.settings(), "/").await;
    assert!(!run.page().blocked_non_get);
    assert!(has_mark(run.page(), "DONE"));
}

#[tokio::test]
async fn it_wf_br_10_subresource_budget_fails_everything_after_the_crossing_request() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // Budget 1 MiB (the minimum), per-resource 800 kB, loaded one after the other:
    // A (700 kB) fits; BIG (900 kB) fails alone and is not counted; B (700 kB)
    // crosses the budget and is still fulfilled (SRD-READINGS 25); C fails.
    rig.serve_gated(
        "/",
        r#"<script>
function load(name, then) {
  const s = document.createElement('script');
  s.src = '/' + name + '.js';
  s.onload = then;
  s.onerror = () => { mark(name + '-FAILED'); then(); };
  document.head.appendChild(s);
}
load('A', () => load('BIG', () => load('B', () => load('C', done))));
</script>"#,
    )
    .await;
    serve(
        server,
        "/A.js",
        "text/javascript",
        sized_script("A", 700_000),
    )
    .await;
    serve(
        server,
        "/BIG.js",
        "text/javascript",
        sized_script("BIG", 900_000),
    )
    .await;
    serve(
        server,
        "/B.js",
        "text/javascript",
        sized_script("B", 700_000),
    )
    .await;
    serve(server, "/C.js", "text/javascript", sized_script("C", 10)).await;

    let settings = rig
        .config(&[], "max_total_subresource_bytes = 1048576")
        .top("max_download_bytes = 800000")
        .settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    for mark in ["A-RAN", "BIG-FAILED", "B-RAN", "C-FAILED", "DONE"] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    for absent in ["BIG-RAN", "C-RAN"] {
        assert!(!has_mark(page, absent), "{absent}: {}", page.html);
    }
    // C was failed before any network: the budget was spent.
    let paths = received_paths(server).await;
    assert!(!paths.contains(&"/C.js".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/BIG.js".to_owned()), "{paths:?}");
    assert_logged(&run.logs, "subresource_budget_exceeded", "");
    assert_logged(&run.logs, "subresource_too_large", "BIG.js");
}

#[tokio::test]
async fn it_wf_br_11_data_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script src="data:text/javascript,mark('DATA%2DSCRIPT%2DRAN')"></script>
<iframe id="fr" src="data:text/html,<script>parent.postMessage('DATA%2DFRAME%2DRAN','*')</script>"></iframe>
<script>
window.addEventListener('message', e => mark(e.data));
const encoded = 'data:text/plain;base64,' + btoa('DATA_URI_' + 'SECRET');
Promise.allSettled([
  fetch(encoded).then(r => r.text()).then(t => mark(t)),
  new Promise((res, rej) => { const w = new Worker('data:text/javascript,postMessage(1)'); w.onmessage = res; w.onerror = rej; }),
]).then(r => mark('DATA:' + r.map(x => x.status).join(','))).then(done);
</script>"#,
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(has_mark(page, "DATA:rejected,rejected"), "{}", page.html);
    assert!(!has_mark(page, "DATA_URI_SECRET"), "{}", page.html);
    assert!(!has_mark(page, "DATA-SCRIPT-RAN"), "{}", page.html);
    assert!(!has_mark(page, "DATA-FRAME-RAN"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

#[tokio::test]
async fn it_wf_br_12_file_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "FILE_SECRET_CONTENT").unwrap();
    let script = dir.path().join("run.js");
    std::fs::write(&script, "mark('FILE-SCRIPT-RAN');").unwrap();
    rig.serve_gated(
        "/",
        &format!(
            r#"<script src="file://{script}"></script>
<iframe src="file://{secret}"></iframe>
<script>
Promise.allSettled([fetch('file://{secret}').then(r => r.text()).then(t => mark(t))])
  .then(r => mark('FILE:' + r[0].status)).then(done);
</script>"#,
            script = script.display(),
            secret = secret.display()
        ),
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(has_mark(page, "FILE:rejected"), "{}", page.html);
    assert!(!page.html.contains("FILE_SECRET_CONTENT"), "{}", page.html);
    assert!(!has_mark(page, "FILE-SCRIPT-RAN"), "{}", page.html);
}

#[tokio::test]
async fn it_wf_br_13_blob_uri_subrequests_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script>
const blob = (text, type) => URL.createObjectURL(new Blob([text], { type }));
const script = document.createElement('script');
script.src = blob("mark('BLOB' + '-SCRIPT-RAN')", 'text/javascript');
document.head.appendChild(script);
Promise.allSettled([
  fetch(blob('BLOB_' + 'SECRET', 'text/plain')).then(r => r.text()).then(t => mark(t)),
  new Promise((res, rej) => { const w = new Worker(blob('postMessage(1)', 'text/javascript')); w.onmessage = res; w.onerror = rej; }),
  new Promise((res, rej) => { const x = new XMLHttpRequest(); x.open('GET', blob('x', 'text/plain')); x.onload = res; x.onerror = rej; x.send(); }),
]).then(r => mark('BLOB:' + r.map(x => x.status).join(','))).then(done);
</script>"#,
    )
    .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        has_mark(page, "BLOB:rejected,rejected,rejected"),
        "{}",
        page.html
    );
    assert!(!has_mark(page, "BLOB_SECRET"), "{}", page.html);
    assert!(!has_mark(page, "BLOB-SCRIPT-RAN"), "{}", page.html);
}

async fn compress(encoding: &str, data: &[u8]) -> Vec<u8> {
    use async_compression::tokio::bufread::{BrotliEncoder, GzipEncoder, ZlibEncoder};
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    match encoding {
        "gzip" => GzipEncoder::new(data).read_to_end(&mut out).await,
        "br" => BrotliEncoder::new(data).read_to_end(&mut out).await,
        "deflate" => ZlibEncoder::new(data).read_to_end(&mut out).await,
        other => panic!("{other}"),
    }
    .unwrap();
    out
}

#[tokio::test]
async fn it_wf_br_15_compressed_bodies_are_fulfilled_decoded_with_matching_length() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let document = rig.gated_page(
        r#"<h1>Compressed document</h1>
<script src="/gzip.js"></script><script src="/br.js"></script><script src="/deflate.js"></script>
<script>fetch('/data.json').then(r => r.json()).then(j => mark('JSON:' + j.word)).then(done);</script>"#,
    );
    let encoded = |body: Vec<u8>, encoding: &str, content_type: &str| {
        ResponseTemplate::new(200)
            .insert_header("content-encoding", encoding)
            .set_body_raw(body, content_type)
    };
    Mock::given(path("/"))
        .respond_with(encoded(
            compress("gzip", document.as_bytes()).await,
            "gzip",
            "text/html",
        ))
        .mount(server)
        .await;
    for encoding in ["gzip", "br", "deflate"] {
        // Long enough that a wrong Content-Length would cut the script short.
        let js = format!(
            "mark('{encoding}-RAN'); /* {} */ mark('{encoding}-END');",
            "x".repeat(50_000)
        );
        Mock::given(path(format!("/{encoding}.js")))
            .respond_with(encoded(
                compress(encoding, js.as_bytes()).await,
                encoding,
                "text/javascript",
            ))
            .mount(server)
            .await;
    }
    Mock::given(path("/data.json"))
        .respond_with(encoded(
            compress("br", br#"{"word":"decoded"}"#).await,
            "br",
            "application/json",
        ))
        .mount(server)
        .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        page.html.contains("<h1>Compressed document</h1>"),
        "{}",
        page.html
    );
    for mark in [
        "gzip-RAN",
        "gzip-END",
        "br-RAN",
        "br-END",
        "deflate-RAN",
        "deflate-END",
        "JSON:decoded",
        "DONE",
    ] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
}
