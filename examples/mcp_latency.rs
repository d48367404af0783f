//! Per-call latency of an MCP server, measured with rmcp's real client over stdio.
//!
//! ```text
//! mcp_latency <webfetch binary> <config> <url> [calls] [browser]
//! mcp_latency peer <url> <calls> <command> [args...]
//! ```
//!
//! The first form prints the median and p90 of webfetch's `tools/call` for cache
//! misses (`no_cache: true`) and cache hits; with `browser`, for uncached
//! `force_browser` calls instead (the browser latency), one second
//! apart, as an agent reading each result before its next call (the server's warm
//! standby launches the next Chromium in that time; the pause is not timed).
//!
//! The second form times a peer server that has the `fetch` tool of the reference
//! `mcp-server-fetch` (`url`, `max_length`), asking for the whole page, so
//! `benches/e2e.sh` can print it beside webfetch from the same run.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// One timed series: its label, the tool, and the arguments of every call.
struct Run {
    label: &'static str,
    tool: &'static str,
    arguments: Value,
    /// Sleep a second before each call (untimed): the standby's launch window.
    paced: bool,
    /// Make one untimed call first: the reference server installs Readability.js's
    /// node packages on its first call.
    warm_up: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (command, calls, runs) = match args.as_slice() {
        [_, mode, url, calls, program, program_args @ ..] if mode == "peer" => {
            let mut command = tokio::process::Command::new(program);
            command.args(program_args);
            // The reference server refuses lengths of a million or more.
            let arguments = json!({ "url": url, "max_length": 999_999 });
            let run = Run {
                label: "peer",
                tool: "fetch",
                arguments,
                paced: false,
                warm_up: true,
            };
            (command, calls.parse()?, vec![run])
        }
        [_, binary, config, url, rest @ ..] => {
            let mut command = tokio::process::Command::new(binary);
            command.args(["mcp", "--config", config, "--max-output-bytes", "10000000"]);
            let calls = rest.first().map(|n| n.parse()).transpose()?.unwrap_or(50);
            let browser = rest.get(1).is_some_and(|mode| mode == "browser");
            (command, calls, webfetch_runs(url, browser))
        }
        _ => {
            eprintln!("usage: see the doc comment of examples/mcp_latency.rs");
            std::process::exit(1);
        }
    };
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    for run in runs {
        let Value::Object(arguments) = run.arguments else {
            unreachable!("arguments are built as objects")
        };
        if run.warm_up {
            let request = CallToolRequestParams::new(run.tool).with_arguments(arguments.clone());
            client.call_tool(request).await?;
        }
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            if run.paced {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let request = CallToolRequestParams::new(run.tool).with_arguments(arguments.clone());
            let started = Instant::now();
            let result = client.call_tool(request).await?;
            times.push(started.elapsed());
            if result.is_error == Some(true) {
                return Err(format!("tool error: {:?}", result.content).into());
            }
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "mcp {}: median {:.2} ms, p90 {:.2} ms over {calls} calls",
            run.label,
            ms(times[calls / 2]),
            ms(times[calls * 9 / 10])
        );
    }
    client.cancel().await?;
    Ok(())
}

/// webfetch's series: miss then hit, or uncached browser renders.
fn webfetch_runs(url: &str, browser: bool) -> Vec<Run> {
    let run = |label, no_cache, force_browser| Run {
        label,
        tool: "web_fetch",
        arguments: json!({ "url": url, "no_cache": no_cache, "force_browser": force_browser }),
        paced: force_browser,
        warm_up: false,
    };
    if browser {
        vec![run("browser", true, true)]
    } else {
        vec![run("miss", true, false), run("hit", false, false)]
    }
}
