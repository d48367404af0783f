//! Fault injection: the server, the disk or the process fails
//! under a fetch. Each fault ends in an asserted outcome: the documented error, and
//! a cache that never holds anything partial.
//!
//! The servers are raw `TcpListener`s on loopback speaking just enough HTTP/1.1 to
//! fail where each test wants; robots.txt is always a 404 (allow all). DNS is the
//! stub resolver (T-WF-INFRA-01), caches live in temp dirs (T-WF-INFRA-03).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use webfetch::internals::cache::Variant;
use webfetch::{ErrorCode, FetchError};
use wiremock::MockServer;

use crate::support::{Config, html, json_files, read_head, serve};

/// No output budget.
pub(crate) const UNLIMITED: usize = usize::MAX;

/// What a raw server does with one document request, given the socket and the
/// request head it read (robots.txt is answered 404).
pub(crate) type Answer =
    Arc<dyn Fn(TcpStream, String) -> futures_util::future::BoxFuture<'static, ()> + Send + Sync>;

/// A loopback server: `/robots.txt` gets a 404, every other request is handed to
/// `answer` once its head has been read.
pub(crate) async fn raw_site(answer: Answer) -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let answer = Arc::clone(&answer);
            tokio::spawn(async move {
                let head = read_head(&mut socket).await;
                if head.starts_with("GET /robots.txt ") {
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        )
                        .await;
                    return;
                }
                answer(socket, head).await;
            });
        }
    });
    address
}

/// A raw site whose documents get `reply` and then a connection reset (an RST,
/// not a FIN: `SO_LINGER` of zero).
pub(crate) async fn resetting_site(reply: &'static [u8]) -> SocketAddr {
    raw_site(Arc::new(move |mut socket: TcpStream, _| {
        Box::pin(async move {
            let _ = socket.write_all(reply).await;
            let _ = socket.flush().await;
            reset(socket);
        })
    }))
    .await
}

/// Drops `socket` with an RST.
pub(crate) fn reset(socket: TcpStream) {
    // Deprecated because a non-zero linger blocks the dropping thread; zero does not.
    #[allow(deprecated)]
    socket.set_linger(Some(Duration::ZERO)).unwrap();
    drop(socket);
}

/// `http://site.test:{port}/page`.
pub(crate) fn page(address: SocketAddr) -> String {
    format!("http://site.test:{}/page", address.port())
}

/// Calls the tool on `url` with `config` and a cache in `cache`; the call must fail.
pub(crate) async fn failing_fetch(config: Config, cache: &Path, url: &str) -> FetchError {
    let tool = config.cache(cache).tool();
    let outcome = tool
        .call(&json!({ "url": url }), UNLIMITED)
        .await
        .map(|built| built.json);
    let error = outcome.expect_err("the fetch must fail");
    assert!(
        json_files(cache).is_empty(),
        "a failed fetch caches nothing: {:?}",
        json_files(cache)
    );
    error
}

pub(crate) fn assert_code(error: &FetchError, code: ErrorCode) {
    assert_eq!(error.code(), code, "unexpected error: {}", error.to_json());
}

/// `details.error` of a `network` error.
pub(crate) fn network_detail(error: &FetchError) -> String {
    assert_code(error, ErrorCode::Network);
    error.details_json()["error"]
        .as_str()
        .expect("network errors carry details.error")
        .to_owned()
}

// ---------------------------------------------------------------- resets

#[tokio::test]
async fn reset_mid_body_is_network_body_read_failed_and_nothing_cached() {
    let site = resetting_site(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n<html><body><p>half",
    )
    .await;
    let cache = tempfile::tempdir().unwrap();
    let error = failing_fetch(Config::new(&[site.port()]), cache.path(), &page(site)).await;
    let detail = network_detail(&error);
    assert!(detail.starts_with("body_read_failed"), "{detail}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn reset_mid_headers_is_network_request_failed_and_nothing_cached() {
    let site = resetting_site(b"HTTP/1.1 200 OK\r\nContent-Type: text/ht").await;
    let cache = tempfile::tempdir().unwrap();
    let error = failing_fetch(Config::new(&[site.port()]), cache.path(), &page(site)).await;
    let detail = network_detail(&error);
    assert!(detail.starts_with("request_failed"), "{detail}");
    assert!(
        detail.to_lowercase().contains("reset"),
        "the cause is named: {detail}"
    );
}

#[tokio::test]
async fn reset_mid_tls_handshake_is_network_connection_reset_and_nothing_cached() {
    // Read part of the ClientHello, then reset: the handshake fails on the
    // transport, which is `network`, not `tls_validation_failed`.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut hello = [0u8; 5];
            let _ = socket.read_exact(&mut hello).await;
            reset(socket);
        }
    });
    let cache = tempfile::tempdir().unwrap();
    let url = format!("https://site.test:{}/page", address.port());
    let config =
        Config::new(&[address.port()]).section("[tools.webfetch.robots]\nfail_open = true");
    let error = failing_fetch(config, cache.path(), &url).await;
    assert_eq!(
        network_detail(&error),
        "connection_reset",
        "{}",
        error.to_json()
    );
    assert_eq!(error.details_json()["attempted_ips"], json!(["127.0.0.1"]));
}

// ---------------------------------------------------------------- trickle

/// A site that sends `head` and then one byte of `tail` a second, for ever.
async fn trickling_site(head: &'static [u8], tail: u8) -> SocketAddr {
    raw_site(Arc::new(move |mut socket: TcpStream, _| {
        Box::pin(async move {
            if socket.write_all(head).await.is_err() {
                return;
            }
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                if socket.write_all(&[tail]).await.is_err() {
                    return;
                }
            }
        })
    }))
    .await
}

/// The tool's error for a trickling site under a 1 s budget. The call returns
/// within the budget's own timer: the test awaits it, with no timing assert.
async fn trickle_error(head: &'static [u8], tail: u8) -> FetchError {
    let site = trickling_site(head, tail).await;
    let cache = tempfile::tempdir().unwrap();
    let config = Config::new(&[site.port()]).timeout(1);
    failing_fetch(config, cache.path(), &page(site)).await
}

/// A `timeout` at the 1 s budget of these tests, in `phase`.
fn assert_timed_out_in(error: &FetchError, phase: &str) {
    assert_code(error, ErrorCode::Timeout);
    let details = error.details_json();
    assert_eq!(details["phase"], phase, "{}", error.to_json());
    assert_eq!(details["timeout_ms"], 1000);
}

#[tokio::test]
async fn trickled_body_times_out_at_the_budget_in_phase_response() {
    let error = trickle_error(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<p>",
        b'a',
    )
    .await;
    assert_timed_out_in(&error, "response");
}

#[tokio::test]
async fn trickled_headers_time_out_at_the_budget_in_phase_request() {
    // A header line that never ends: the response head is never complete.
    let error = trickle_error(b"HTTP/1.1 200 OK\r\nX-Slow: ", b'a').await;
    assert_timed_out_in(&error, "request");
}

// ---------------------------------------------------------------- CLI helpers

/// A config file for the CLI: loopback open on `port`, the cache in `cache`
/// limited to `max_entries` entries and `max_bytes` bytes.
pub(crate) fn cli_config(
    port: u16,
    cache: &Path,
    max_entries: u32,
    max_bytes: u64,
) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let text = Config::new(&[port])
        .cache(cache)
        .top(&format!("max_cache_entries = {max_entries}"))
        .top(&format!("max_cache_bytes = {max_bytes}"))
        .toml();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    file
}

/// The CLI command fetching `url` with the config file `config`.
pub(crate) fn cli(url: &str, config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_webfetch"));
    command
        .args(["fetch", url, "--config"])
        .arg(config)
        .env_remove("RUST_LOG");
    command
}

/// The one JSON object the CLI printed.
pub(crate) fn stdout_json(output: &Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim_end()).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

/// Runs `command` off the async runtime (the test's servers keep serving).
pub(crate) async fn run(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().expect("the binary runs"))
        .await
        .unwrap()
}

/// A wiremock site serving `/p{n}` for every `n` in `pages`: articles of 5 to 65
/// sentences (about 0.4 to 3 KB of text), so entries differ in size.
pub(crate) async fn pages_site(pages: std::ops::Range<u32>) -> MockServer {
    sized_pages_site(pages, |n| 5 + (n as usize % 6) * 12).await
}

/// Like [`pages_site`], page `n` holding `sentences(n)` sentences.
async fn sized_pages_site(
    pages: std::ops::Range<u32>,
    sentences: impl Fn(u32) -> usize,
) -> MockServer {
    let server = MockServer::start().await;
    for n in pages {
        let body = format!(
            "<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>\
             <p>{}</p></main></body></html>",
            sentence(n).repeat(sentences(n))
        );
        serve(&server, &format!("/p{n}"), html(&body)).await;
    }
    server
}

/// The sentence page `n` repeats.
fn sentence(n: u32) -> String {
    format!("Sentence {n} of a page that is cached. ")
}

/// `http://127.0.0.1:{port}/p{n}`.
pub(crate) fn page_url(server: &MockServer, n: u32) -> String {
    format!("http://127.0.0.1:{}/p{n}", server.address().port())
}

// ---------------------------------------------------------------- the cache under faults

/// Every file under `dir`, relative, sorted; the cache's own bookkeeping files
/// (`.webfetch-*` at the top) left out.
pub(crate) fn cache_files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .into_iter()
        .filter_map(|p| {
            p.strip_prefix(dir)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .filter(|p| !p.starts_with(".webfetch-"))
        .collect();
    out.sort();
    out
}

fn walk(at: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for item in std::fs::read_dir(at).into_iter().flatten().flatten() {
        let path = item.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Asserts every file in the cache is a whole v2 entry filed under its own key
/// (never a partial one, never a temp file), and returns (entries, their bytes).
pub(crate) fn assert_whole_entries(dir: &Path) -> (usize, u64) {
    let files = cache_files(dir);
    let mut bytes = 0;
    for name in &files {
        assert!(name.ends_with(".json"), "not an entry: {name} in {files:?}");
        let path = dir.join(name);
        let text = std::fs::read(&path).unwrap();
        bytes += text.len() as u64;
        let entry: Value = serde_json::from_slice(&text)
            .unwrap_or_else(|e| panic!("a torn entry is readable: {name}: {e}"));
        assert_eq!(entry["version"], 2, "{name}");
        let page = entry["canonical_url"].as_str().unwrap();
        let method = entry["rendering_method"].as_str().unwrap();
        let key = webfetch::internals::cache::CacheKey::new(
            &webfetch::CanonicalUrl::parse(page).unwrap(),
            if method == "http" {
                webfetch::RenderingMethod::Http
            } else {
                webfetch::RenderingMethod::Browser
            },
            Variant::default(),
        );
        assert!(
            name.ends_with(&format!("{key}.json")),
            "{name} filed under {key}"
        );
    }
    (files.len(), bytes)
}

/// Asserts the CLI succeeded and returns its response.
fn succeeded(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(output)
}

fn notes(response: &Value) -> Vec<String> {
    response["notes"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether this machine lets the test create a user and mount namespace.
fn namespaces_available() -> bool {
    let ok = Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: `unshare -rm` is not available here (no user/mount namespaces)");
    }
    ok
}

/// `webfetch fetch URL --config CONFIG` inside a new user+mount namespace, after
/// `setup` (shell text, `$D` is the cache dir) ran there.
fn in_namespace(setup: &str, cache: &Path, url: &str, config: &Path) -> Command {
    let mut command = Command::new("unshare");
    command
        .args(["-rm", "sh", "-c"])
        .arg(format!(
            "set -e; {setup}; exec \"$W\" fetch \"$U\" --config \"$C\""
        ))
        .env("D", cache)
        .env("W", env!("CARGO_BIN_EXE_webfetch"))
        .env("U", url)
        .env("C", config)
        .env_remove("RUST_LOG");
    command
}

/// A remount of the cache dir read-only.
const READ_ONLY: &str = "mount --bind \"$D\" \"$D\"; mount -o remount,bind,ro \"$D\"";

#[tokio::test]
async fn read_only_cache_dir_fetch_succeeds_warns_and_recovers() {
    if !namespaces_available() {
        return;
    }
    let server = pages_site(0..2).await;
    let cache = tempfile::tempdir().unwrap();
    let config = cli_config(server.address().port(), cache.path(), 100, 1 << 30);
    let (p0, p1) = (page_url(&server, 0), page_url(&server, 1));
    succeeded(&run(cli(&p0, config.path())).await);
    let before = assert_whole_entries(cache.path());
    assert_eq!(before.0, 1);

    // Read-only: a miss is fetched, not cached, with the note and the warning.
    let output = run(in_namespace(READ_ONLY, cache.path(), &p1, config.path())).await;
    let response = succeeded(&output);
    assert!(
        notes(&response).contains(&"cache_write_failed".to_owned()),
        "{response}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cache_write_failed"), "{stderr}");
    assert_eq!(
        assert_whole_entries(cache.path()),
        before,
        "nothing written"
    );
    // A hit still serves from the read-only cache (its rewrite of
    // last_accessed_at fails, which costs LRU precision only).
    let output = run(in_namespace(READ_ONLY, cache.path(), &p0, config.path())).await;
    succeeded(&output);
    assert_eq!(
        crate::support::hits(&server, "/p0").await,
        1,
        "p0 was a hit"
    );

    // Writable again: the next miss is cached.
    let response = succeeded(&run(cli(&p1, config.path())).await);
    assert!(!notes(&response).contains(&"cache_write_failed".to_owned()));
    assert_eq!(assert_whole_entries(cache.path()).0, 2);
    succeeded(&run(cli(&p1, config.path())).await);
    assert_eq!(
        crate::support::hits(&server, "/p1").await,
        2,
        "p1 is now a hit"
    );
}

#[tokio::test]
async fn full_disk_fetch_succeeds_warns_leaves_nothing_partial_and_recovers() {
    if !namespaces_available() {
        return;
    }
    let server = pages_site(0..2).await;
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let config = cli_config(server.address().port(), cache.path(), 100, 1 << 30);
    // One namespace, one small tmpfs over the cache dir for the whole scenario:
    // write p0 with room, fill the disk, fetch p1, copy what a reader would see,
    // free the space, fetch p1 twice more. The tmpfs is mode 0700: its default,
    // 1777, is a directory others can write to, which the cache refuses.
    let script = r#"set -e
mount -t tmpfs -o size=256k,mode=0700 tmpfs "$D"
run() { n=$1; shift; "$W" fetch "$@" --config "$C" >"$O/$n.json" 2>"$O/$n.err" || echo $? >"$O/$n.rc"; }
run 0 "$P0"
dd if=/dev/zero of="$D/filler" bs=4096 2>/dev/null || true
run 1 "$P1"
run 2 "$P0"
mkdir "$O/full"; cp -a "$D/." "$O/full/"
rm "$D/filler"
run 3 "$P1"
run 4 "$P1"
mkdir "$O/after"; cp -a "$D/." "$O/after/""#;
    let mut command = Command::new("unshare");
    command
        .args(["-rm", "sh", "-c", script])
        .env("D", cache.path())
        .env("O", out.path())
        .env("W", env!("CARGO_BIN_EXE_webfetch"))
        .env("C", config.path())
        .env("P0", page_url(&server, 0))
        .env("P1", page_url(&server, 1))
        .env_remove("RUST_LOG");
    let status = run(command).await;
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let read = |name: &str| std::fs::read_to_string(out.path().join(name)).unwrap_or_default();
    for n in 0..5 {
        assert!(
            !out.path().join(format!("{n}.rc")).exists(),
            "call {n} failed: {}",
            read(&format!("{n}.err"))
        );
    }
    let response =
        |n: usize| -> Value { serde_json::from_str(read(&format!("{n}.json")).trim()).unwrap() };
    // Disk full: the fetch succeeds, says so, and warns.
    assert!(notes(&response(1)).contains(&"cache_write_failed".to_owned()));
    assert!(
        read("1.err").contains("cache_write_failed"),
        "{}",
        read("1.err")
    );
    // Nothing partial: the filler aside, only p0's whole entry.
    std::fs::remove_file(out.path().join("full/filler")).unwrap();
    assert_eq!(assert_whole_entries(&out.path().join("full")).0, 1);
    // p0 stayed a hit on the full disk; p1 was fetched again once space returned,
    // then served from the cache.
    assert_eq!(crate::support::hits(&server, "/p0").await, 1);
    assert!(!notes(&response(3)).contains(&"cache_write_failed".to_owned()));
    assert_eq!(
        crate::support::hits(&server, "/p1").await,
        2,
        "p1: full, then cached"
    );
    assert_eq!(assert_whole_entries(&out.path().join("after")).0, 2);
}

/// The temp files (`*.tmp.*`) under `dir`.
fn temp_files(dir: &Path) -> Vec<String> {
    cache_files(dir)
        .into_iter()
        .filter(|f| f.contains(".tmp."))
        .collect()
}

/// Runs `webfetch fetch --no-cache URL` set to SIGKILL itself halfway through its
/// cache write (a debug-build fault hook), and checks that it died so.
async fn killed_mid_write(url: &str, config: &Path) {
    let mut command = cli(url, config);
    command
        .arg("--no-cache")
        .env("WEBFETCH_FAULT", "kill-mid-cache-write");
    let output = run(command).await;
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(9),
        "killed by SIGKILL: {output:?}"
    );
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn sigkill_mid_cache_write_leaves_the_old_entry_and_the_next_writer_cleans_up() {
    let server = pages_site(0..2).await;
    let cache = tempfile::tempdir().unwrap();
    let config = cli_config(server.address().port(), cache.path(), 100, 1 << 30);
    let (p0, p1) = (page_url(&server, 0), page_url(&server, 1));

    // An old entry for p0, then a writer of p0 killed mid-write.
    succeeded(&run(cli(&p0, config.path())).await);
    let entry = cache_files(cache.path());
    let old = std::fs::read(cache.path().join(&entry[0])).unwrap();
    killed_mid_write(&p0, config.path()).await;
    let torn = temp_files(cache.path());
    assert_eq!(
        torn.len(),
        1,
        "the killed writer's temp file: {:?}",
        cache_files(cache.path())
    );
    let partial = std::fs::read(cache.path().join(&torn[0])).unwrap();
    assert!(
        !partial.is_empty() && serde_json::from_slice::<Value>(&partial).is_err(),
        "half an entry"
    );
    assert_eq!(
        std::fs::read(cache.path().join(&entry[0])).unwrap(),
        old,
        "the old entry is untouched"
    );

    // The next process reads the old entry: a hit, p0 not fetched again.
    succeeded(&run(cli(&p0, config.path())).await);
    assert_eq!(
        crate::support::hits(&server, "/p0").await,
        2,
        "the first fetch and the killed one"
    );

    // A writer killed on a key that had no entry leaves none: the next reader
    // misses. That second writer, on taking the ledger lock, deleted the first
    // killed writer's temp file, which the ledger named.
    killed_mid_write(&p1, config.path()).await;
    let second = temp_files(cache.path());
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second, torn, "the first temp file is gone");
    let response = succeeded(&run(cli(&p1, config.path())).await);
    assert!(
        response["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Page 1")
    );
    assert_eq!(
        crate::support::hits(&server, "/p1").await,
        2,
        "a miss, fetched again"
    );

    // The writer of that miss deleted the second temp file: nothing stray is left,
    // and both entries are whole.
    assert_eq!(temp_files(cache.path()), Vec::<String>::new());
    assert_eq!(assert_whole_entries(cache.path()).0, 2);
}

#[tokio::test]
async fn eight_cli_processes_fetching_and_evicting_at_once_keep_both_limits() {
    const MAX_ENTRIES: u32 = 4;
    // The smallest byte limit a config may set (SRD 5.4 clamps below 1 MiB).
    const MAX_BYTES: u64 = 1 << 20;
    // Pages of 38 KB to 475 KB of text: four small ones fit the byte limit, so the
    // entry limit binds; four large ones do not, so the byte limit binds.
    let sentences = |n: u32| 1_000 + (n as usize % 6) * 2_300;
    let text_bytes = |n: u32| (sentence(n).len() * sentences(n)) as u64;
    let mut sizes: Vec<u64> = (0..12).map(text_bytes).collect();
    sizes.sort_unstable();
    assert!(sizes[..4].iter().sum::<u64>() < MAX_BYTES, "small pages");
    assert!(sizes[8..].iter().sum::<u64>() > MAX_BYTES, "large pages");
    let server = sized_pages_site(0..12, sentences).await;
    let cache = tempfile::tempdir().unwrap();
    let config = cli_config(
        server.address().port(),
        cache.path(),
        MAX_ENTRIES,
        MAX_BYTES,
    );
    for round in 0..5u32 {
        // Eight processes at once; processes 2k and 2k+1 fetch the same page.
        let children: Vec<_> = (0..8u32)
            .map(|i| {
                let url = page_url(&server, ((i / 2) * 5 + round * 3) % 12);
                let mut command = cli(&url, config.path());
                command
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                command.spawn().expect("the binary runs")
            })
            .collect();
        let outputs = tokio::task::spawn_blocking(move || {
            children
                .into_iter()
                .map(|c| c.wait_with_output().unwrap())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap();
        for output in &outputs {
            let response = succeeded(output);
            assert!(
                response["chunks"].to_string().contains("Sentence"),
                "{response}"
            );
        }
    }
    let (entries, bytes) = assert_whole_entries(cache.path());
    assert!(
        entries >= 1 && entries <= MAX_ENTRIES as usize,
        "{entries} entries"
    );
    assert!(bytes <= MAX_BYTES, "{bytes} bytes");
    assert_eq!(temp_files(cache.path()), Vec::<String>::new());

    // Every entry left is served as a hit.
    for name in cache_files(cache.path()) {
        let entry: Value =
            serde_json::from_slice(&std::fs::read(cache.path().join(&name)).unwrap()).unwrap();
        let url = entry["canonical_url"].as_str().unwrap().to_owned();
        let path = url.rsplit_once('/').map(|(_, p)| format!("/{p}")).unwrap();
        let before = crate::support::hits(&server, &path).await;
        succeeded(&run(cli(&url, config.path())).await);
        assert_eq!(
            crate::support::hits(&server, &path).await,
            before,
            "{url} was a hit"
        );
    }
}
