//! The extension formats (PDF, publisher Markdown, JSON, feeds) against
//! loopback servers: what each reads, its errors, its limits, the `Accept` header,
//! the cache keeping representations apart, and the SRD's answers when they are
//! off.

use serde_json::{Value, json};
use webfetch::Cl100k;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::support::{
    Config, browser_section, browser_turn, chromium, chunk_texts, pdf, plain_chunks, robots, serve,
    site,
};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const ALL: &str = "[tools.webfetch.content]\nformats = [\"pdf\", \"markdown\", \"json\", \"feed\"]";

/// Matches a request whose `Accept` is exactly `value`.
fn accept_is(value: &'static str) -> impl Fn(&Request) -> bool {
    move |request: &Request| request.headers.get("accept").is_some_and(|v| v == value)
}

fn body(bytes: &[u8], content_type: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(bytes.to_vec(), content_type)
}

async fn call(config: &Config, url: &str) -> Result<Value, Value> {
    config
        .tool()
        .call(&json!({ "url": url }), 1 << 20)
        .await
        .map(|built| built.json)
        .map(|text| serde_json::from_str(&text).unwrap())
        .map_err(|error| serde_json::from_str(&error.to_json()).unwrap())
}

fn text(response: &Value) -> String {
    chunk_texts(response).join("\n")
}

async fn site_with(paths: &[(&str, ResponseTemplate)]) -> MockServer {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    for (at, response) in paths {
        serve(&server, at, response.clone()).await;
    }
    server
}

fn page(text: &str) -> Vec<(&str, f32, f32, f32)> {
    vec![(text, 72.0, 700.0, 12.0)]
}

#[tokio::test]
async fn with_no_format_enabled_every_type_answers_as_the_srd_says() {
    let pdf_bytes = pdf(&[page("Hello")], None, "");
    let server = site_with(&[
        ("/doc.pdf", body(&pdf_bytes, "application/pdf")),
        (
            "/sniffed",
            ResponseTemplate::new(200).set_body_bytes(pdf_bytes.clone()),
        ),
        ("/md", body(b"# Title\n", "text/markdown")),
        ("/api", body(b"{}", "application/json; charset=utf-8")),
        (
            "/feed",
            body(
                b"<rss><channel><title>x</title></channel></rss>",
                "application/rss+xml",
            ),
        ),
    ])
    .await;
    let config = Config::new(&[server.address().port()]);
    for (at, content_type) in [
        ("/doc.pdf", "application/pdf"),
        ("/sniffed", "sniffed:pdf"),
        ("/md", "text/markdown"),
        ("/api", "application/json; charset=utf-8"),
        ("/feed", "application/rss+xml"),
    ] {
        let error = call(&config, &site(&server, at)).await.unwrap_err();
        assert_eq!(
            error,
            json!({
                "code": "unsupported_content_type",
                "message": format!("content type `{content_type}` is not supported"),
                "retryable": false,
                "details": { "content_type": content_type },
            })
        );
    }
    // The SRD's Accept, exactly, on every document request.
    for request in server.received_requests().await.unwrap() {
        if request.url.path() != "/robots.txt" {
            assert_eq!(
                request.headers["accept"],
                "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"
            );
        }
    }
}

#[tokio::test]
async fn publisher_markdown_is_asked_for_first_used_as_is_and_noted() {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    Mock::given(method("GET"))
        .and(path("/guide"))
        .and(accept_is(
            "text/markdown,text/html;q=0.9,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1",
        ))
        .respond_with(body(
            b"# Guide\n\nRead *this*.\n\n## Install\n\nRun it.\n",
            "text/markdown; charset=utf-8",
        ))
        .mount(&server)
        .await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    let response = call(&config, &site(&server, "/guide")).await.unwrap();
    assert_eq!(response["title"], "Guide");
    assert_eq!(
        text(&response),
        "# Guide\n\nRead *this*.\n\n## Install\n\nRun it."
    );
    assert_eq!(response["notes"], json!(["publisher_markdown"]));
    assert_eq!(response["chunks"][0]["heading"], "Guide");
}

#[tokio::test]
async fn the_cache_keeps_the_two_representations_apart() {
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    Mock::given(method("GET"))
        .and(path("/doc"))
        .and(accept_is(
            "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
        ))
        .respond_with(body(b"<title>T</title><p>From HTML.</p>", "text/html"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/doc"))
        .respond_with(body(b"From Markdown.\n", "text/markdown; charset=utf-8"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let port = server.address().port();
    let srd = Config::new(&[port]).cache(dir.path());
    let agent = Config::new(&[port]).cache(dir.path()).section(ALL);
    let url = site(&server, "/doc");
    let first = call(&srd, &url).await.unwrap();
    assert_eq!(text(&first), "From HTML.");
    let markdown = call(&agent, &url).await.unwrap();
    assert_eq!(text(&markdown), "From Markdown.");
    assert_eq!(markdown["notes"], json!(["publisher_markdown"]));
    let again = call(&srd, &url).await.unwrap();
    assert_eq!(text(&again), "From HTML.");
    assert_eq!(again["notes"], json!(["cache_hit"]));
    let markdown_again = call(&agent, &url).await.unwrap();
    assert_eq!(text(&markdown_again), "From Markdown.");
    assert_eq!(markdown_again["notes"], json!(["cache_hit"]));
}

#[tokio::test]
async fn json_is_pretty_printed_in_a_fence_and_broken_json_is_an_error() {
    let server = site_with(&[
        (
            "/api",
            body(br#"{"b":[1,2],"a":{"x":null}}"#, "application/problem+json"),
        ),
        ("/broken", body(b"{\"a\":", "application/json")),
    ])
    .await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    let response = call(&config, &site(&server, "/api")).await.unwrap();
    assert_eq!(
        text(&response),
        "```json\n{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {\n    \"x\": null\n  }\n}\n```"
    );
    // JSON is UTF-8 by definition: no charset_fallback without a charset.
    assert_eq!(response["notes"], json!([]));
    let error = call(&config, &site(&server, "/broken")).await.unwrap_err();
    assert_eq!(error["code"], "extraction_failed");
    assert_eq!(error["retryable"], false);
    assert_eq!(
        error["details"],
        json!({"error": "unreadable_json", "reason": "json_malformed"})
    );
}

#[tokio::test]
async fn a_big_json_document_is_chunked_between_values() {
    let items: Vec<String> = (0..400)
        .map(|i| format!("{{\"id\":{i},\"name\":\"item number {i}\"}}"))
        .collect();
    let document = format!("[{}]", items.join(","));
    let server = site_with(&[("/list", body(document.as_bytes(), "application/json"))]).await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    let response = config
        .tool()
        .call(
            &json!({ "url": site(&server, "/list"), "max_chunk_tokens": 200 }),
            1 << 22,
        )
        .await
        .map(|built| built.json)
        .map(|t| serde_json::from_str::<Value>(&t).unwrap())
        .unwrap();
    let chunks = response["chunks"].as_array().unwrap();
    assert!(chunks.len() > 5, "{}", chunks.len());
    for chunk in chunks {
        let text = chunk["text"].as_str().unwrap();
        assert!(
            text.starts_with("```json\n") && text.ends_with("\n```"),
            "{text}"
        );
        // Every line is a whole value, member or bracket.
        for line in text.lines().filter(|l| !l.starts_with("```")) {
            let line = line.trim().trim_end_matches(',');
            assert!(
                ["[", "]", "{", "}"].contains(&line)
                    || line.starts_with("\"id\": ")
                    || line.starts_with("\"name\": \"item number"),
                "{line:?}"
            );
        }
    }
}

#[tokio::test]
async fn feeds_list_their_entries_and_a_broken_feed_is_an_error() {
    let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
        <item><title>One</title><link>/1</link><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>
        <description>First &lt;b&gt;story&lt;/b&gt;</description></item></channel></rss>"#;
    let server = site_with(&[
        ("/rss", body(rss, "text/xml; charset=utf-8")),
        (
            "/broken",
            body(b"<rss><channel><title>x</rss>", "application/rss+xml"),
        ),
        (
            "/notfeed",
            body(b"<config><a/></config>", "application/xml"),
        ),
    ])
    .await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    let response = call(&config, &site(&server, "/rss")).await.unwrap();
    assert_eq!(response["title"], "News");
    assert_eq!(
        text(&response),
        format!(
            "# News\n\n- [One]({})\n  Mon, 01 Jan 2024 00:00:00 GMT\n  First **story**",
            site(&server, "/1")
        )
    );
    let error = call(&config, &site(&server, "/broken")).await.unwrap_err();
    assert_eq!(
        error["details"],
        json!({"error": "unreadable_feed", "reason": "feed_malformed"})
    );
    let other = call(&config, &site(&server, "/notfeed")).await.unwrap_err();
    assert_eq!(other["code"], "unsupported_content_type");
    assert_eq!(other["details"]["content_type"], "application/xml");
}

#[tokio::test]
async fn a_pdf_is_read_with_its_title_and_without_its_page_numbers() {
    let pages = [
        vec![
            ("Annual Report", 72.0, 760.0, 20.0),
            ("The first page has a paragraph.", 72.0, 700.0, 11.0),
            ("1", 297.0, 40.0, 9.0),
        ],
        vec![
            ("The second page goes on.", 72.0, 700.0, 11.0),
            ("2", 297.0, 40.0, 9.0),
        ],
    ];
    let bytes = pdf(&pages, Some("Report 2024"), "");
    let server = site_with(&[
        ("/r.pdf", body(&bytes, "application/pdf")),
        (
            "/sniffed",
            ResponseTemplate::new(200).set_body_bytes(bytes.clone()),
        ),
    ])
    .await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    for at in ["/r.pdf", "/sniffed"] {
        let response = call(&config, &site(&server, at)).await.unwrap();
        assert_eq!(response["title"], "Report 2024");
        assert_eq!(
            text(&response),
            "# Annual Report\n\nThe first page has a paragraph.\n\nThe second page goes on."
        );
        assert_eq!(response["rendering_method"], "http");
        assert_eq!(response["notes"], json!([]));
    }
}

#[tokio::test]
async fn a_pdf_table_is_a_pipe_table_and_chunks_prefer_the_page_boundary() {
    // tests/fixtures/table-two-pages.py (ReportLab) writes it: page 1 a heading,
    // a paragraph, a table and a paragraph; page 2 a short note and a paragraph.
    let bytes = include_bytes!("../fixtures/table-two-pages.pdf");
    let server = site_with(&[("/t.pdf", body(bytes, "application/pdf"))]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(&[server.address().port()])
        .cache(dir.path())
        .section(ALL);
    let url = site(&server, "/t.pdf");
    let with_budget = |max: usize| {
        let args = json!({ "url": url, "max_chunk_tokens": max });
        let tool = config.tool();
        async move {
            let text = tool.call(&args, 1 << 20).await.unwrap().json;
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let whole = with_budget(2048).await;
    let markdown = text(&whole);
    assert!(
        markdown.contains(
            "\n\n| Region | Units sold | Revenue |\n|---|---|---|\n\
             | North | 120 | 4,200 EUR |\n| South | 95 | 3,310 EUR |\n\
             | East | n\\|a | 2,980 EUR |\n| West | 143 | 5,005 EUR |\n\n"
        ),
        "{markdown}"
    );
    // A small budget (from the cache: the page starts are kept with the
    // document): the cut due falls on page 2, after its short note, and moves
    // back to where page 2 begins.
    let small = with_budget(BUDGET).await;
    assert_eq!(small["notes"], json!(["cache_hit"]));
    let chunks: Vec<&str> = small["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(chunks.len(), 2, "{chunks:#?}");
    assert!(chunks[0].ends_with("so its cell says so."), "{chunks:#?}");
    assert!(
        chunks[1].starts_with("The second page begins"),
        "{chunks:#?}"
    );
    // Without the hint, the same Markdown is cut after page 2's note.
    let plain = plain_chunks(&format!("{markdown}\n"), BUDGET, &Cl100k);
    assert_eq!(plain.len(), 2);
    assert!(plain[0].text.ends_with("this short note."), "{plain:#?}");
}

/// The `max_chunk_tokens` of the test above: page 1 and page 2's note fit it,
/// the whole document does not.
const BUDGET: usize = 180;

#[tokio::test]
async fn pdf_errors_say_why_in_details_reason() {
    // A page with no text at all: a scan's shape.
    let no_text = pdf(&[vec![]], None, "");
    // qpdf --encrypt userpw ownerpw 256 (AES-256, a user password needed), and a
    // declared handler whose keys are wrong.
    let encrypted = include_bytes!("../fixtures/encrypted-aes256.pdf");
    let bogus = pdf(
        &[page("secret")],
        None,
        "/Encrypt << /Filter /Standard /V 1 /R 2 /O (0123456789abcdef0123456789abcdef) \
         /U (0123456789abcdef0123456789abcdef) /P -4 >> /ID [(a) (a)] ",
    );
    // qpdf --encrypt "" ownerpw 128 --use-aes=y: readable with the empty password.
    let owner_only = include_bytes!("../fixtures/owner-password-only.pdf");
    let server = site_with(&[
        ("/scan.pdf", body(&no_text, "application/pdf")),
        ("/locked.pdf", body(encrypted, "application/pdf")),
        ("/bogus.pdf", body(&bogus, "application/pdf")),
        ("/owner.pdf", body(owner_only, "application/pdf")),
        (
            "/broken.pdf",
            body(b"%PDF-1.4\nthis is not a PDF at all", "application/pdf"),
        ),
    ])
    .await;
    let config = Config::new(&[server.address().port()]).section(ALL);
    for (at, reason) in [
        ("/scan.pdf", "pdf_no_text_layer"),
        ("/locked.pdf", "pdf_encrypted"),
        ("/bogus.pdf", "pdf_encrypted"),
        ("/broken.pdf", "pdf_malformed"),
    ] {
        let error = call(&config, &site(&server, at)).await.unwrap_err();
        assert_eq!(error["code"], "extraction_failed", "{at} {error}");
        assert_eq!(
            error["details"],
            json!({"error": "unreadable_pdf", "reason": reason}),
            "{at} {}",
            error["message"]
        );
        assert_eq!(error["retryable"], false);
    }
    let readable = call(&config, &site(&server, "/owner.pdf")).await.unwrap();
    assert_eq!(text(&readable), "A secret page.");
}

#[tokio::test]
async fn a_pdf_has_its_own_size_cap_and_page_cap() {
    let big = {
        let mut bytes = pdf(&[page("Big")], None, "");
        // Padding after %%EOF: still a PDF, 1.5 MiB long.
        bytes.resize(3 << 19, b' ');
        bytes
    };
    let pages: Vec<Vec<(&str, f32, f32, f32)>> =
        ["Alpha text.", "Beta text.", "Gamma.", "Delta.", "Eta."]
            .into_iter()
            .map(page)
            .collect();
    let server = site_with(&[
        ("/big.pdf", body(&big, "application/pdf")),
        ("/big.html", body(&vec![b'x'; 3 << 19], "text/html")),
        ("/five.pdf", body(&pdf(&pages, None, ""), "application/pdf")),
    ])
    .await;
    let config = Config::new(&[server.address().port()]).section(&format!(
        "{ALL}\nmax_pdf_bytes = 1048576\nmax_pdf_pages = 2"
    ));
    let error = call(&config, &site(&server, "/big.pdf")).await.unwrap_err();
    assert_eq!(error["code"], "response_too_large");
    assert_eq!(error["details"]["max_bytes"], 1_048_576);
    // The HTML cap is max_download_bytes (5 MiB) still.
    assert!(call(&config, &site(&server, "/big.html")).await.is_ok());
    let response = call(&config, &site(&server, "/five.pdf")).await.unwrap();
    assert_eq!(response["notes"], json!(["pdf_page_limit"]));
    assert_eq!(text(&response), "Alpha text.\n\nBeta text.");
}

#[tokio::test]
async fn browser_mode_never_renders_a_pdf_it_reads_it_over_http() {
    let Some(chromium) = chromium() else { return };
    let _turn = browser_turn(&SERIAL).await;
    let bytes = pdf(&[page("Read, not rendered.")], None, "");
    let server = site_with(&[("/doc.pdf", body(&bytes, "application/pdf"))]).await;
    let port = server.address().port();
    let url = site(&server, "/doc.pdf");
    let args = json!({ "url": url, "force_browser": true });
    let with_pdf = Config::new(&[port])
        .section(&browser_section(&chromium, ""))
        .section(ALL)
        .tool();
    let response: Value = serde_json::from_str(
        &with_pdf
            .call(&args, 1 << 20)
            .await
            .map(|built| built.json)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(response["rendering_method"], "http");
    assert_eq!(text(&response), "Read, not rendered.");
    // One request for the document: Chromium was handed nothing to fetch again.
    assert_eq!(crate::support::hits(&server, "/doc.pdf").await, 1);
    // Without the format, browser mode answers as the SRD says.
    let srd = Config::new(&[port])
        .section(&browser_section(&chromium, ""))
        .tool();
    let error = srd
        .call(&args, 1 << 20)
        .await
        .map(|built| built.json)
        .unwrap_err();
    assert_eq!(error.details_json()["content_type"], "application/pdf");
}
