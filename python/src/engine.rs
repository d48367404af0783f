//! The one place the bindings use the `webfetch` crate: load a configuration the
//! way the CLI does, build the tool, and run calls on the client's own tokio
//! runtime, through the crate's public API only (its builder). `lib.rs` sees
//! strings and JSON values.

use std::path::PathBuf;

use serde_json::Value;
use tokio::runtime::Runtime;
use webfetch::{BatchArgs, LoadOptions, Loaded, Profile, WebFetchTool};

/// Where a client's configuration comes from (SRD 5.3): the defaults, a TOML
/// file, or TOML text held by the host.
#[derive(Debug)]
pub enum ConfigSource {
    /// No file: every `[tools.webfetch]` default.
    Defaults,
    /// A TOML file with a `[tools.webfetch]` table.
    File(PathBuf),
    /// The text of such a file.
    Toml(String),
}

/// Why a client could not be built.
#[derive(Debug)]
pub enum OpenError {
    /// The configuration cannot be read or parsed, or it disables `web_fetch`.
    Config(String),
    /// The tokio runtime did not start.
    Runtime(String),
}

/// One tool and the runtime its calls run on. Its clones of the tool share the
/// HTTP client, the robots.txt cache, the disk cache and the browser standby, so
/// everything a long-lived host keeps lives here.
pub struct Engine {
    tool: WebFetchTool,
    runtime: Runtime,
    warnings: Vec<String>,
}

impl Engine {
    /// Loads the configuration and builds the tool for the CLI's profile (the
    /// SRD's answers, the extension arguments accepted: `extraction`,
    /// `start_chunk`), keeping one Chromium
    /// launched ahead when `browser_standby` (a long-lived client).
    pub fn open(source: &ConfigSource, browser_standby: bool) -> Result<Engine, OpenError> {
        let options = LoadOptions {
            profile: Profile::Extended,
            ..LoadOptions::default()
        };
        let loaded = match source {
            ConfigSource::Defaults => webfetch::load_str("", options),
            ConfigSource::File(path) => webfetch::load_file(path, options),
            ConfigSource::Toml(text) => webfetch::load_str(text, options),
        }
        .and_then(Loaded::runnable)
        .map_err(|error| OpenError::Config(error.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("webfetch-python")
            .build()
            .map_err(|error| {
                OpenError::Runtime(format!("cannot start the async runtime: {error}"))
            })?;
        let tool = WebFetchTool::builder(loaded.settings)
            .profile(loaded.profile)
            .browser_standby(browser_standby)
            .build()
            .map_err(|error| OpenError::Config(error.to_string()))?;
        Ok(Engine {
            tool,
            runtime,
            warnings: loaded.warnings,
        })
    }

    /// The start-up warnings of the configuration (FR-WF-05b, clamped values).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Runs one call on JSON arguments, blocking the calling thread: the response
    /// JSON at most `max_output_bytes` long (FR-WF-03a), or the FR-WF-18 error
    /// envelope as JSON. Many threads may call at once; each call runs on its own
    /// thread and spawns onto the shared runtime.
    pub fn call(&self, args: &Value, max_output_bytes: usize) -> Result<String, String> {
        self.runtime
            .block_on(self.tool.call(args, max_output_bytes))
            .map(|built| built.json)
            .map_err(|error| error.to_json())
    }

    /// Runs one call per URL of a batch (`urls` and the shared options, as JSON),
    /// at most ten at once and the same URL once, blocking the calling thread:
    /// each answer in the order given, at most `max_output_bytes` long; or the
    /// whole batch's `bad_args` envelope.
    pub fn call_many(
        &self,
        args: &Value,
        max_output_bytes: usize,
    ) -> Result<Vec<Result<String, String>>, String> {
        let batch = BatchArgs::parse(args).map_err(|error| error.to_json())?;
        let answers = self
            .runtime
            .block_on(self.tool.fetch_each(&batch, max_output_bytes));
        Ok(answers
            .into_iter()
            .map(|answer| answer.map(|built| built.json).map_err(|error| error.to_json()))
            .collect())
    }

    /// Shuts the browser standby's parked Chromium down and waits until it and
    /// its profile are gone.
    pub fn shutdown(&self) {
        self.runtime.block_on(self.tool.shutdown_browser_standby());
    }
}
