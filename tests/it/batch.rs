//! `web_fetch_batch` over `webfetch mcp`, with rmcp's client and raw JSON-RPC:
//! items in order, each a response or an error envelope; the same URL read
//! once; one output budget shared, a cut item saying where `web_fetch` reads
//! on; one progress notification per page; politeness per origin kept.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use webfetch::BatchResponse;
use wiremock::MockServer;

use crate::mcp::{Client, call, close, list_tools, start_server, text};
use crate::support::deadline::{WAIT, within};
use crate::support::stdio_mcp::StdioServer;
use crate::support::{Config, hits, html, serve};

async fn batch(client: &Client, arguments: Value) -> rmcp::model::CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let called =
        client.call_tool(CallToolRequestParams::new("web_fetch_batch").with_arguments(arguments));
    within(WAIT, "the answer to a web_fetch_batch tools/call", called)
        .await
        .expect("tools/call answered")
}

fn config_file(config: &Config) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(config.toml().as_bytes()).unwrap();
    file
}

#[tokio::test]
async fn a_batch_answers_each_url_in_order_sharing_one_output_budget() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/short",
        html("<title>Short</title><p>A short page.</p>"),
    )
    .await;
    let long: String = (0..400)
        .map(|i| format!("<h2>Part {i}</h2><p>{}</p>", "Long page words. ".repeat(30)))
        .collect();
    serve(
        &server,
        "/long",
        html(&format!("<title>Long</title>{long}")),
    )
    .await;
    let config = Config::new(&[server.address().port()]);
    let file = config_file(&config);
    let max_output = 20_000;
    let client = start_server(&[
        "--config",
        file.path().to_str().unwrap(),
        "--max-output-bytes",
        &max_output.to_string(),
    ])
    .await;

    let tools = list_tools(&client).await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["web_fetch", "web_fetch_batch"]);
    let listed = serde_json::to_value(&tools[1]).unwrap();
    assert_eq!(listed["inputSchema"]["required"], json!(["urls"]));
    assert_eq!(listed["annotations"]["readOnlyHint"], true);
    assert!(listed["outputSchema"]["properties"]["results"].is_object());

    let site = |path: &str| format!("http://127.0.0.1:{}{path}", server.address().port());
    let urls = [
        site("/short"),
        site("/long"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        site("/short"),
    ];
    let result = batch(&client, json!({ "urls": urls, "extraction": "srd" })).await;
    assert_eq!(result.is_error, Some(false));
    let block = &result.content[0].as_text().unwrap().text;
    assert!(block.len() <= max_output, "{} bytes", block.len());
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(structured, text(&result));
    let answer: BatchResponse = serde_json::from_str(block).unwrap();
    let items = &answer.results;
    assert_eq!(items.len(), 4);
    for (item, url) in items.iter().zip(&urls) {
        assert_eq!(&item.url, url);
    }
    // The short page whole, twice, read once.
    let short = items[0].response.as_ref().unwrap();
    assert!(!short.truncated && items[0].next_start_chunk.is_none());
    assert_eq!(items[3].response, items[0].response);
    assert_eq!(hits(&server, "/short").await, 1);
    // The long page cut at a chunk boundary, with where to read on.
    let long_page = items[1].response.as_ref().unwrap();
    assert!(long_page.truncated, "{long_page:?}");
    let next = items[1].next_start_chunk.expect("next_start_chunk");
    assert_eq!(next, long_page.chunks.len());
    // The blocked URL is its own error; the others are not failed by it.
    let error = items[2].error.as_ref().unwrap();
    assert_eq!(error.code, "ssrf_blocked");

    // Reading on with web_fetch gives the chunks that follow.
    let more = call(
        &client,
        json!({ "url": long_page.final_url, "start_chunk": next, "extraction": "srd" }),
    )
    .await;
    let more: webfetch::FetchResponse = serde_json::from_value(text(&more)).unwrap();
    let first_more = &more.chunks.first().expect("more chunks").text;
    assert!(
        long_page
            .chunks
            .iter()
            .all(|chunk| &chunk.text != first_more)
    );
    close(client).await;
}

#[test]
fn a_batch_with_a_progress_token_is_told_once_per_page() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start());
    for path in ["/a", "/b", "/c"] {
        runtime.block_on(serve(&server, path, html("<p>Batch page.</p>")));
    }
    let config = Config::new(&[server.address().port()]);
    let mut stdio = StdioServer::start(&config);
    let urls: Vec<String> = ["/a", "/b", "/c"]
        .iter()
        .map(|p| format!("http://127.0.0.1:{}{p}", server.address().port()))
        .collect();
    stdio.send(json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {
            "name": "web_fetch_batch",
            "arguments": { "urls": urls },
            "_meta": { "progressToken": "batch" }
        }
    }));
    let (before, answer) = stdio.answer_after(9);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let messages: Vec<&str> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    for (n, message) in messages.iter().enumerate() {
        assert!(
            message.starts_with(&format!("read {} of 3: ", n + 1)),
            "{message}"
        );
    }
}

/// An origin that holds each request a moment and counts how many it holds at
/// once.
fn counting_origin() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let seen = Arc::clone(&most);
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let robots = line.contains("/robots.txt");
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                if robots {
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    return;
                }
                let holding = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(holding, Ordering::SeqCst);
                // The origin's own pace, not a wait of the test's.
                std::thread::sleep(Duration::from_millis(100));
                now.fetch_sub(1, Ordering::SeqCst);
                let body = "<p>One of many pages on one origin.</p>";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, seen)
}

#[tokio::test]
async fn a_batch_on_one_origin_keeps_to_its_politeness_limit() {
    let (port, most) = counting_origin();
    let config = Config::new(&[port]).section("[tools.webfetch.fleet]\nper_origin_in_flight = 2");
    let file = config_file(&config);
    let client = start_server(&["--config", file.path().to_str().unwrap()]).await;
    let urls: Vec<String> = (0..10)
        .map(|i| format!("http://127.0.0.1:{port}/page{i}"))
        .collect();
    let result = batch(&client, json!({ "urls": urls })).await;
    let answer: BatchResponse = serde_json::from_value(text(&result)).unwrap();
    assert!(
        answer.results.iter().all(|item| item.response.is_some()),
        "{answer:?}"
    );
    let most = most.load(Ordering::SeqCst);
    assert!((1..=2).contains(&most), "{most} at once");
    close(client).await;
}
