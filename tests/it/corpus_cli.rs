//! The real `webfetch fetch` binary against every page of the article-extraction
//! corpus (`../shared/corpus/article-extraction/html/*.html.gz`), served from one
//! local wiremock: "returns valid JSON for every page". Each run must exit 0 and
//! print exactly one line of JSON with at least one chunk.
//!
//! Processes run a few at a time, bounded by the machine's parallelism. All share one
//! cache directory, as concurrent agents on one machine would. Skips with a message
//! when the corpus is absent (`WEBFETCH_CORPUS_DIR` points elsewhere).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::Value;
use wiremock::MockServer;
use wiremock::ResponseTemplate;

use crate::support::deadline::{OutputWithin as _, WAIT};
use crate::support::{Config, serve};

/// At most this many `webfetch` processes at once.
const MAX_CONCURRENT: usize = 4;

/// The corpus root: `WEBFETCH_CORPUS_DIR`, else `shared/` next to the checkout (the
/// main tree) or two levels up (a worktree under `wt/`).
fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WEBFETCH_CORPUS_DIR") {
        return Some(PathBuf::from(dir));
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "../shared/corpus/article-extraction",
        "../../shared/corpus/article-extraction",
    ]
    .iter()
    .map(|relative| manifest.join(relative))
    .find(|dir| dir.join("html").is_dir())
}

/// `(name, html bytes)` of every page, sorted by name.
fn pages(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir.join("html")).expect("the corpus html dir is readable") {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".html.gz"))
        else {
            continue;
        };
        let compressed = std::fs::read(&path).expect("a corpus file is readable");
        let mut html = Vec::new();
        flate2::read::GzDecoder::new(compressed.as_slice())
            .read_to_end(&mut html)
            .expect("a corpus file is gzip");
        pages.push((name.to_owned(), html));
    }
    pages.sort();
    pages
}

/// What is wrong with one run, if anything.
fn check(url: &str, output: &std::process::Output) -> Result<usize, String> {
    let stdout = String::from_utf8(output.stdout.clone()).map_err(|e| format!("stdout: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() != Some(0) {
        return Err(format!(
            "exit {:?}; stdout {stdout}; stderr {stderr}",
            output.status.code()
        ));
    }
    if stdout.matches('\n').count() != 1 || !stdout.ends_with('\n') {
        return Err(format!("not exactly one line: {stdout:?}"));
    }
    let response: Value =
        serde_json::from_str(stdout.trim_end()).map_err(|e| format!("not JSON ({e})"))?;
    if response["requested_url"] != url || response["final_url"] != url {
        return Err(format!("unexpected URLs: {stdout}"));
    }
    if response["rendering_method"] != "http" {
        return Err(format!(
            "rendering_method: {}",
            response["rendering_method"]
        ));
    }
    let chunks = response["chunks"].as_array().ok_or("no chunks array")?;
    if chunks.is_empty() {
        return Err("no chunk".to_owned());
    }
    for chunk in chunks {
        let fits = chunk["token_count"].as_u64().is_some_and(|n| n <= 600);
        if !fits || !chunk["text"].is_string() || !chunk["heading"].is_string() {
            return Err(format!("bad chunk: {chunk}"));
        }
    }
    Ok(chunks.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_wf_cli_every_corpus_page_returns_valid_json() {
    let Some(dir) = corpus_dir() else {
        println!("SKIPPED: the article-extraction corpus is absent (set WEBFETCH_CORPUS_DIR)");
        return;
    };
    let pages = pages(&dir);
    assert!(!pages.is_empty(), "no *.html.gz in {}", dir.display());

    let server = MockServer::start().await;
    for (name, html) in &pages {
        // No charset parameter: the page's own <meta> (or the fallback) decides.
        serve(
            &server,
            &format!("/{name}.html"),
            ResponseTemplate::new(200).set_body_raw(html.clone(), "text/html"),
        )
        .await;
    }
    let port = server.address().port();
    let cache = tempfile::tempdir().unwrap();
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config
        .write_all(Config::new(&[port]).cache(cache.path()).toml().as_bytes())
        .unwrap();
    let config_path = config.path().to_path_buf();

    let started = Instant::now();
    let names: Vec<String> = pages.iter().map(|(name, _)| name.clone()).collect();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, MAX_CONCURRENT);
    let (failures, chunks) = tokio::task::spawn_blocking(move || {
        let next = AtomicUsize::new(0);
        let failures = Mutex::new(Vec::new());
        let chunks = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(name) = names.get(i) else { break };
                        let url = format!("http://127.0.0.1:{port}/{name}.html");
                        let output = Command::new(env!("CARGO_BIN_EXE_webfetch"))
                            .args(["fetch", &url, "--config"])
                            .arg(&config_path)
                            .env_remove("RUST_LOG")
                            .output_within(WAIT, &format!("webfetch fetch {url}"));
                        match check(&url, &output) {
                            Ok(n) => {
                                chunks.fetch_add(n, Ordering::Relaxed);
                            }
                            Err(why) => failures.lock().unwrap().push(format!("{name}: {why}")),
                        }
                    }
                });
            }
        });
        (failures.into_inner().unwrap(), chunks.into_inner())
    })
    .await
    .unwrap();
    println!(
        "{} pages, {chunks} chunks, {workers} processes at a time, {:.1?}",
        pages.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} pages failed:\n{}",
        failures.len(),
        pages.len(),
        failures.join("\n")
    );
    // Every page was fetched once (robots.txt aside) and cached.
    assert_eq!(crate::support::json_files(cache.path()).len(), pages.len());
}
