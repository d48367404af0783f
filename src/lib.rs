//! # webfetch
//!
//! The `web_fetch` tool of the WebFetch SRD v2.4: an LLM agent hands it a URL and
//! gets back clean, token-bounded Markdown chunks as strict JSON, without ever
//! reaching a private network, a cloud metadata endpoint, a page robots.txt forbids,
//! or more bytes than it can take.
//!
//! ## Embedding it
//!
//! A host loads the `[tools.webfetch]` configuration ([`load_str`], [`load_file`]),
//! builds a [`WebFetchTool`] ([`WebFetchTool::builder`] replaces the SSRF resolver,
//! the token counter, the trusted roots or the proxy environment) and registers it
//! with its executor through the [`ToolExecutor`] seam of SRD Appendix E. A call
//! returns the response JSON ([`FetchResponse`] reads it back) or the FR-WF-18 error
//! envelope ([`FetchError`]).
//!
//! ```
//! use std::collections::HashMap;
//! use std::sync::Arc;
//!
//! use webfetch::{
//!     LoadOptions, Registration, ToolCtx, ToolExecutor, ToolResult, WebFetchTool, format_error,
//!     load_str,
//! };
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let loaded = load_str("[tools.webfetch]\nenabled = true\ntimeout_seconds = 20\n", LoadOptions::default())?;
//! let mut tools: HashMap<&str, Arc<dyn ToolExecutor>> = HashMap::new();
//! // Register only when the configuration says so (SRD 5.2).
//! if loaded.registration() == Registration::Registered {
//!     let tool = WebFetchTool::builder(loaded.settings).build()?;
//!     tools.insert(tool.name(), Arc::new(tool));
//! }
//!
//! // The model asks for a cloud metadata endpoint: refused before any connection.
//! let tool = &tools["web_fetch"];
//! let mut ctx = ToolCtx::new(64 * 1024, 48 * 1024);
//! let args = serde_json::json!({ "url": "http://169.254.169.254/latest/meta-data/" });
//! // The executor's part (Appendix E): `execute` (under `tool.timeout()`, left out
//! // here), and a failure formatted for the model.
//! let result = match tool.execute(args, &mut ctx).await {
//!     Ok(content) => ToolResult::success(content),
//!     Err(error) => format_error(tool.name(), error),
//! };
//! assert!(result.is_error);
//! let envelope: serde_json::Value = serde_json::from_str(&result.content)?;
//! assert_eq!(envelope["code"], "ssrf_blocked");
//! assert_eq!(envelope["details"]["blocked_ip"], "169.254.169.254");
//! # Ok(())
//! # }
//! ```
//!
//! The MCP server ([`mcp`]) and the HTTP server ([`serve`]) are the same tool behind
//! other front doors.
//!
//! ## Layout
//!
//! The pipeline follows SRD Appendix B, one module per stage. Parsers, extraction,
//! chunking and fitting are pure functions over bytes and strings; only `transport`,
//! the browser renderer and `cache` touch the outside world. Those modules are
//! private: the items above are the API.
#![forbid(unsafe_code)]

/// What the crate's own integration tests, benches, examples and fuzz targets
/// reach past the API (feature `internals`; not an API).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;

/// Test doubles (T-WF-INFRA-01): for this crate's tests, benches and fuzz targets.
#[cfg(any(test, feature = "internals"))]
#[doc(hidden)]
pub mod testing;

mod args;
mod batch;
mod bot_auth;
mod budget;
mod cache;
mod canonical_url;
mod chunk;
mod config;
mod content;
mod error;
mod executor;
mod extract;
mod notes;
mod offline;
mod output;
mod page;
mod pass;
mod progress;
mod render;
mod robots;
mod ssrf;
mod tokens;
mod tool;
mod transport;
mod vocabulary;

// Extension: the fleet's shared state on Redis, and the per-origin
// politeness limit (process-wide, or fleet-wide through `fleet`).
#[cfg(feature = "fleet")]
mod fleet;
mod politeness;

pub mod mcp;
pub mod serve;

pub use self::args::{ArgsError, ArgsSchema, FetchArgs, SavedPage};
pub use self::batch::{BATCH_TOOL_NAME, BatchArgs, BatchItem, BatchResponse, MAX_BATCH_URLS};
pub use self::bot_auth::{BotAuth, DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, generate_key};
pub use self::canonical_url::{CanonicalUrl, Origin, OriginError, TargetHost};
pub use self::config::{
    ApprovalSettings, BlockToggles, BrowserSettings, CacheSettings, ConfigError, ContentSettings,
    Contract, ExtractionSettings, FleetKey, FleetSettings, LoadOptions, Loaded, RedisSettings,
    RedisUrl, Registration, RenderingSettings, RobotsSettings, SecuritySettings, ServeSettings,
    Settings, ToolsMode, load_file, load_str,
};
pub use self::content::pdf::worker::PdfWorker;
pub use self::error::{
    ErrorCode, ErrorDetails, ErrorEnvelope, FetchError, PoliteRefusal, TimeoutPhase,
    UnreadableReason,
};
pub use self::executor::{ToolCtx, ToolError, ToolExecutor, ToolFut, ToolResult, format_error};
pub use self::extract::auto::UnknownPageType;
pub use self::notes::{Note, Notes};
pub use self::offline::body_cap as offline_body_cap;
pub use self::output::{Built, FetchChunk, FetchResponse, TruncationReason};
pub use self::ssrf::{SsrfError, SsrfValidator, SystemValidator};
pub use self::tokens::{Cl100k, SpanCounter, TokenCounter};
pub use self::tool::{WebFetchTool, WebFetchToolBuilder};
pub use self::vocabulary::{
    ExtractionMode, Format, Formats, PageType, RenderingMethod, Timestamp, TimestampError,
    UnknownFormat, UnknownMode,
};
