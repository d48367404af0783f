//! The MCP server's resident set over many calls (it must stay flat).
//!
//! `cargo run --release --example mcp_memory -- <webfetch binary> <config> <url> [calls]`
//! starts `webfetch mcp` with rmcp's real client over stdio, makes `calls`
//! (default 1,000) `tools/call`s of `url`, alternating cache misses (`no_cache`)
//! and hits, and prints the server's `VmRSS` and `VmHWM` (from `/proc`, Linux)
//! after the first call and every tenth of the run, then the growth from the
//! first tenth to the end.

#[path = "../benches/support/proc_status.rs"]
mod proc_status;

use proc_status::ProcStatus;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// `VmRSS` and `VmHWM` of process `pid`, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = ProcStatus::of(pid);
    (status.field("VmRSS"), status.field("VmHWM"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, binary, config, url, rest @ ..] = args.as_slice() else {
        eprintln!("usage: mcp_memory <webfetch binary> <config> <url> [calls]");
        std::process::exit(1);
    };
    let calls: usize = rest.first().map(|n| n.parse()).transpose()?.unwrap_or(1000);
    let mut command = tokio::process::Command::new(binary);
    command.args(["mcp", "--config", config, "--max-output-bytes", "10000000"]);
    let transport = TokioChildProcess::new(command)?;
    let pid = transport.id().ok_or("no child pid")?;
    let client = ().serve(transport).await?;
    let mut first_tenth = None;
    let mut last = (0, 0);
    for call in 1..=calls {
        let arguments = json!({ "url": url, "no_cache": call % 2 == 1 });
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new("web_fetch").with_arguments(arguments))
            .await?;
        if result.is_error == Some(true) {
            return Err(format!("tool error: {:?}", result.content).into());
        }
        if call == 1 || call % (calls / 10).max(1) == 0 {
            last = rss_kib(pid);
            println!(
                "after {call:>5} calls: rss {:>6.1} MiB, peak {:>6.1} MiB",
                last.0 as f64 / 1024.0,
                last.1 as f64 / 1024.0
            );
            if call == (calls / 10).max(1) {
                first_tenth = Some(last.0);
            }
        }
    }
    if let Some(start) = first_tenth {
        println!(
            "rss growth from call {} to call {calls}: {:+.1} MiB",
            (calls / 10).max(1),
            (last.0 as f64 - start as f64) / 1024.0
        );
    }
    client.cancel().await?;
    Ok(())
}
