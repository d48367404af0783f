//! `webfetch mcp` spoken to line by line over its stdio, as raw JSON-RPC: for
//! what a high-level client hides (cancelling a request, the notifications
//! that come before a result).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use super::Config;
use super::deadline::{WAIT, recv_within};

/// A running `webfetch mcp`, killed on drop.
pub(crate) struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    /// Its stdout's lines, read on a thread of their own, so that a wait for
    /// one can give up.
    lines: mpsc::Receiver<String>,
    _config: tempfile::NamedTempFile,
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StdioServer {
    /// Starts `webfetch mcp` with `config` and initializes it (2025-06-18).
    pub(crate) fn start(config: &Config) -> StdioServer {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(config.toml().as_bytes()).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_webfetch"))
            .args(["mcp", "--config"])
            .arg(file.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn webfetch mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = StdioServer {
            child,
            stdin,
            lines,
            _config: file,
        };
        server.send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "webfetch-tests", "version": "1" }
            }
        }));
        let initialized = server.answer(0);
        assert!(initialized["result"].is_object(), "{initialized}");
        server.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        server
    }

    /// Writes one message.
    pub(crate) fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message whose `id` is `id`.
    pub(crate) fn answer(&mut self, id: u64) -> Value {
        self.answer_after(id).1
    }

    /// The next message whose `id` is `id`, and every message before it; fails
    /// the test if it has not come within [`WAIT`] or stdout closed first.
    pub(crate) fn answer_after(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        let what = format!("the answer to request {id} on webfetch mcp's stdout");
        loop {
            let line = recv_within(&self.lines, WAIT, &what);
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return (before, message);
            }
            before.push(message);
        }
    }
}
