//! The CLI contract: one JSON object on stdout; exit 0 success, 2 tool error (envelope
//! on stdout), 1 configuration or usage error (message on stderr, nothing on stdout).
//! Also the extensions: `fetch --extraction` against a loopback server, and the
//! offline `extract` command.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use wiremock::MockServer;

use crate::support::{Config, html, serve};

fn webfetch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

/// Runs the binary with `input` on its stdin.
fn webfetch_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("a stdin pipe");
    stdin.write_all(input).unwrap();
    drop(stdin);
    child.wait_with_output().expect("the binary finishes")
}

/// [`webfetch`] off the async runtime, so the wiremock server it talks to keeps
/// serving.
async fn webfetch_async(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        webfetch(&args)
    })
    .await
    .unwrap()
}

fn stdout_json(output: &Output) -> serde_json::Value {
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(
        text.matches('\n').count(),
        1,
        "exactly one line on stdout: {text:?}"
    );
    serde_json::from_str(text.trim_end()).unwrap()
}

#[test]
fn tool_errors_print_the_envelope_and_exit_2() {
    for (url, code) in [
        ("ftp://example.com/", "invalid_scheme"),
        ("http://0x7f000001/", "invalid_host"),
        ("http://169.254.169.254/latest/meta-data/", "ssrf_blocked"),
        ("http://example.com:8080/", "port_blocked"),
        ("   ", "bad_args"),
    ] {
        let output = webfetch(&["fetch", url]);
        assert_eq!(output.status.code(), Some(2), "{url}");
        let envelope = stdout_json(&output);
        assert_eq!(envelope["code"], code, "{url}");
        assert!(envelope["message"].is_string() && envelope["retryable"].is_boolean());
        assert!(envelope["details"].is_object());
    }
}

#[test]
fn a_rule_breaking_value_is_bad_args_not_a_usage_error() {
    let output = webfetch(&[
        "fetch",
        "https://example.com/",
        "--max-chunk-tokens",
        "5000",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["details"]["field"], "max_chunk_tokens");
}

#[test]
fn usage_errors_exit_1_with_nothing_on_stdout() {
    for args in [
        vec!["fetch"],
        vec![
            "fetch",
            "https://example.com/",
            "--max-chunk-tokens",
            "many",
        ],
        vec!["fetch", "https://example.com/", "--bogus"],
        vec!["frobnicate"],
    ] {
        let output = webfetch(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!output.stderr.is_empty());
    }
}

#[test]
fn config_errors_exit_1_with_the_srd_message_on_stderr() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(file, "[tools.webfetch.security]\nblock_private_ips = false").unwrap();
    let output = webfetch(&[
        "fetch",
        "https://example.com/",
        "--config",
        file.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("SSRF protection cannot be disabled without allow_insecure_overrides=true"),
        "{stderr}"
    );
    let missing = webfetch(&[
        "fetch",
        "https://example.com/",
        "--config",
        "/nonexistent/webfetch.toml",
    ]);
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn pretty_output_keeps_field_order() {
    let output = webfetch(&["fetch", "gopher://x/", "--pretty"]);
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stdout).unwrap();
    let code = text.find("\"code\"").unwrap();
    let message = text.find("\"message\"").unwrap();
    let details = text.find("\"details\"").unwrap();
    assert!(code < message && message < details, "{text}");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["details"]["scheme"], "gopher");
}

// ---------------------------------------------------------------- extension: extraction

/// A page on which a scoring (article) extractor finds no main content: a body of
/// two words. Article mode falls back to SRD with the `article_fallback_srd` note,
/// with today's stub and the real algorithm alike.
const TINY: &str = "<html><head><title>Tiny</title></head><body><p>Two words.</p></body></html>";

/// A page with a title, a language and relative links.
const POST: &str = r#"<!DOCTYPE html><html lang="en"><head><title>A post</title></head>
<body><nav><a href="/">Home</a></nav><main><h1>A post</h1>
<p>Read <a href="../guide#install">the guide</a> and see <img src="img/d.png" alt="D">.</p>
</main><footer>Footer</footer></body></html>"#;

/// A config file allowing loopback on `port`, caching off.
fn config_file(port: u16) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(Config::new(&[port]).toml().as_bytes())
        .unwrap();
    file
}

fn notes(response: &Value) -> &Value {
    &response["notes"]
}

/// `response` without `fetched_at`, which differs between two runs.
fn timeless(mut response: Value) -> Value {
    response.as_object_mut().unwrap().remove("fetched_at");
    response
}

fn saved(html: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(html).unwrap();
    file
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ext_fetch_extraction_flag_selects_the_mode() {
    let server = MockServer::start().await;
    serve(&server, "/tiny", html(TINY)).await;
    let port = server.address().port();
    let config = config_file(port);
    let url = format!("http://127.0.0.1:{port}/tiny");
    let run = |extra: &[&str]| {
        let mut args = vec!["fetch".to_owned(), url.clone(), "--config".to_owned()];
        args.push(path_str(config.path()).to_owned());
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        webfetch_async(args)
    };

    let plain = run(&[]).await;
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    let plain = stdout_json(&plain);
    assert_eq!(notes(&plain), &json!([]));
    let srd = run(&["--extraction", "srd"]).await;
    assert_eq!(timeless(stdout_json(&srd)), timeless(plain.clone()));
    let article = run(&["--extraction", "article"]).await;
    assert_eq!(article.status.code(), Some(0), "{article:?}");
    let article = stdout_json(&article);
    assert_eq!(notes(&article), &json!(["article_fallback_srd"]));
    assert_eq!(article["chunks"], plain["chunks"]);

    let bogus = run(&["--extraction", "summary"]).await;
    assert_eq!(bogus.status.code(), Some(1));
    assert!(bogus.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&bogus.stderr);
    assert!(
        stderr.contains("srd") && stderr.contains("article"),
        "{stderr}"
    );
}

/// `extract` gives exactly what `fetch` gives for the same bytes from the same URL,
/// `fetched_at` aside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ext_extract_html_file_matches_a_fetch_of_the_page() {
    let server = MockServer::start().await;
    serve(&server, "/blog/post", html(POST)).await;
    let port = server.address().port();
    let config = config_file(port);
    let url = format!("http://127.0.0.1:{port}/blog/post");
    let fetched = webfetch_async(vec![
        "fetch".into(),
        url.clone(),
        "--config".into(),
        path_str(config.path()).into(),
        "--max-chunk-tokens".into(),
        "128".into(),
    ])
    .await;
    assert_eq!(fetched.status.code(), Some(0), "{fetched:?}");
    let fetched = stdout_json(&fetched);

    let page = saved(POST.as_bytes());
    let extracted = webfetch(&[
        "extract",
        path_str(page.path()),
        "--base-url",
        &url,
        "--max-chunk-tokens",
        "128",
        "--content-type",
        "text/html; charset=utf-8",
    ]);
    assert_eq!(extracted.status.code(), Some(0), "{extracted:?}");
    let extracted = stdout_json(&extracted);
    assert!(extracted["fetched_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(timeless(extracted.clone()), timeless(fetched));
    assert_eq!(extracted["rendering_method"], "http");
    assert_eq!(extracted["title"], "A post");
    assert_eq!(extracted["language"], "en");
    let text = extracted["chunks"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("http://127.0.0.1:{port}/guide#install")),
        "{text}"
    );
}

#[test]
fn ext_extract_canonicalises_the_base_url_and_reads_stdin() {
    let base = "HTTPS://Example.COM:443/a/./b/../post#top";
    let from_file = {
        let page = saved(POST.as_bytes());
        webfetch(&["extract", path_str(page.path()), "--base-url", base])
    };
    assert_eq!(from_file.status.code(), Some(0), "{from_file:?}");
    let from_file = stdout_json(&from_file);
    assert_eq!(from_file["requested_url"], base);
    assert_eq!(from_file["final_url"], "https://example.com/a/post");
    let text = from_file["chunks"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("(https://example.com/guide#install)"),
        "{text}"
    );
    assert!(text.contains("(https://example.com/a/img/d.png)"), "{text}");
    // The default `text/html` declares no charset, nor does the page: UTF-8 with
    // the note, by the rules of a fetch.
    assert_eq!(notes(&from_file), &json!(["charset_fallback"]));

    for args in [
        vec!["extract", "-", "--base-url", base],
        vec!["extract", "--base-url", base],
    ] {
        let output = webfetch_with_stdin(&args, POST.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{args:?} {output:?}");
        assert_eq!(
            timeless(stdout_json(&output)),
            timeless(from_file.clone()),
            "{args:?}"
        );
    }
}

#[test]
fn ext_extract_text_plain_follows_the_charset_rules() {
    let base = "https://example.com/notes.txt";
    let latin1 = webfetch_with_stdin(
        &[
            "extract",
            "--base-url",
            base,
            "--content-type",
            "text/plain; charset=windows-1252",
        ],
        b"Caf\xe9   cr\xe8me\r\n",
    );
    assert_eq!(latin1.status.code(), Some(0), "{latin1:?}");
    let latin1 = stdout_json(&latin1);
    assert_eq!(latin1["chunks"][0]["text"], "Caf\u{e9}   cr\u{e8}me");
    assert_eq!(notes(&latin1), &json!([]));
    assert!(latin1.get("title").is_none());

    // No declared charset: UTF-8 with replacement, and the note (SRD-READINGS 12).
    let bare = webfetch_with_stdin(
        &[
            "extract",
            "--base-url",
            base,
            "--content-type",
            "text/plain",
        ],
        b"caf\xc3\xa9 \xff",
    );
    let bare = stdout_json(&bare);
    assert_eq!(bare["chunks"][0]["text"], "caf\u{e9} \u{fffd}");
    assert_eq!(notes(&bare), &json!(["charset_fallback"]));
    // text/plain is the same in article mode: no fallback note.
    let article = webfetch_with_stdin(
        &[
            "extract",
            "--base-url",
            base,
            "--content-type",
            "text/plain; charset=utf-8",
            "--extraction",
            "article",
        ],
        b"just text",
    );
    assert_eq!(notes(&stdout_json(&article)), &json!([]));
}

#[test]
fn ext_extract_article_flag_falls_back_with_the_note() {
    let page = saved(TINY.as_bytes());
    let base = "https://example.com/tiny";
    let utf8 = "text/html; charset=utf-8";
    let srd = webfetch(&[
        "extract",
        path_str(page.path()),
        "--base-url",
        base,
        "--content-type",
        utf8,
    ]);
    let srd = stdout_json(&srd);
    assert_eq!(notes(&srd), &json!([]));
    let article = webfetch(&[
        "extract",
        path_str(page.path()),
        "--base-url",
        base,
        "--content-type",
        utf8,
        "--extraction",
        "article",
    ]);
    assert_eq!(article.status.code(), Some(0), "{article:?}");
    let article = stdout_json(&article);
    assert_eq!(notes(&article), &json!(["article_fallback_srd"]));
    assert_eq!(article["chunks"], srd["chunks"]);
}

#[test]
fn ext_extract_tool_errors_are_envelopes_with_exit_2() {
    let page = saved(POST.as_bytes());
    let file = path_str(page.path());
    let base = "https://example.com/post";
    let cases: [(&[&str], &str); 3] = [
        (
            &["--content-type", "application/pdf"],
            "unsupported_content_type",
        ),
        (&["--max-chunk-tokens", "5000"], "bad_args"),
        (&["--max-output-bytes", "50"], "internal"),
    ];
    for (extra, code) in cases {
        let mut args = vec!["extract", file, "--base-url", base];
        args.extend_from_slice(extra);
        let output = webfetch(&args);
        assert_eq!(output.status.code(), Some(2), "{extra:?}");
        assert_eq!(stdout_json(&output)["code"], code, "{extra:?}");
    }
    let pdf = webfetch(&[
        "extract",
        file,
        "--base-url",
        base,
        "--content-type",
        "application/pdf",
    ]);
    assert_eq!(
        stdout_json(&pdf)["details"]["content_type"],
        "application/pdf"
    );
    // An empty page has nothing to extract, as over HTTP.
    let blank = webfetch_with_stdin(&["extract", "--base-url", base], b"  \n");
    assert_eq!(blank.status.code(), Some(2));
    assert_eq!(stdout_json(&blank)["code"], "extraction_failed");
    // A page over max_download_bytes is refused as a fetched one would be.
    let mut small = tempfile::NamedTempFile::new().unwrap();
    small
        .write_all(b"[tools.webfetch]\nmax_download_bytes = 1024\n")
        .unwrap();
    let big = format!("<p>{}</p>", "x".repeat(2000));
    let config = path_str(small.path());
    let too_large = webfetch_with_stdin(
        &["extract", "--base-url", base, "--config", config],
        big.as_bytes(),
    );
    assert_eq!(too_large.status.code(), Some(2));
    let envelope = stdout_json(&too_large);
    assert_eq!(envelope["code"], "response_too_large");
    assert_eq!(envelope["details"]["max_bytes"], 1024);
    assert_eq!(envelope["details"]["size"], 1025);
}

#[test]
fn ext_extract_usage_errors_exit_1_with_nothing_on_stdout() {
    let page = saved(POST.as_bytes());
    let file = path_str(page.path());
    for (args, says) in [
        (
            vec!["extract", file, "--base-url", "ftp://example.com/x"],
            "--base-url",
        ),
        (
            vec!["extract", file, "--base-url", "not a url"],
            "--base-url",
        ),
        (vec!["extract", file, "--base-url", ""], "--base-url"),
        (vec!["extract", file], "--base-url"),
        (
            vec![
                "extract",
                "/nonexistent/page.html",
                "--base-url",
                "https://example.com/",
            ],
            "/nonexistent/page.html",
        ),
        (
            vec![
                "extract",
                file,
                "--base-url",
                "https://example.com/",
                "--extraction",
                "x",
            ],
            "--extraction",
        ),
    ] {
        let output = webfetch(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `--start-chunk` on the CLI; the response says `next_start_chunk`
/// when the output budget cut it, and only when the flag was given.
#[test]
fn ext_start_chunk_flag_reads_on_from_a_chunk() {
    let paragraphs: String = (0..12)
        .map(|i| {
            format!(
                "<p>Paragraph {i} {}</p>",
                "words of a long page to split into chunks ".repeat(20)
            )
        })
        .collect();
    let page =
        saved(format!("<html><body><article>{paragraphs}</article></body></html>").as_bytes());
    let base = "https://example.com/long";
    let run = |extra: &[&str]| {
        let mut args = vec!["extract", path_str(page.path()), "--base-url", base];
        args.extend_from_slice(&["--max-chunk-tokens", "128", "--max-output-bytes", "3000"]);
        args.extend_from_slice(extra);
        stdout_json(&webfetch(&args))
    };
    let first = run(&[]);
    assert_eq!(first["truncated"], true);
    assert!(
        first.get("next_start_chunk").is_none(),
        "SRD shape without the flag"
    );
    let shown = first["chunks"].as_array().unwrap().len();
    let window = run(&["--start-chunk", "0"]);
    assert_eq!(window["next_start_chunk"], shown);
    let next = run(&["--start-chunk", &shown.to_string()]);
    let all = stdout_json(&webfetch(&[
        "extract",
        path_str(page.path()),
        "--base-url",
        base,
        "--max-chunk-tokens",
        "128",
    ]));
    assert_eq!(next["chunks"][0], all["chunks"][shown], "{next}");
    let past = webfetch(&[
        "extract",
        path_str(page.path()),
        "--base-url",
        base,
        "--start-chunk",
        "999",
    ]);
    assert_eq!(past.status.code(), Some(2));
    assert_eq!(stdout_json(&past)["code"], "bad_args");
}

#[test]
fn extract_reads_a_saved_pdf_only_when_pdf_is_enabled() {
    // Longer than max_download_bytes (1024 below): a PDF is read to its own cap.
    let filler = "More of the saved report, line after line.";
    let mut lines = vec![("Saved report text.", 72.0, 700.0, 12.0)];
    lines.extend((1..40).map(|i| (filler, 72.0, 700.0 - 14.0 * i as f32, 12.0)));
    let bytes = crate::support::pdf(&[lines], Some("Saved"), "");
    assert!(bytes.len() > 2048);
    let file = saved(&bytes);
    let args = |config: Option<&str>| {
        let mut args = vec![
            "extract".to_owned(),
            path_str(file.path()).to_owned(),
            "--base-url".to_owned(),
            "https://example.com/r.pdf".to_owned(),
            "--content-type".to_owned(),
            "application/pdf".to_owned(),
        ];
        if let Some(config) = config {
            args.extend(["--config".to_owned(), config.to_owned()]);
        }
        args
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        webfetch(&args)
    };
    // The SRD contract: no format unless the config names it.
    let refused = run(args(None));
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert_eq!(stdout_json(&refused)["code"], "unsupported_content_type");
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config
        .write_all(
            b"[tools.webfetch]\nmax_download_bytes = 1024\n\
              [tools.webfetch.content]\nformats = [\"pdf\"]\n",
        )
        .unwrap();
    let read = run(args(Some(path_str(config.path()))));
    assert_eq!(read.status.code(), Some(0), "{read:?}");
    let read = stdout_json(&read);
    assert_eq!(read["title"], "Saved");
    let text = read["chunks"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Saved report text. More of the saved report"),
        "{text}"
    );
    assert_eq!(text.matches(filler).count(), 39, "{text}");
    assert_eq!(notes(&read), &json!([]));
}

/// `webfetch fetch` with several URLs: one JSON object per line, in the order
/// given (a response or an error envelope each); exit 2 when any is an error,
/// 0 when none is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_with_several_urls_prints_one_line_each_in_order() {
    let server = MockServer::start().await;
    serve(&server, "/one", html("<p>First page.</p>")).await;
    serve(&server, "/two", html("<p>Second page.</p>")).await;
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config
        .write_all(Config::new(&[server.address().port()]).toml().as_bytes())
        .unwrap();
    let site = |path: &str| format!("http://127.0.0.1:{}{path}", server.address().port());
    let config_path = config.path().to_str().unwrap().to_owned();
    let args = |urls: &[String]| {
        let mut args = vec![
            "fetch".to_owned(),
            "--config".to_owned(),
            config_path.clone(),
        ];
        args.extend(urls.iter().cloned());
        args
    };
    let urls = [
        site("/two"),
        "http://169.254.169.254/".to_owned(),
        site("/one"),
    ];
    let output = webfetch_async(args(&urls)).await;
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["requested_url"], json!(urls[0]));
    assert!(
        lines[0]["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Second page.")
    );
    assert_eq!(lines[1]["code"], "ssrf_blocked");
    assert_eq!(lines[2]["requested_url"], json!(urls[2]));

    let output = webfetch_async(args(&[site("/one"), site("/two")])).await;
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap().lines().count(), 2);
}
