//! Where the fixed cost of a CLI call goes: each start-up stage of
//! `webfetch fetch` timed in one fresh process, with the resident set after it.
//!
//! ```text
//! cargo run --release --example startup_stages -- [FILE]
//! ```
//!
//! Stages, in the order a CLI call meets them: the default config, the async
//! runtime (current-thread, as the CLI builds it, and multi-thread for
//! comparison), the tool, the first token count (the cl100k_base tables are
//! built then), and counting FILE (default: a 12-byte text) with the tables warm.
//! Run it once per question: a stage's figure depends on what ran before it in
//! the process. Everything goes to stderr.

#[path = "../benches/support/proc_status.rs"]
mod proc_status;

use std::time::Instant;

use proc_status::ProcStatus;

use webfetch::WebFetchTool;
use webfetch::{Cl100k, TokenCounter};

/// `VmRSS` and `VmHWM` (current and peak resident set) in KiB.
fn rss_kib() -> (u64, u64) {
    let status = ProcStatus::of("self");
    (status.field("VmRSS"), status.field("VmHWM"))
}

fn stage<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let value = f();
    let elapsed = started.elapsed();
    let (rss, peak) = rss_kib();
    eprintln!(
        "{name:<34} {:>8.3} ms   rss {:>6.1} MiB   peak {:>6.1} MiB",
        elapsed.as_secs_f64() * 1000.0,
        rss as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    value
}

fn main() {
    let text = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        None => "hello world\n".to_owned(),
    };
    stage("process start", || ());
    let loaded = stage("config (defaults)", || {
        webfetch::load_str("", webfetch::LoadOptions::default()).expect("defaults")
    });
    let runtime = stage("runtime (current_thread)", || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    });
    let multi = stage("runtime (multi_thread, compare)", || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime")
    });
    drop(multi);
    let _tool = stage("WebFetchTool::new", || WebFetchTool::new(loaded.settings));
    stage("first count (cl100k tables built)", || {
        Cl100k.count_str("warm up")
    });
    let tokens = stage("count FILE (tables warm, cold memo)", || {
        Cl100k.count_str(&text)
    });
    stage("count FILE again (warm memo)", || Cl100k.count_str(&text));
    drop(runtime);
    eprintln!("{} bytes, {tokens} tokens", text.len());
}
