//! T-WF-ERR-03: query strings never reach the logs (FR-WF-19b, NFR-WF-SEC-06), and
//! the fetch events carry the structured fields of FR-WF-19c.
//!
//! Each test installs a JSON `tracing` subscriber writing to its own buffer as the
//! thread's default and drives the tool on a current-thread runtime inside that
//! guard, so every event the pipeline emits on this thread is captured. The last
//! test checks the real binary's stderr the same way.

use std::io::Write;
use std::process::Command;

use serde_json::{Value, json};
use tracing::Level;
use webfetch::WebFetchTool;
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, LogBuffer, html, robots, serve, site};

const SECRET: &str = "SECRET123";

const PAGE: &str = "<html><head><title>T</title></head><body><main><h1>Hello</h1>\
                    <p>Some text that is long enough to be an article.</p></main></body></html>";

/// Runs `body` on a current-thread runtime under a JSON subscriber at INFO and
/// above; returns its result and the log lines.
fn with_logs<T>(body: impl AsyncFnOnce() -> T) -> (T, String) {
    let buffer = LogBuffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let result = tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(body())
    });
    (result, buffer.text())
}

/// The `fields` of every log line.
fn events(logs: &str) -> Vec<Value> {
    logs.lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("a JSON log line");
            value["fields"].clone()
        })
        .collect()
}

fn event<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

fn assert_no_secret(logs: &str) {
    assert!(!logs.is_empty(), "something was logged");
    assert!(!logs.contains(SECRET), "secret logged:\n{logs}");
    assert!(!logs.contains("token="), "query logged:\n{logs}");
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nDisallow: /private\n").await;
    serve(&server, "/page", html(PAGE)).await;
    serve(&server, "/missing", ResponseTemplate::new(404)).await;
    serve(
        &server,
        "/hop",
        ResponseTemplate::new(302)
            .insert_header("location", format!("/page?token={SECRET}&y=2").as_str()),
    )
    .await;
    server
}

async fn call(tool: &WebFetchTool, url: &str) -> Result<Value, String> {
    match tool
        .call(&json!({ "url": url }), usize::MAX)
        .await
        .map(|built| built.json)
    {
        Ok(text) => Ok(serde_json::from_str(&text).unwrap()),
        Err(error) => Err(error.code().to_string()),
    }
}

#[test]
fn t_wf_err_03_success_and_cache_hit_log_fields_without_query() {
    let cache = tempfile::tempdir().unwrap();
    let ((first, second), logs) = with_logs(async || {
        let server = server().await;
        let tool = Config::new(&[server.address().port()])
            .cache(cache.path())
            .tool();
        let url = site(&server, &format!("/page?token={SECRET}&x=1"));
        (call(&tool, &url).await, call(&tool, &url).await)
    });
    // The response itself echoes the URL (FR-WF-RESP-URL-01); only logs redact.
    assert!(
        first.unwrap()["requested_url"]
            .as_str()
            .unwrap()
            .contains(SECRET)
    );
    assert_eq!(second.unwrap()["notes"], json!(["cache_hit"]));
    assert_no_secret(&logs);

    let events = events(&logs);
    let starts = event(&events, "fetch_start");
    assert_eq!(starts.len(), 2, "{logs}");
    for start in starts {
        assert_eq!(start["requested_host"], "site.test");
        assert!(start["url"].as_str().unwrap().ends_with("/page"), "{start}");
    }
    let completes = event(&events, "fetch_complete");
    assert_eq!(completes.len(), 2, "{logs}");
    for (complete, hit) in completes.iter().zip([false, true]) {
        assert_eq!(complete["requested_host"], "site.test");
        assert_eq!(complete["rendering_method"], "http");
        assert_eq!(complete["cache_hit"], hit);
        assert!(complete.get("error_code").is_none(), "{complete}");
    }
}

#[test]
fn t_wf_err_03_failures_log_error_code_without_query() {
    let (codes, logs) = with_logs(async || {
        let server = server().await;
        let port = server.address().port();
        let tool = Config::new(&[port]).tool();
        let mut codes = Vec::new();
        for url in [
            site(&server, &format!("/missing?token={SECRET}&x=1")),
            site(&server, &format!("/private/doc?token={SECRET}&x=1")),
            format!("http://internal.test:{port}/?token={SECRET}"),
            format!("http://nowhere.test:{port}/?token={SECRET}"),
            format!("http://0x7f000001/?token={SECRET}"),
            format!("ftp://site.test/?token={SECRET}"),
        ] {
            codes.push(call(&tool, &url).await.unwrap_err());
        }
        codes
    });
    assert_eq!(
        codes,
        [
            "http_4xx",
            "robots_disallowed",
            "ssrf_blocked",
            "dns_failed",
            "invalid_host",
            "invalid_scheme"
        ]
    );
    assert_no_secret(&logs);

    let events = events(&logs);
    assert_eq!(event(&events, "fetch_start").len(), 6, "{logs}");
    let failed = event(&events, "fetch_failed");
    let failed_codes: Vec<&str> = failed
        .iter()
        .map(|e| e["error_code"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed_codes,
        [
            "http_4xx",
            "robots_disallowed",
            "dns_failed",
            "invalid_host",
            "invalid_scheme"
        ]
    );
    for e in &failed[..3] {
        assert_eq!(e["cache_hit"], false);
        assert!(e["requested_host"].is_string());
    }
    assert_eq!(failed[0]["requested_host"], "site.test");
    let blocked = event(&events, "ssrf_blocked");
    assert_eq!(blocked.len(), 1, "{logs}");
    assert_eq!(blocked[0]["error_code"], "ssrf_blocked");
    assert_eq!(blocked[0]["requested_host"], "internal.test");
    assert_eq!(blocked[0]["blocked_ip"], "10.0.0.5");
}

#[test]
fn t_wf_err_03_redirect_targets_and_userinfo_are_not_logged() {
    let (results, logs) = with_logs(async || {
        let server = server().await;
        let port = server.address().port();
        let tool = Config::new(&[port]).tool();
        vec![
            // The hop's Location carries the secret in its query.
            call(&tool, &site(&server, "/hop")).await.map(|_| ()),
            call(
                &tool,
                &format!("http://user:{SECRET}@site.test:{port}/page"),
            )
            .await
            .map(|_| ()),
        ]
    });
    assert_eq!(results, [Ok(()), Err("invalid_url".to_owned())]);
    assert_no_secret(&logs);
    let events = events(&logs);
    assert_eq!(event(&events, "fetch_complete").len(), 1, "{logs}");
}

#[test]
fn t_wf_err_03_cli_stderr_never_shows_the_query() {
    let (server, runtime) = {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        (runtime.block_on(server()), runtime)
    };
    let config = Config::new(&[server.address().port()]);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(config.toml().as_bytes()).unwrap();
    for (path, exit) in [("/page", 0), ("/missing", 2), ("/private/x", 2)] {
        // The binary resolves names for real: use the loopback literal.
        let url = format!(
            "http://127.0.0.1:{}{path}?token={SECRET}&x=1",
            server.address().port()
        );
        let output = Command::new(env!("CARGO_BIN_EXE_webfetch"))
            .args(["--log-format", "json", "fetch", &url, "--config"])
            .arg(file.path())
            .env("RUST_LOG", "info")
            .output()
            .expect("the binary runs");
        assert_eq!(output.status.code(), Some(exit), "{url}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_no_secret(&stderr);
        let events = events(&stderr);
        assert_eq!(event(&events, "fetch_start").len(), 1, "{stderr}");
        let end = if exit == 0 {
            "fetch_complete"
        } else {
            "fetch_failed"
        };
        assert_eq!(event(&events, end).len(), 1, "{stderr}");
    }
    drop(server);
    drop(runtime);
}

#[test]
fn fr_wf_cch_enable_02_uncreatable_cache_dir_is_logged() {
    let scratch = tempfile::tempdir().unwrap();
    let blocker = scratch.path().join("file");
    std::fs::write(&blocker, "a file").unwrap();
    let (result, logs) = with_logs(async || {
        let server = server().await;
        let tool = Config::new(&[server.address().port()])
            .cache(&blocker.join("cache"))
            .tool();
        call(&tool, &site(&server, &format!("/page?token={SECRET}"))).await
    });
    assert_eq!(result.unwrap()["notes"], json!([]));
    assert_no_secret(&logs);
    let events = events(&logs);
    assert_eq!(event(&events, "cache_disabled").len(), 1, "{logs}");
}

/// FR-WF-19c on every event of a call, not only the pipeline's own: each line
/// emitted during a call is inside the `web_fetch` span, which carries
/// `requested_host`, `rendering_method` (planned, then used) and `cache_hit`.
#[test]
fn fr_wf_19c_every_event_of_a_call_carries_the_structured_fields() {
    let (result, logs) = with_logs(async || {
        let server = server().await;
        let tool = Config::new(&[server.address().port()])
            .section("[tools.webfetch.rendering]\njs_heavy_domains = [\"site.test\"]")
            .tool();
        call(&tool, &site(&server, "/page")).await
    });
    assert_eq!(
        result.unwrap()["notes"],
        json!(["browser_unavailable_used_http"])
    );
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON log line"))
        .collect();
    assert!(lines.len() >= 3, "{logs}");
    for line in &lines {
        let span = &line["span"];
        assert_eq!(span["name"], "web_fetch", "{line}");
        assert_eq!(span["requested_host"], "site.test", "{line}");
        // Known once the cache was read, which is the first stage after
        // `fetch_start`.
        if line["fields"]["event"] != "fetch_start" {
            assert_eq!(span["cache_hit"], false, "{line}");
        }
    }
    let span_of = |name: &str| {
        lines
            .iter()
            .find(|line| line["fields"]["event"] == name)
            .map(|line| line["span"].clone())
            .unwrap_or_else(|| panic!("no {name} event in {logs}"))
    };
    // The browser was planned for this js-heavy host; HTTP answered.
    assert_eq!(
        span_of("browser_unavailable_used_http")["rendering_method"],
        "browser"
    );
    assert_eq!(span_of("fetch_complete")["rendering_method"], "http");
}
