//! The MCP server driven by rmcp's real client over a child process: initialize,
//! list tools, call with bad arguments and blocked targets, and the `extraction`
//! extension against a loopback server.

use std::io::Write as _;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::stdio_mcp::StdioServer;
use crate::support::{Config, html, serve};

pub(crate) type Client = RunningService<rmcp::RoleClient, ()>;

/// `webfetch mcp` with `extra_args`, initialized by rmcp's client.
pub(crate) async fn start_server(extra_args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webfetch"));
    command.arg("mcp").args(extra_args);
    let transport = TokioChildProcess::new(command).expect("spawn webfetch mcp");
    ().serve(transport).await.expect("MCP initialize")
}

/// A `web_fetch` call with `arguments`.
pub(crate) async fn call(client: &Client, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
        .await
        .expect("tools/call answered")
}

/// The result's first text block, as JSON.
pub(crate) fn text(result: &CallToolResult) -> Value {
    let block = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .expect("one text block");
    serde_json::from_str(&block.text).expect("the text is JSON")
}

#[tokio::test]
async fn mcp_lists_web_fetch_with_the_fr_wf_02_schema() {
    let client = start_server(&[]).await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("webfetch")
    );
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2, "web_fetch and web_fetch_batch");
    let tool = &tools[0];
    assert_eq!(tool.name, "web_fetch");
    let schema = Value::Object((*tool.input_schema).clone());
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(schema["properties"]["max_chunk_tokens"]["minimum"], 128);
    assert_eq!(schema["properties"]["max_chunk_tokens"]["maximum"], 2048);
    assert!(schema["properties"].get("block_resources").is_none());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_bad_arguments_are_tool_errors_with_the_envelope() {
    let client = start_server(&[]).await;
    for arguments in [
        json!({}),
        json!({"url": "https://example.com/", "block_resources": ["image"]}),
        json!({"url": "https://example.com/", "max_chunk_tokens": 64}),
        json!({"url": "  "}),
    ] {
        let result = call(&client, arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{arguments}");
        let envelope = text(&result);
        assert_eq!(envelope["code"], "bad_args", "{arguments}");
        assert_eq!(envelope["retryable"], false);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_blocked_targets_report_the_structured_code() {
    let client = start_server(&[]).await;
    let result = call(
        &client,
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let envelope = text(&result);
    assert_eq!(envelope["code"], "ssrf_blocked");
    assert_eq!(envelope["details"]["cidr"], "169.254.0.0/16");
    let result = call(&client, json!({"url": "file:///etc/passwd"})).await;
    assert_eq!(text(&result)["code"], "invalid_scheme");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_advertises_the_extraction_extension() {
    let client = start_server(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let schema = Value::Object((*tools[0].input_schema).clone());
    let extraction = &schema["properties"]["extraction"];
    assert_eq!(extraction["type"], "string");
    assert_eq!(extraction["enum"], json!(["auto", "srd", "article"]));
    let description = extraction["description"].as_str().unwrap();
    for mode in ["\"auto\"", "\"article\"", "\"srd\"", "page_type"] {
        assert!(description.contains(mode), "{mode}: {description}");
    }
    // Still closed, still only `url` required.
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["url"]));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_describes_the_formats_it_reads_and_a_config_can_turn_them_off() {
    let client = start_server(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let description = tools[0]
        .description
        .as_deref()
        .unwrap_or_default()
        .to_owned();
    client.cancel().await.unwrap();
    for needle in [
        "PDFs",
        "pdf_encrypted",
        "publisher_markdown",
        "JSON",
        "RSS and Atom",
    ] {
        assert!(description.contains(needle), "{needle}: {description}");
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("webfetch.toml");
    std::fs::write(&config, "[tools.webfetch.content]\nformats = []\n").unwrap();
    let client = start_server(&["--config", config.to_str().unwrap()]).await;
    let tools = client.list_all_tools().await.unwrap();
    let without = tools[0].description.as_deref().unwrap_or_default();
    // The tool's own paragraph and nothing about the formats.
    assert!(
        without.starts_with("Fetch an http(s) web page"),
        "{without}"
    );
    assert!(description.starts_with(without), "{without}");
    for needle in ["PDFs", "pdf_encrypted", "RSS and Atom"] {
        assert!(!without.contains(needle), "{needle}: {without}");
    }
    client.cancel().await.unwrap();
}

/// A page on which a scoring (article) extractor finds no main content: two words.
/// Article mode falls back to SRD with a note, with the stub and the real algorithm.
const TINY: &str = "<html><head><title>Tiny</title></head><body><p>Two words.</p></body></html>";

#[tokio::test]
async fn mcp_call_with_extraction_uses_that_mode() {
    let server = MockServer::start().await;
    serve(&server, "/tiny", html(TINY)).await;
    let port = server.address().port();
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config
        .write_all(Config::new(&[port]).toml().as_bytes())
        .unwrap();
    let client = start_server(&["--config", config.path().to_str().unwrap()]).await;
    let url = format!("http://127.0.0.1:{port}/tiny");

    let srd = call(&client, json!({ "url": url })).await;
    assert_eq!(srd.is_error, Some(false), "{:?}", srd.content);
    let srd = text(&srd);
    assert_eq!(srd["notes"], json!([]));
    let article = call(&client, json!({ "url": url, "extraction": "article" })).await;
    assert_eq!(article.is_error, Some(false), "{:?}", article.content);
    let article = text(&article);
    assert_eq!(article["notes"], json!(["article_fallback_srd"]));
    assert_eq!(article["chunks"], srd["chunks"]);

    let bad = call(&client, json!({ "url": url, "extraction": "summary" })).await;
    assert_eq!(bad.is_error, Some(true));
    let envelope = text(&bad);
    assert_eq!(envelope["code"], "bad_args");
    let message = envelope["message"].as_str().unwrap();
    assert!(message.contains(r#""srd", "article""#), "{message}");
    client.cancel().await.unwrap();
}

/// A page of 40 chunks, asked for by a URL that redirects to it, read
/// to the end through MCP in successive calls, each cut by the output budget, each
/// next call made as the words say (the response's `final_url`): every chunk
/// exactly once, in order; only the first call touches the network (the rest are
/// cache hits with the first call's `fetched_at`); each cut result says in words
/// and in `_meta` where to go on.
#[tokio::test]
async fn mcp_a_long_page_is_read_to_the_end_with_start_chunk() {
    let paragraphs: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "Paragraph {i:02} begins here. {}",
                "Every sentence in this paragraph carries a few more words of filler text. "
                    .repeat(6)
            )
            .trim_end()
            .to_owned()
        })
        .collect();
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    let page = format!(
        "<html><head><title>Long</title></head><body><article>{body}</article></body></html>"
    );
    let server = MockServer::start().await;
    serve(&server, "/long", html(&page)).await;
    serve(
        &server,
        "/moved",
        ResponseTemplate::new(301).insert_header("Location", "/long"),
    )
    .await;
    let port = server.address().port();
    let cache = tempfile::tempdir().unwrap();
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config
        .write_all(Config::new(&[port]).cache(cache.path()).toml().as_bytes())
        .unwrap();
    let client = start_server(&[
        "--config",
        config.path().to_str().unwrap(),
        "--max-output-bytes",
        "6000",
    ])
    .await;
    let mut url = format!("http://127.0.0.1:{port}/moved");

    let mut read: Vec<String> = Vec::new();
    let mut fetched_at = None;
    let mut start: Option<u64> = None;
    for call_number in 0.. {
        assert!(call_number < 40, "no progress");
        let mut arguments = json!({ "url": url, "max_chunk_tokens": 128 });
        if let Some(start) = start {
            arguments["start_chunk"] = json!(start);
        }
        let result = call(&client, arguments).await;
        assert_eq!(result.is_error, Some(false), "{:?}", result.content);
        let response = text(&result);
        read.extend(
            response["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["text"].as_str().unwrap().to_owned()),
        );
        assert_eq!(
            *fetched_at.get_or_insert(response["fetched_at"].clone()),
            response["fetched_at"]
        );
        // The field is in the JSON only for a call that asked for a window.
        assert_eq!(
            response.get("next_start_chunk").is_some(),
            start.is_some() && response["truncated"] == true,
            "{response}"
        );
        let Some(meta) = result.meta.as_ref() else {
            assert_eq!(result.content.len(), 1);
            assert_eq!(response["truncated"], false);
            break;
        };
        let next = meta.0["webfetch/next_start_chunk"].as_u64().unwrap();
        assert_eq!(meta.0["webfetch/total_chunks"], 40);
        let words = result.content[1].as_text().unwrap().text.clone();
        assert!(
            words.contains(&format!(
                "url set to this response's final_url and start_chunk: {next}"
            )),
            "{words}"
        );
        url = response["final_url"].as_str().unwrap().to_owned();
        if start.is_some() {
            assert_eq!(response["next_start_chunk"], next);
        }
        let notes = response["notes"].as_array().unwrap();
        assert!(notes.contains(&json!("tool_output_limit")), "{notes:?}");
        // Every call after the first is served from the cache.
        assert_eq!(
            notes.contains(&json!("cache_hit")),
            start.is_some(),
            "{notes:?}"
        );
        start = Some(next);
    }
    assert_eq!(read, paragraphs, "every chunk once, in order");
    assert!(start.is_some(), "the page needed more than one call");
    let page_hits = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/long")
        .count();
    assert_eq!(page_hits, 1, "only the first call fetches");
    assert_eq!(url, format!("http://127.0.0.1:{port}/long"));

    let past = call(
        &client,
        json!({ "url": url, "max_chunk_tokens": 128, "start_chunk": 40 }),
    )
    .await;
    assert_eq!(past.is_error, Some(true));
    let envelope = text(&past);
    assert_eq!(envelope["code"], "bad_args");
    assert_eq!(envelope["details"]["chunk_count"], 40);
    client.cancel().await.unwrap();
}

/// The tool says what a client may assume of it and what it answers: a title,
/// read-only annotations and an `outputSchema` generated from the response
/// type; each result carries its JSON as text (the SRD's bytes) and as
/// `structuredContent`, errors with `isError` too.
#[tokio::test]
async fn mcp_the_tool_is_annotated_and_its_results_are_structured() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/page",
        html("<title>T</title><p>Structured words.</p>"),
    )
    .await;
    let config = Config::new(&[server.address().port()]);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(config.toml().as_bytes()).unwrap();
    let client = start_server(&["--config", file.path().to_str().unwrap()]).await;
    let tools = client.list_all_tools().await.unwrap();
    let tool = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(tool["title"], "Fetch a web page");
    assert_eq!(
        tool["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    let output = &tool["outputSchema"];
    assert_eq!(
        output["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(output["type"], "object");
    for field in [
        "requested_url",
        "final_url",
        "fetched_at",
        "chunks",
        "rendering_method",
        "truncated",
        "notes",
    ] {
        assert!(
            output["required"]
                .as_array()
                .unwrap()
                .contains(&json!(field)),
            "{field}"
        );
    }
    assert!(output["properties"]["page_type"].is_object());
    // Only the standard's formats: a validating client warns about any other.
    let mut formats = Vec::new();
    collect_formats(output, &mut formats);
    assert_eq!(formats, ["date-time"], "{output:#}");

    let url = format!("http://127.0.0.1:{}/page", server.address().port());
    let result = call(&client, json!({ "url": url })).await;
    assert_eq!(result.is_error, Some(false));
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(structured, text(&result));
    assert!(
        structured["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Structured words.")
    );
    // The text block is the canonical JSON, byte for byte.
    let block = &result.content[0].as_text().unwrap().text;
    let canonical: webfetch::FetchResponse = serde_json::from_str(block).unwrap();
    assert_eq!(&canonical.to_json(), block);

    let blocked = call(&client, json!({"url": "http://169.254.169.254/"})).await;
    assert_eq!(blocked.is_error, Some(true));
    let envelope = blocked
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(envelope, text(&blocked));
    assert_eq!(envelope["code"], "ssrf_blocked");
    client.cancel().await.unwrap();
}

/// A call that carries a `progressToken` is told its stages in words before its
/// result, in order, with an increasing `progress`; one without gets none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_a_call_with_a_progress_token_is_told_each_stage_before_its_result() {
    let server = MockServer::start().await;
    let page = format!(
        "<title>T</title><p>{}</p>",
        "Progress words. ".repeat(20_000)
    );
    serve(
        &server,
        "/page",
        ResponseTemplate::new(200).set_body_raw(page, "text/html"),
    )
    .await;
    let config = Config::new(&[server.address().port()]);
    let mut stdio = StdioServer::start(&config);
    let url = format!("http://127.0.0.1:{}/page", server.address().port());
    stdio.send(json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "web_fetch",
            "arguments": { "url": url },
            "_meta": { "progressToken": "fetch-7" }
        }
    }));
    let (before, answer) = stdio.answer_after(7);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let told: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .collect();
    assert!(told.iter().all(|p| p["progressToken"] == "fetch-7"));
    let progress: Vec<f64> = told
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    let messages: Vec<&str> = told
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    let host = "resolved 127.0.0.1";
    let expected = [
        host,
        "connected to 127.0.0.1",
        "response 200, reading the body",
        "received",
        "extracting the content",
        "cutting the content into chunks",
    ];
    let mut at = 0;
    for want in expected {
        let found = messages[at..].iter().position(|m| m.starts_with(want));
        assert!(found.is_some(), "{want:?} in order in {messages:?}");
        at += found.unwrap() + 1;
    }
    assert!(messages.len() <= 10, "{messages:?}");

    stdio.send(json!({
        "jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": { "name": "web_fetch", "arguments": { "url": url } }
    }));
    let (before, _) = stdio.answer_after(8);
    assert!(before.is_empty(), "{before:?}");
}

/// Every `format` value in `schema` and its subschemas, deduplicated.
fn collect_formats(schema: &Value, formats: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(format)) = object.get("format")
                && !formats.contains(format)
            {
                formats.push(format.clone());
            }
            object.values().for_each(|v| collect_formats(v, formats));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_formats(v, formats)),
        _ => {}
    }
}
