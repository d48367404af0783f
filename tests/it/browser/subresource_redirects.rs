//! Subresource redirects, iframe documents, the per-render summary log line and
//! forms submitted during load.

use super::*;

/// A response our client fetched for a subresource redirect that
/// Chromium never follows (`redirect: 'manual'`) is never served to a later
/// top-frame navigation to its URL: that navigation is a hop of the main chain,
/// robots.txt checked and counted, and `final_url` names it.
#[tokio::test]
async fn unfollowed_subresource_redirect_never_answers_a_navigation() {
    let Some(rig) = Rig::new().await else { return };
    let port = rig.port;
    let server = &rig.server;
    // Each page fetches `redirecting` without following it, then navigates to
    // where it redirects.
    let attack = |redirecting: &str, to: &str| {
        html_page(&format!(
            "<script>fetch('{redirecting}', {{ redirect: 'manual' }}).then(r => {{ mark('TYPE:' + r.type); location.href = '{to}'; }});</script>"
        ))
    };
    let cross = format!("http://page.test:{port}/private");
    serve_html(server, "/same-origin", &attack("/r1", "/private")).await;
    serve_html(server, "/cross-origin", &attack("/r2", &cross)).await;
    serve_html(server, "/allowed", &attack("/r3", "/public")).await;
    redirect(server, "/r1", 302, "/private").await;
    redirect(server, "/r2", 302, &cross).await;
    redirect(server, "/r3", 302, "/public").await;
    serve_html(server, "/private", &html_page("<h1>Private</h1>")).await;
    serve_html(server, "/public", &html_page("<h1>Public</h1>")).await;

    for start in ["/same-origin", "/cross-origin"] {
        let robots = RecordingRobots::default();
        let run = run(rig.settings(), &rig.url(start), Some(&robots)).await;
        assert_eq!(
            run.result
                .as_ref()
                .map(|p| p.final_url.to_string())
                .map_err(|e| e.code()),
            Err(ErrorCode::RobotsDisallowed),
            "{start}: {}",
            run.logs
        );
        let asked = robots.0.lock().unwrap().clone();
        assert_eq!(
            asked.last().unwrap(),
            &format!("{start} -> /private"),
            "{asked:?}"
        );
    }
    // Allowed by robots.txt: the navigation is a counted hop, fetched for the
    // main chain, and the page returned is the one navigated to.
    let robots = RecordingRobots::default();
    let ok = run(rig.settings(), &rig.url("/allowed"), Some(&robots)).await;
    let page = ok.page();
    assert!(page.html.contains("<h1>Public</h1>"), "{}", page.html);
    assert_eq!(page.final_url.as_str(), rig.url("/public"));
    assert_eq!(
        robots.0.lock().unwrap().last().unwrap(),
        "/allowed -> /public"
    );
    // Counted: one redirect to the page, then the navigation is the second hop
    // (max_redirects also limits the subresource's own redirect, so not 0).
    redirect(server, "/to-allowed", 302, "/allowed").await;
    let limited = rig
        .render(
            rig.config(&[], "").top("max_redirects = 1").settings(),
            "/to-allowed",
        )
        .await;
    assert_eq!(limited.error().code(), ErrorCode::RedirectLimit);
    assert_eq!(limited.error().details_json()["count"], 2);
}

/// Redirected subresources still load at their
/// final URL, replayed to Chromium rather than fetched twice.
#[tokio::test]
async fn redirected_subresources_still_load() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<script src="/old.js"></script>
<iframe src="/old-frame"></iframe>
<script>
fetch('/old.txt').then(r => r.text().then(t => mark(t + '@' + new URL(r.url).pathname)))
  .then(() => new Promise(res => { if (window.FRAME_SEEN) res(); else window.frameSeen = res; }))
  .then(done);
</script>"#,
    )
    .await;
    redirect(server, "/old.js", 302, "/new.js").await;
    redirect(server, "/old.txt", 301, "/new.txt").await;
    redirect(server, "/old-frame", 302, "/new-frame").await;
    serve(server, "/new.js", "text/javascript", "mark('SCRIPT-OK');").await;
    serve(server, "/new.txt", "text/plain", "TEXT-OK").await;
    serve_html(
        server,
        "/new-frame",
        "<script>parent.mark('FRAME-OK@' + location.pathname); parent.FRAME_SEEN = true; if (parent.frameSeen) parent.frameSeen();</script>",
    )
    .await;

    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    for mark in [
        "SCRIPT-OK",
        "TEXT-OK@/new.txt",
        "FRAME-OK@/new-frame",
        "DONE",
    ] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let paths = received_paths(server).await;
    for fetched_once in ["/new.js", "/new.txt", "/new-frame"] {
        assert_eq!(
            paths.iter().filter(|p| *p == fetched_once).count(),
            1,
            "{fetched_once}: {paths:?}"
        );
    }
}

/// Appendix G steps 4 and 9 (FR-WF-BROWSER-BUDGET-02): an iframe's
/// document is outside the subresource budget: it loads after the budget is
/// spent, while the frame's own subresources are refused.
#[tokio::test]
async fn iframe_documents_are_outside_the_subresource_budget() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    rig.serve_gated(
        "/",
        r#"<script>
const s = document.createElement('script');
s.src = '/A.js';
s.onload = () => {
  const f = document.createElement('iframe');
  f.src = '/frame';
  document.body.appendChild(f);
};
document.head.appendChild(s);
</script>"#,
    )
    .await;
    serve(
        server,
        "/A.js",
        "text/javascript",
        sized_script("A", 1_100_000),
    )
    .await;
    serve_html(
        server,
        "/frame",
        r#"<p>frame</p><script>parent.mark('FRAME-DOC-RAN');</script>
<script src="/frame.js" onerror="parent.mark('FRAME-SUB-FAILED'); parent.done();"></script>"#,
    )
    .await;
    serve(
        server,
        "/frame.js",
        "text/javascript",
        "parent.mark('FRAME-SUB-RAN');",
    )
    .await;

    let settings = rig
        .config(&[], "max_total_subresource_bytes = 1048576")
        .top("max_download_bytes = 2000000")
        .settings();
    let run = rig.render(settings, "/").await;
    let page = run.page();
    for mark in ["A-RAN", "FRAME-DOC-RAN", "FRAME-SUB-FAILED", "DONE"] {
        assert!(has_mark(page, mark), "{mark}: {}", page.html);
    }
    assert!(!has_mark(page, "FRAME-SUB-RAN"), "{}", page.html);
    let paths = received_paths(server).await;
    assert!(paths.contains(&"/frame".to_owned()), "{paths:?}");
    assert!(!paths.contains(&"/frame.js".to_owned()), "{paths:?}");
}

/// The value of `field` on a captured log line (`field=value`, unquoted numbers).
fn field_of(line: &str, field: &str) -> Option<u64> {
    let start = line.find(&format!(" {field}="))? + field.len() + 2;
    let digits: String = line[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A render's subrequests make one summary line, at WARN when
/// one hit a limit or a block and INFO otherwise; each one's own events are DEBUG
/// but for `ssrf_blocked` (FR-WF-19c, T-WF-INFRA-05 step 6).
#[tokio::test]
async fn one_summary_line_per_render_for_the_subrequests() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    serve_html(
        server,
        "/busy",
        &rig.gated_page(&format!(
            r#"<script>
const tries = ['/a.txt', 'http://internal.test:{iport}/secret', '/big.txt'];
Promise.all(tries.map(u => fetch(u).then(r => r.text()).then(t => mark('OK:' + t.length), () => mark('FAILED'))))
  .then(done);
</script>"#
        )),
    )
    .await;
    rig.serve_gated("/quiet", "<script>done();</script>").await;
    serve(server, "/a.txt", "text/plain", "small").await;
    serve(server, "/big.txt", "text/plain", vec![b'x'; 200_000]).await;
    let settings = || {
        rig.config(&[iport], "")
            .top("max_download_bytes = 100000")
            .settings()
    };

    let busy = rig.render(settings(), "/busy").await;
    let page = busy.page();
    assert!(has_mark(page, "DONE"), "{}", page.html);
    let summary = log_lines(&busy.logs, "browser_subrequests", "");
    assert_eq!(summary.len(), 1, "{}", busy.logs);
    let line = summary[0];
    assert!(line.contains(" WARN "), "{line}");
    for (field, expected) in [
        ("ssrf_blocked", 1),
        ("too_large", 1),
        ("port_blocked", 0),
        ("timeouts", 0),
        ("over_budget", 0),
        ("failed", 0),
    ] {
        assert_eq!(field_of(line, field), Some(expected), "{field}: {line}");
    }
    // /a.txt and the gate's hold and release at least (Chromium may also ask
    // for a favicon).
    assert!(field_of(line, "fetched").unwrap() >= 2, "{line}");
    assert!(field_of(line, "bytes").unwrap() >= 7, "{line}");
    let too_large = log_lines(&busy.logs, "subresource_too_large", "big.txt");
    assert_eq!(too_large.len(), 1, "{}", busy.logs);
    assert!(too_large[0].contains(" DEBUG "), "{}", too_large[0]);
    let blocked = log_lines(&busy.logs, "ssrf_blocked", "127.0.0.2");
    assert_eq!(blocked.len(), 1, "{}", busy.logs);
    assert!(blocked[0].contains(" WARN "), "{}", blocked[0]);
    // Nothing else of the subrequests at WARN.
    let warnings: Vec<&str> = subrequest_warnings(&busy.logs);
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert_never_contacted(&internal).await;

    let quiet = rig.render(settings(), "/quiet").await;
    assert!(has_mark(quiet.page(), "DONE"), "{}", quiet.page().html);
    let summary = log_lines(&quiet.logs, "browser_subrequests", "");
    assert_eq!(summary.len(), 1, "{}", quiet.logs);
    assert!(summary[0].contains(" INFO "), "{}", summary[0]);
    assert_eq!(field_of(summary[0], "ssrf_blocked"), Some(0));
    assert!(
        subrequest_warnings(&quiet.logs).is_empty(),
        "{}",
        quiet.logs
    );
}

/// WARN lines about subrequests (their events all name one).
fn subrequest_warnings(logs: &str) -> Vec<&str> {
    logs.lines()
        .filter(|l| l.contains(" WARN ") && (l.contains("subre") || l.contains("ssrf_blocked")))
        .collect()
}

/// SRD-READINGS 22, 23: a form POST submitted while the page is
/// still loading is cancelled and the page as it was is the answer, with the
/// note; never a wait for a DOMContentLoaded that the cancelled navigation took
/// away, which would end in `timeout` after the whole budget.
#[tokio::test]
async fn a_post_submitted_during_load_is_cancelled_not_waited_for() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    serve_page(
        server,
        r#"<h1>Original page</h1>
<form id="f" method="POST" action="/submit"><input name="q" value="x"></form>
<script>document.getElementById('f').submit();</script>
<p>Text after the form.</p>"#,
    )
    .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("POST-ACCEPTED"))
        .mount(server)
        .await;
    let run = rig.render(rig.settings(), "/").await;
    let page = run.page();
    assert!(page.blocked_non_get);
    assert!(
        page.html.contains("<h1>Original page</h1>"),
        "{}",
        page.html
    );
    assert_eq!(page.final_url.as_str(), rig.url("/"));
    let requests = server.received_requests().await.unwrap();
    assert!(requests.iter().all(|r| r.method.as_str() == "GET"));
}
