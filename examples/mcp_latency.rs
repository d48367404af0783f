//! Per-call latency of the MCP server, measured with rmcp's real client over stdio.
//!
//! `cargo run --release --example mcp_latency -- <webfetch binary> <config> <url> [calls] [browser]`
//! prints the median and p90 of `tools/call` for cache misses (`no_cache: true`)
//! and cache hits; with `browser`, for uncached `force_browser` calls instead (the
//! browser latency of issue 15), one second apart, as an agent reading each
//! result before its next call (the server's warm standby launches the next
//! Chromium in that time; the pause is not timed). Used by `benches/e2e.sh`.

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, binary, config, url, rest @ ..] = args.as_slice() else {
        eprintln!("usage: mcp_latency <webfetch binary> <config> <url> [calls]");
        std::process::exit(1);
    };
    let calls: usize = rest.first().map(|n| n.parse()).transpose()?.unwrap_or(50);
    let mut command = tokio::process::Command::new(binary);
    command.args(["mcp", "--config", config, "--max-output-bytes", "10000000"]);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let browser = rest.get(1).is_some_and(|mode| mode == "browser");
    let runs: &[(&str, bool, bool)] = if browser {
        &[("browser", true, true)]
    } else {
        &[("miss", true, false), ("hit", false, false)]
    };
    for &(label, no_cache, force_browser) in runs {
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            if force_browser {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let arguments =
                json!({ "url": url, "no_cache": no_cache, "force_browser": force_browser });
            let serde_json::Value::Object(arguments) = arguments else {
                unreachable!()
            };
            let started = Instant::now();
            let result = client
                .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
                .await?;
            times.push(started.elapsed());
            if result.is_error == Some(true) {
                return Err(format!("tool error: {:?}", result.content).into());
            }
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "mcp {label}: median {:.2} ms, p90 {:.2} ms over {calls} calls",
            ms(times[calls / 2]),
            ms(times[calls * 9 / 10])
        );
    }
    client.cancel().await?;
    Ok(())
}
