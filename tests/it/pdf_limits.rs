//! A hostile PDF costs one call, never the process. Each hostile
//! input, generated (`support/hostile_pdfs.rs`), goes through the real binary
//! (`webfetch extract`, which reads PDFs in a worker process) with a 3 s
//! timeout: the answer is Markdown or a PDF error, the peak memory of the
//! process and its worker stays under 256 MiB, and the answer comes long before
//! an unbounded reader would give one. The library's in-process reader keeps the
//! same parser bounds; a worker killed by a limit fails its call alone; the
//! worker answers what in-process reading answers.

use std::io::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use webfetch::internals::content::pdf::{Limits, read};
use webfetch::{ArgsSchema, FetchArgs, PdfWorker, SavedPage, WebFetchTool};

use crate::support::child_cost;
use crate::support::hostile_pdfs as hostile;

/// What every run may take at most: an unbounded reader takes minutes or dies.
const WALL: Duration = Duration::from_secs(60);
const PEAK_MIB: f64 = 256.0;

fn config(timeout_seconds: u32) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    write!(
        file,
        "[tools.webfetch]\ntimeout_seconds = {timeout_seconds}\n\
         [tools.webfetch.content]\nformats = [\"pdf\"]\n"
    )
    .unwrap();
    file
}

/// `webfetch extract` of `bytes` as a PDF: what it cost and its JSON.
fn extract(name: &str, bytes: &[u8]) -> (child_cost::ChildCost, Value) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let config = config(3);
    let mut command = Command::new(env!("CARGO_BIN_EXE_webfetch"));
    command
        .arg("extract")
        .arg(file.path())
        .args(["--base-url", "https://example.com/hostile.pdf"])
        .args(["--content-type", "application/pdf", "--config"])
        .arg(config.path());
    let cost = child_cost::run(command, b"", WALL * 2);
    assert!(
        !cost.killed,
        "{name}: still running after {WALL:?}: {cost:?}"
    );
    let json: Value = serde_json::from_str(cost.stdout.trim())
        .unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {}", cost.stderr));
    (cost, json)
}

/// Runs one hostile input through the binary and checks it cost one call.
fn costs_one_call(name: &str, bytes: &[u8]) -> Value {
    let (cost, json) = extract(name, bytes);
    assert!(
        cost.peak_mib <= PEAK_MIB,
        "{name}: peak {:.0} MiB: {cost:?}",
        cost.peak_mib
    );
    assert!(cost.wall <= WALL, "{name}: {:?}", cost.wall);
    // CPU time (the process and its worker) no more than the wall time allows
    // two cores: nothing burns on unseen.
    assert!(cost.cpu <= WALL * 2, "{name}: {:?} of CPU", cost.cpu);
    match cost.code {
        Some(0) => assert!(json["chunks"].is_array(), "{name}: {json}"),
        Some(2) => {
            let reason = json["details"]["reason"].as_str().unwrap_or_default();
            let known = json["code"] == "timeout"
                || (json["code"] == "extraction_failed" && reason.starts_with("pdf_"));
            assert!(known, "{name}: {json}");
        }
        other => panic!("{name}: exit {other:?}: {cost:?}"),
    }
    json
}

fn reason(json: &Value) -> &str {
    json["details"]["reason"].as_str().unwrap_or_default()
}

fn text(json: &Value) -> String {
    json["chunks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|chunk| chunk["text"].as_str())
        .collect()
}

#[test]
fn an_object_stream_listing_one_offset_64_times_is_read_once_and_refused() {
    for (name, bytes) in [
        (
            "same offset 64",
            hostile::object_stream_same_offset(64, 4_000_000),
        ),
        (
            "same offset 4",
            hostile::object_stream_same_offset(4, 4_000_000),
        ),
        (
            "same offset 64, encrypted",
            hostile::object_stream_same_offset_encrypted(64, 4_000_000),
        ),
        (
            "same offset 64, through a /Length",
            hostile::object_stream_via_length(64, 4_000_000),
        ),
    ] {
        assert!(bytes.len() < 16 * 1024, "{name}: {} bytes", bytes.len());
        let json = costs_one_call(name, &bytes);
        assert_eq!(reason(&json), "pdf_resource_limit", "{name}: {json}");
    }
}

#[test]
fn a_30_mb_array_of_small_numbers_stops_at_the_workers_memory_limit() {
    let json = costs_one_call("raw array", &hostile::raw_array(30_000_000));
    assert_eq!(reason(&json), "pdf_resource_limit", "{json}");
}

#[test]
fn a_form_painted_thousands_of_times_is_inflated_once() {
    for paints in [300, 2000] {
        let name = format!("{paints} paints");
        let json = costs_one_call(&name, &hostile::form_painted(paints, 64 << 20));
        if json["code"].is_null() {
            assert!(
                text(&json).contains("Hello hostile world"),
                "{name}: {json}"
            );
        }
    }
}

#[test]
fn an_inline_font_selected_200_times_is_loaded_once() {
    let json = costs_one_call("inline font", &hostile::inline_font(200));
    assert!(text(&json).contains("Hello hostile world"), "{json}");
}

#[test]
fn forms_nested_8_deep_hold_a_bounded_amount_at_once() {
    let json = costs_one_call("nested forms", &hostile::nested_forms(8, 64 << 20));
    if json["code"].is_null() {
        assert!(text(&json).contains("Hello hostile world"), "{json}");
    }
}

#[test]
fn in_process_reading_keeps_the_same_parser_bounds() {
    // Every input but the raw array, which only a worker's memory cap bounds
    // (lopdf builds one object from it before anything can weigh it).
    for (name, bytes) in hostile::all() {
        if name == "raw_array_30mb" {
            continue;
        }
        let started = Instant::now();
        match read(&bytes, &Limits { max_pages: 20 }) {
            Ok(read) => assert!(
                read.document.markdown.contains("Hello hostile world"),
                "{name}: {}",
                read.document.markdown
            ),
            Err(error) => assert_eq!(
                error.details_json()["reason"],
                "pdf_resource_limit",
                "{name}: {error:?}"
            ),
        }
        assert!(started.elapsed() < WALL, "{name}: {:?}", started.elapsed());
    }
    // The same attacks a thousand times smaller (the fuzz seeds) read as any
    // PDF does: Markdown or a PDF reason (a page whose length is an array has
    // no text, as before).
    for (name, bytes) in hostile::small() {
        if let Err(error) = read(&bytes, &Limits { max_pages: 20 }) {
            let reason = error.details_json()["reason"].clone();
            assert!(
                reason.as_str().is_some_and(|r| r.starts_with("pdf_")),
                "{name}: {error:?}"
            );
        }
    }
}

/// A PDF of `pages` pages of text, through the support generator.
fn text_pdf(pages: usize) -> Vec<u8> {
    let line = "A line of a page that a worker and the process read alike.";
    let pages: Vec<Vec<(&str, f32, f32, f32)>> = (0..pages)
        .map(|_| {
            (0..40)
                .map(|i| (line, 72.0, 760.0 - 16.0 * i as f32, 11.0))
                .collect()
        })
        .collect();
    crate::support::pdf(&pages, Some("Alike"), "")
}

fn saved_pdf(bytes: Vec<u8>) -> FetchArgs {
    let mut args = FetchArgs::parse(
        &serde_json::json!({ "url": "https://example.com/doc.pdf" }),
        ArgsSchema::Extended,
    )
    .unwrap();
    args.page = Some(SavedPage {
        body: bytes,
        content_type: Some("application/pdf".to_owned()),
    });
    args
}

fn pdf_settings() -> webfetch::Settings {
    let options = webfetch::LoadOptions::default();
    webfetch::load_str(
        "[tools.webfetch]\ntimeout_seconds = 20\n[tools.webfetch.content]\nformats = [\"pdf\"]\n",
        options,
    )
    .unwrap()
    .settings
}

async fn fetch(tool: &WebFetchTool, bytes: Vec<u8>) -> Result<Value, Value> {
    match tool.fetch(&saved_pdf(bytes), usize::MAX).await {
        Ok(built) => {
            let mut json: Value = serde_json::from_str(&built.json).unwrap();
            json["fetched_at"] = Value::Null;
            Ok(json)
        }
        Err(error) => Err(serde_json::from_str(&error.to_json()).unwrap()),
    }
}

#[tokio::test]
async fn a_worker_killed_by_its_memory_limit_fails_its_call_and_the_next_one_reads() {
    let worker = PdfWorker::new(env!("CARGO_BIN_EXE_webfetch")).memory_limit(48 << 20);
    let tool = WebFetchTool::builder(pdf_settings())
        .pdf_worker(worker)
        .build()
        .unwrap();
    let error = fetch(&tool, hostile::raw_array(8_000_000))
        .await
        .unwrap_err();
    assert_eq!(error["code"], "extraction_failed", "{error}");
    assert_eq!(error["details"]["reason"], "pdf_resource_limit", "{error}");
    let read = fetch(&tool, text_pdf(2)).await.unwrap();
    assert_eq!(read["title"], "Alike");
}

#[tokio::test]
async fn a_worker_that_answers_garbage_or_dies_fails_its_call_alone() {
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o700);
        std::fs::set_permissions(&path, permissions).unwrap();
        path
    };
    for (name, body) in [
        ("garbage", "cat >/dev/null; echo '{\"read\": 12}'"),
        ("dies", "kill -SEGV $$"),
        ("silent", "exit 0"),
    ] {
        let tool = WebFetchTool::builder(pdf_settings())
            .pdf_worker(PdfWorker::new(script(name, body)))
            .build()
            .unwrap();
        let error = fetch(&tool, text_pdf(1)).await.unwrap_err();
        assert_eq!(
            error["details"]["reason"], "pdf_reader_crashed",
            "{name}: {error}"
        );
    }
    // A worker that never answers is killed at the call's deadline.
    let settings = webfetch::load_str(
        "[tools.webfetch]\ntimeout_seconds = 1\n[tools.webfetch.content]\nformats = [\"pdf\"]\n",
        webfetch::LoadOptions::default(),
    )
    .unwrap()
    .settings;
    let tool = WebFetchTool::builder(settings)
        .pdf_worker(PdfWorker::new(script("hangs", "exec sleep 600")))
        .build()
        .unwrap();
    let started = Instant::now();
    let error = fetch(&tool, text_pdf(1)).await.unwrap_err();
    assert_eq!(error["code"], "timeout", "{error}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn the_worker_answers_what_in_process_reading_answers() {
    let in_process = WebFetchTool::new(pdf_settings());
    let in_worker = WebFetchTool::builder(pdf_settings())
        .pdf_worker(PdfWorker::new(env!("CARGO_BIN_EXE_webfetch")))
        .build()
        .unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut inputs = vec![
        ("text, 3 pages", text_pdf(3)),
        ("hostile form", hostile::form_painted(10, 1 << 20)),
        ("not a PDF", b"%PDF-1.7 nothing else".to_vec()),
    ];
    for fixture in [
        "table-two-pages.pdf",
        "encrypted-aes256.pdf",
        "owner-password-only.pdf",
    ] {
        inputs.push((fixture, std::fs::read(fixtures.join(fixture)).unwrap()));
    }
    for (name, bytes) in inputs {
        let here = fetch(&in_process, bytes.clone()).await;
        let there = fetch(&in_worker, bytes).await;
        assert_eq!(here, there, "{name}");
    }
}

/// The peak resident memory of process `pid` so far (`VmHWM`), in MiB.
fn peak_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap();
    kib / 1024.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_reads_the_worst_pdfs_while_healthz_answers_and_lives_on() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let origin = MockServer::start().await;
    for (route, bytes) in [
        ("/array.pdf", hostile::raw_array(30_000_000)),
        (
            "/objstm.pdf",
            hostile::object_stream_same_offset(64, 4_000_000),
        ),
        ("/forms.pdf", hostile::form_painted(2000, 64 << 20)),
        ("/fine.pdf", text_pdf(2)),
    ] {
        Mock::given(method("GET"))
            .and(path(route))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "application/pdf")
                    .set_body_bytes(bytes),
            )
            .mount(&origin)
            .await;
    }
    let port = origin.address().port();
    let config = crate::support::Config::new(&[port]).timeout(5);
    let served = crate::serve::Served::start(&config, &[], &[]);
    let addr = served.addr;
    let url = |route: &str| crate::serve::target(&format!("http://127.0.0.1:{port}{route}"));

    for route in ["/array.pdf", "/objstm.pdf", "/forms.pdf"] {
        let target = url(route);
        let call = tokio::spawn(async move { crate::serve::get(addr, &target).await });
        // The server answers its health check all along: the PDF is read in a
        // worker process, off the server's threads.
        let mut slowest = Duration::ZERO;
        while !call.is_finished() {
            let started = Instant::now();
            let health = crate::serve::get(addr, "/healthz").await;
            slowest = slowest.max(started.elapsed());
            assert_eq!(health.status, 200, "{route}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            slowest < Duration::from_secs(2),
            "{route}: /healthz took {slowest:?}"
        );
        let reply = call.await.unwrap();
        let json = reply.json();
        assert!(
            reply.status == 200 || reason(&json).starts_with("pdf_"),
            "{route}: {} {}",
            reply.status,
            reply.body
        );
    }
    let fine = crate::serve::get(addr, &url("/fine.pdf")).await;
    assert_eq!(fine.status, 200, "{}", fine.body);
    assert_eq!(fine.json()["title"], "Alike");
    let peak = peak_mib(served.child.id());
    assert!(peak <= 512.0, "the server peaked at {peak:.0} MiB");
}
