//! A render's life: an unavailable or dying browser, timeouts, a fresh profile
//! per call that nothing outlives, and the DOM size cap (IT-WF-BR-02, 05, 08,
//! FR-WF-11, FR-WF-DOMSIZE-01/02).

use super::*;

#[tokio::test]
async fn it_wf_br_02_unavailable_browser_is_an_error() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let url = "http://127.0.0.1:80/";
    // Missing binary.
    let missing = settings("/nonexistent/chromium", &[80]);
    let run1 = run(missing, url, None).await;
    assert_eq!(run1.error().code(), ErrorCode::BrowserUnavailable);
    assert_eq!(
        run1.error().details_json()["chromium_path"],
        "/nonexistent/chromium"
    );
    // Disabled by configuration.
    let disabled = config(&chromium, &[80], "enabled = false").settings();
    let run2 = run(disabled, url, None).await;
    assert_eq!(run2.error().code(), ErrorCode::BrowserUnavailable);
    assert!(
        run2.error().message().contains("disabled"),
        "{}",
        run2.error().message()
    );
    // A binary that fails to launch.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("chromium");
    std::fs::write(&fake, "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let broken = settings(&fake.display().to_string(), &[80]);
    let run3 = run(broken, url, None).await;
    assert_eq!(run3.error().code(), ErrorCode::BrowserUnavailable);
    assert!(
        run3.error().message().contains("cannot open display"),
        "{}",
        run3.error().message()
    );
    assert!(!run3.error().is_retryable());
}

#[tokio::test]
async fn it_wf_br_05_network_idle_never_reached_is_a_timeout() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // A request that never gets an answer keeps the network busy.
    let hang = Tripwire::new();
    let hport = hang.port();
    serve_page(
        server,
        &format!("<p>content</p><script>fetch('http://127.0.0.1:{hport}/forever');</script>"),
    )
    .await;
    let mut settings = rig.config(&[hport], "").settings();
    settings.browser.network_idle_ms = 1000;
    let run = rig.render(settings, "/").await;
    let error = run.error();
    assert_eq!(error.code(), ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "browser_network_idle");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    assert!(error.is_retryable());
    drop(hang);
}

#[tokio::test]
async fn it_wf_br_05_document_never_answered_is_a_navigation_timeout() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let hang = Tripwire::new();
    let hport = hang.port();
    let settings = settings(&chromium, &[hport]);
    let mut settings = settings;
    settings.timeout_seconds = 1;
    let run = run(settings, &format!("http://127.0.0.1:{hport}/"), None).await;
    let error = run.error();
    assert_eq!(error.code(), ErrorCode::Timeout);
    assert_eq!(error.details_json()["phase"], "browser_navigation");
    assert_eq!(error.details_json()["timeout_ms"], 1000);
    drop(hang);
}

#[tokio::test]
async fn it_wf_br_08_every_call_gets_a_fresh_profile() {
    let Some(rig) = Rig::new().await else { return };
    rig.serve_gated(
        "/",
        r#"<script>
const before = [
  localStorage.getItem('k') ? 'local' : '',
  document.cookie.includes('k=1') ? 'cookie' : '',
  sessionStorage.getItem('k') ? 'session' : '',
].filter(Boolean).join('+') || 'none';
const idb = new Promise(res => {
  const open = indexedDB.open('webfetch-test', 1);
  open.onupgradeneeded = () => { open.result.createObjectStore('s'); res('none'); };
  open.onsuccess = () => res(open.result.objectStoreNames.length ? 'idb' : 'none');
  open.onerror = () => res('idb-error');
});
localStorage.setItem('k', 'v');
sessionStorage.setItem('k', 'v');
document.cookie = 'k=1; max-age=86400';
Promise.all([idb, caches.open('c').then(c => c.keys()).then(k => k.length ? 'cache' : 'none', () => 'none')])
  .then(([i, c]) => mark('STATE:' + before + '/' + i + '/' + c)).then(done);
</script>"#,
    )
    .await;
    for _ in 0..2 {
        let run = rig.render(rig.settings(), "/").await;
        // The second call sees nothing of the first: fresh profile, fresh process.
        assert!(
            has_mark(run.page(), "STATE:none/none/none"),
            "{}",
            run.page().html
        );
    }
}

/// Serves a page at `/` that requests `/slow`, which answers only after 30 s; the
/// receiver hears each time `/slow` is requested.
async fn serve_stalling_page(server: &MockServer) -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    serve_page(server, "<script>fetch('/slow');</script>").await;
    Mock::given(path("/slow"))
        .respond_with(move |_: &wiremock::Request| {
            let _ = tx.send(());
            ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30))
        })
        .mount(server)
        .await;
    rx
}

#[tokio::test]
async fn it_wf_br_08_cancelled_render_leaves_nothing_behind() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let mut stalled = serve_stalling_page(server).await;
    let target = Target::new(rig.settings(), &rig.url("/"));
    let ctx = target.context();
    // Drop the render future once the page is mid-load: the cancellation path.
    tokio::select! {
        result = render(&ctx) => panic!("render finished: {result:?}"),
        received = stalled.recv() => received.expect("the page's server is alive"),
    }
    assert!(
        std::fs::read_dir(target.root.path())
            .unwrap()
            .next()
            .is_none(),
        "profile left behind"
    );
    assert!(
        live_processes_naming(target.root.path()).is_empty(),
        "processes left behind"
    );
}

#[tokio::test]
async fn fr_wf_domsize_01_02_large_dom_is_truncated_with_the_flag() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // 3-byte chars so the cut must land on a char boundary; keeps growing, so only
    // the size cap (not network idle) can end the wait.
    serve_page(
        server,
        r#"<script>
document.body.insertAdjacentHTML('beforeend', '<p>' + '日本語'.repeat(2000) + '</p>');
setInterval(() => fetch('/tick'), 100);
</script>"#,
    )
    .await;
    serve(server, "/tick", "text/plain", "t").await;
    let capped = rig.config(&[], "max_rendered_dom_bytes = 1024").settings();
    let big = rig.render(capped, "/").await;
    let page = big.page();
    assert!(page.dom_truncated);
    assert!(
        page.html.len() <= 1024 && page.html.len() > 1000,
        "{}",
        page.html.len()
    );
    assert!(
        page.html.starts_with("<html><head><title>t</title>"),
        "{}",
        page.html
    );

    // Under the cap: no flag.
    server.reset().await;
    serve_page(server, "<p>small</p>").await;
    let small = rig.render(rig.settings(), "/").await;
    assert!(!small.page().dom_truncated);
}

/// The Chromium processes of a profile root: (pid, is the browser process).
fn chromium_processes(root: &Path) -> Vec<(i32, bool)> {
    live_processes_naming(root)
        .iter()
        .filter(|line| line.contains("chromium") || line.contains("chrome"))
        .filter_map(|line| {
            let (pid, cmdline) = line.split_once(": ")?;
            Some((pid.parse().ok()?, !cmdline.contains("--type=")))
        })
        .collect()
}

async fn crash_mid_render(kill_browser: bool) -> FetchError {
    let chromium = chromium().expect("checked by the caller");
    let server = page_server().await;
    let port = server.address().port();
    let mut stalled = serve_stalling_page(&server).await;
    let target = Target::new(
        settings(&chromium, &[port]),
        &format!("http://127.0.0.1:{port}/"),
    );
    let ctx = target.context();
    let rendering = render(&ctx);
    tokio::pin!(rendering);
    // Kill once the page is mid-load; a render that ends first (a slow first
    // launch timing out, an early error) fails the test with what it returned,
    // instead of leaving the killer waiting for a request that never comes.
    tokio::select! {
        result = &mut rendering => panic!("the render ended before the page stalled: {result:?}"),
        received = stalled.recv() => received.expect("the page's server is alive"),
    }
    for (pid, browser) in chromium_processes(target.root.path()) {
        let is_renderer = !browser
            && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .unwrap_or_default()
                .contains("--type=renderer");
        if (kill_browser && browser) || (!kill_browser && is_renderer) {
            nix_kill(pid);
        }
    }
    let result = rendering.await;
    assert_nothing_left(target.root.path());
    result.expect_err("the render cannot succeed after a crash")
}

fn nix_kill(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    assert!(status.unwrap().success());
}

#[tokio::test]
async fn fr_wf_11_browser_dying_mid_render_is_browser_crashed() {
    if chromium().is_none() {
        return;
    }
    let _serial = browser_turn(&SERIAL).await;
    let error = crash_mid_render(true).await;
    assert_eq!(
        error.code(),
        ErrorCode::BrowserCrashed,
        "{}",
        error.to_json()
    );
    assert!(error.is_retryable());
    let error = crash_mid_render(false).await;
    assert_eq!(
        error.code(),
        ErrorCode::BrowserCrashed,
        "{}",
        error.to_json()
    );
    // The next call works: a render right after the crashes succeeds,
    // and `run` checks that it too leaves nothing behind.
    let chromium = chromium().expect("checked above");
    let server = page_server().await;
    serve_page(&server, "<p>Rendered after the crash.</p>").await;
    let port = server.address().port();
    let after = run(
        settings(&chromium, &[port]),
        &format!("http://127.0.0.1:{port}/"),
        None,
    )
    .await;
    assert!(after.page().html.contains("Rendered after the crash."));
}
