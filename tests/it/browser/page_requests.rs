//! What a page's own scripts, frames, workers and sockets may reach: nothing
//! blocked, by any path (IT-WF-BR-01, 03, 04, 14, FR-WF-11b).

use super::*;

#[tokio::test]
async fn it_wf_br_01_forced_render_runs_scripts_and_fetches_through_the_client() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<div id="root"></div>
<script src="/app.js"></script>
<script>
document.cookie = 'sid=secret-cookie';
mark('UA:' + navigator.userAgent);
fetch('/api/data', { headers: { 'Accept': 'application/json' } })
  .then(r => r.json()).then(j => mark('API:' + j.message)).then(done);
</script>"#,
    )
    .await;
    serve(
        server,
        "/app.js",
        "text/javascript",
        "document.getElementById('root').innerHTML = '<h1>Rendered by JavaScript</h1>';",
    )
    .await;
    serve(
        server,
        "/api/data",
        "application/json",
        r#"{"message":"hello from the api"}"#,
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(
        page.html.contains("<h1>Rendered by JavaScript</h1>"),
        "{}",
        page.html
    );
    assert!(has_mark(page, "API:hello from the api"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
    // FR-WF-BROWSER-UA-01: the configured User-Agent, in JS and on the wire.
    assert!(has_mark(page, &format!("UA:{UA}")), "{}", page.html);
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    assert!(!page.dom_truncated);
    assert!(!page.blocked_non_get);
    let requests = server.received_requests().await.unwrap();
    for request in &requests {
        let ua = request.headers.get("user-agent").unwrap().to_str().unwrap();
        assert_eq!(ua, UA, "{}", request.url);
        // FR-WF-BSSR-HEADERS-01: no cookies ever leave.
        assert!(request.headers.get("cookie").is_none(), "{}", request.url);
    }
    let api = requests
        .iter()
        .find(|r| r.url.path() == "/api/data")
        .unwrap();
    assert_eq!(api.headers.get("accept").unwrap(), "application/json");
    assert!(
        api.headers
            .get("referer")
            .is_some_and(|r| r.to_str().unwrap().starts_with(&rig.url("/")))
    );
    let _ = std::io::stderr().flush();
}

#[tokio::test]
async fn it_wf_br_03_page_js_fetching_private_ranges_is_blocked_by_ssrf() {
    let Some(rig) = Rig::new().await else { return };
    // 127.0.0.2 is blocked by range (additional_blocked_cidrs), on an allowed port,
    // so only the SSRF check stands between the page and the secret.
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>
const targets = [
  'http://127.0.0.2:{iport}/secret',
  'http://internal.test:{iport}/secret',
  'http://metadata.test/latest/meta-data/',
  'http://private.test/admin',
  'http://mapped.test/x',
  'http://169.254.169.254/latest/meta-data/',
];
settle(targets).then(done);
</script>"#
        ),
    )
    .await;

    let settings = rig.config(&[iport, 80], "").settings();
    let run = rig.render(settings, "/").await;
    assert_probes_rejected(run.page(), 6);
    assert_never_contacted(&internal).await;
    // T-WF-INFRA-05 step 6: the block events name the internal addresses.
    for ip in [
        "127.0.0.2",
        "169.254.169.254",
        "10.0.0.1",
        "::ffff:10.0.0.1",
    ] {
        assert_logged(&run.logs, "ssrf_blocked", ip);
    }
}

/// No bypass by any path: the internal address spelled every way a URL
/// parser accepts (hex, octal, a single decimal number, the short form, IPv4-mapped
/// IPv6 in both notations), behind a same-origin redirect, and reached by every
/// page-side channel that is not a plain fetch (a beacon, an event stream, a CSS
/// `@import`, a prefetch hint, `<object>`, `<embed>`, a video poster, an SVG
/// image): none reaches the internal server. Each request is refused by the SSRF
/// check, except those refused earlier: images by type, the beacon (a POST) as a
/// non-GET.
#[tokio::test]
async fn fr_wf_11b_odd_spellings_and_side_channels_never_reach_internal() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<style>@import url('http://127.0.0.2:{iport}/css-import');</style>
<link rel="prefetch" href="http://127.0.0.2:{iport}/prefetch">
<object data="http://127.0.0.2:{iport}/object"></object>
<embed src="http://127.0.0.2:{iport}/embed">
<video poster="http://127.0.0.2:{iport}/poster"></video>
<svg><image href="http://127.0.0.2:{iport}/svg-image"/></svg>
<script>
const targets = [
  'http://0x7f.0.0.2:{iport}/hex',
  'http://0177.0.0.2:{iport}/octal',
  'http://2130706434:{iport}/decimal',
  'http://127.2:{iport}/short',
  'http://[::ffff:127.0.0.2]:{iport}/mapped',
  'http://[::ffff:7f00:2]:{iport}/mapped-hex',
  '/hop',
];
const beacon = navigator.sendBeacon('http://127.0.0.2:{iport}/beacon', 'x');
const stream = new Promise(resolve => {{
  const source = new EventSource('http://127.0.0.2:{iport}/events');
  source.onmessage = () => {{ source.close(); resolve('message'); }};
  source.onerror = () => {{ source.close(); resolve('error'); }};
}});
settle(targets)
  .then(() => stream).then(outcome => mark('STREAM:' + outcome))
  .then(done);
</script>"#
        ),
    )
    .await;
    // A same-origin hop that redirects to the internal address.
    let to = format!("http://127.0.0.2:{iport}/redirected");
    redirect(server, "/hop", 302, &to).await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert_probes_rejected(page, 7);
    assert!(has_mark(page, "STREAM:error"), "{}", page.html);
    assert_never_contacted(&internal).await;
    // Every request was issued, reached the SSRF check as the address it means,
    // and was refused there (not skipped by Chromium, which would prove nothing).
    for path in [
        "/hex",
        "/octal",
        "/decimal",
        "/short",
        "/mapped",
        "/mapped-hex",
        "/object",
        "/embed",
        "/events",
        "/css-import",
        "/prefetch",
    ] {
        assert_logged(&run.logs, "ssrf_blocked", &format!(":{iport}{path}"));
    }
    assert_logged(&run.logs, "ssrf_blocked", "::ffff:127.0.0.2");
    // The redirect is followed by the interceptor, hop by hop through the SSRF
    // check: the block names the request and the hop's address.
    let hop = log_lines(&run.logs, "ssrf_blocked", &format!(":{}/hop", rig.port));
    assert!(
        hop.iter().any(|l| l.contains("blocked_ip=127.0.0.2")),
        "{}",
        run.logs
    );
    // Images (a video poster, an SVG image) are refused by type (FR-WF-11g) first.
    for path in ["/poster", "/svg-image"] {
        assert_logged(&run.logs, "resource_blocked", &format!(":{iport}{path}"));
    }
    // A beacon is a POST: refused before any address is looked at.
    assert_logged(&run.logs, "non_get_blocked", &format!(":{iport}/beacon"));
    assert!(page.blocked_non_get);
}

#[tokio::test]
async fn it_wf_br_04_xhr_and_fetch_to_localhost_are_blocked() {
    let Some(rig) = Rig::new().await else { return };
    // T-WF-INFRA-05 exactly: the internal wiremock on 127.0.0.1:{internal_port}.
    let (internal, iport) = internal_server(Ipv4Addr::LOCALHOST).await;
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>fetch('http://127.0.0.1:{iport}/secret').then(r=>r.text()).then(t=>document.body.innerHTML+=t)</script>
<script>
const xhr = new XMLHttpRequest();
xhr.open('GET', 'http://localhost:{iport}/secret');
xhr.onload = () => {{ document.body.innerHTML += xhr.responseText; done(); }};
xhr.onerror = () => {{ mark('XHR-BLOCKED'); done(); }};
xhr.send();
</script>"#
        ),
    )
    .await;

    // Loopback is open for the page's port only.
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(!page.html.contains(INTERNAL_SECRET), "{}", page.html);
    assert!(has_mark(page, "XHR-BLOCKED"), "{}", page.html);
    assert_never_contacted(&internal).await;
    assert_logged(&run.logs, "port_blocked", &format!("127.0.0.1:{iport}"));
    assert_logged(&run.logs, "port_blocked", &format!("localhost:{iport}"));
}

#[tokio::test]
async fn fr_wf_11b_iframes_workers_popups_and_service_workers_never_reach_internal() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    let secret = format!("http://127.0.0.2:{iport}/secret");
    rig.serve_gated(
        "/",
        &format!(
            r#"<iframe src="http://page.test:{port}/frame"></iframe>
<iframe src="{secret}"></iframe>
<script>
window.open('{secret}');
const w = new Worker('/worker.js');
const worker = new Promise(res => {{ w.onmessage = e => {{ mark('WORKER:' + e.data); res(); }}; }});
const frame = new Promise(res => window.addEventListener('message', e => {{ mark('FRAME:' + e.data); res(); }}));
const sw = navigator.serviceWorker.register('/sw.js').then(() => mark('SW-REGISTERED'), () => mark('SW-FAILED'));
Promise.all([worker, frame, sw]).then(done);
</script>"#
        ),
    )
    .await;
    // A cross-origin iframe (page.test vs 127.0.0.1) whose script tries the secret.
    serve_html(
        server,
        "/frame",
        &format!(
            r#"<script>fetch('{secret}').then(r => r.text()).then(t => parent.postMessage(t, '*'), () => parent.postMessage('blocked', '*'));</script>"#
        ),
    )
    .await;
    serve(
        server,
        "/worker.js",
        "text/javascript",
        format!("fetch('{secret}').then(r => r.text()).then(t => postMessage(t), () => postMessage('blocked'));"),
    )
    .await;
    serve(
        server,
        "/sw.js",
        "text/javascript",
        "self.addEventListener('fetch', () => {});",
    )
    .await;

    let settings = rig.config(&[iport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert!(!page.html.contains(INTERNAL_SECRET), "{}", page.html);
    assert!(has_mark(page, "WORKER:blocked"), "{}", page.html);
    assert!(has_mark(page, "FRAME:blocked"), "{}", page.html);
    // The service-worker script is fetched by Chromium's own networking, which
    // reaches nothing: registration fails and the server never sees the script.
    assert!(has_mark(page, "SW-FAILED"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/frame".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/worker.js".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/sw.js".to_owned()), "{paths:?}");
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn it_wf_br_14_websockets_preconnect_and_dns_prefetch_open_no_connection() {
    let Some(rig) = Rig::new().await else { return };
    let ws = Tripwire::new();
    let wsport = ws.port();
    let pre = Tripwire::new();
    let preport = pre.port();
    rig.serve_gated(
        "/",
        &format!(
            r#"<link rel="preconnect" href="http://127.0.0.1:{preport}">
<link rel="dns-prefetch" href="//internal.test">
<script>
function tryWs(url) {{
  return new Promise(res => {{
    let s;
    try {{ s = new WebSocket(url); }} catch (e) {{ mark('WS-THROWN'); return res(); }}
    s.onopen = () => {{ mark('WS-OPEN'); res(); }};
    s.onerror = () => {{ mark('WS-ERROR'); res(); }};
  }});
}}
Promise.all([tryWs('ws://127.0.0.1:{wsport}/'), tryWs('ws://localhost:{wsport}/chat'), tryWs('wss://127.0.0.1:{wsport}/')])
  .then(done);
</script>"#
        ),
    )
    .await;

    let settings = rig.config(&[wsport, preport], "").settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    assert_eq!(
        ws.connections(),
        0,
        "a WebSocket handshake left the browser"
    );
    assert_eq!(pre.connections(), 0, "a preconnect left the browser");
    assert!(!has_mark(page, "WS-OPEN"), "{}", page.html);
    // The handshakes failed before the page went idle.
    assert!(has_mark(page, "DONE"), "{}", page.html);
}

#[tokio::test]
async fn fr_wf_11b_webrtc_sends_no_udp() {
    let Some(rig) = Rig::new().await else { return };
    let stun = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    stun.set_nonblocking(true).unwrap();
    let stun_port = stun.local_addr().unwrap().port();
    rig.serve_gated(
        "/",
        &format!(
            r#"<script>
const pc = new RTCPeerConnection({{ iceServers: [{{ urls: 'stun:127.0.0.1:{stun_port}' }}] }});
pc.createDataChannel('x');
const gathered = new Promise(res => {{
  pc.onicegatheringstatechange = () => {{ if (pc.iceGatheringState === 'complete') res(); }};
}});
pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => gathered)
  .then(() => mark('ICE-COMPLETE:' + (pc.localDescription.sdp.match(/a=candidate/g) || []).length))
  .then(done);
</script>"#
        ),
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    let mut buf = [0u8; 1500];
    assert!(
        stun.recv_from(&mut buf).is_err(),
        "a STUN packet left the browser"
    );
    // Gathering finished before the page went idle, so any packet would be here.
    assert!(page.html.contains("<p>ICE-COMPLETE:"), "{}", page.html);
    assert!(has_mark(page, "DONE"), "{}", page.html);
}
