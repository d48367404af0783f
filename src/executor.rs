//! The seam a host agent embeds (SRD Appendix E): the `ToolExecutor` trait, the
//! `ToolCtx` output contract, `ToolError`, and the error formatting with the JSON
//! passthrough of FR-ERR-JSON-01.
//!
//! The SRD was written for an agent called Forge; these are the same shapes, so a
//! host adapter is a few lines.
//!
//! ```no_run
//! use webfetch::{
//!     LoadOptions, Registration, ToolCtx, ToolExecutor, ToolResult, WebFetchTool, format_error,
//!     load_str,
//! };
//!
//! # async fn host() -> Result<(), Box<dyn std::error::Error>> {
//! let loaded = load_str("[tools.webfetch]\nenabled = true\n", LoadOptions::default())?;
//! // Register only when the 5.2 rules say so.
//! if loaded.registration() == Registration::Registered {
//!     let tool = WebFetchTool::new(loaded.settings);
//!     assert_eq!(tool.name(), "web_fetch");
//!     let mut ctx = ToolCtx::new(64 * 1024, 48 * 1024);
//!     let args = serde_json::json!({ "url": "https://example.com/" });
//!     // The executor's part: the tool's own timeout, and a failure formatted for
//!     // the model (E.2).
//!     let after = tool.timeout().expect("web_fetch has a timeout");
//!     let result = match tokio::time::timeout(after, tool.execute(args, &mut ctx)).await {
//!         Ok(Ok(content)) => ToolResult::success(content),
//!         Ok(Err(error)) => format_error(tool.name(), error),
//!         Err(_) => ToolResult::error(format!("web_fetch timed out after {after:?}")),
//!     };
//!     // `result.content` is the response JSON, or the error envelope when `is_error`.
//!     println!("{}", result.content);
//! }
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use crate::error::FetchError;

/// The future a tool returns: the output text, or a [`ToolError`].
pub type ToolFut<'a> = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send + 'a>>;

/// The per-call context a host gives a tool (Appendix E.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCtx {
    /// The host's cap on one tool output, in bytes.
    pub max_output_bytes: usize,
    /// What is left of the model's context, in bytes.
    pub available_capacity_bytes: usize,
    /// Whether the host may cut the output and append its truncation marker;
    /// `web_fetch` clears it so its JSON is never cut (FR-WF-03a).
    pub allow_truncation: bool,
}

impl ToolCtx {
    /// A context with truncation allowed, as a host creates it.
    pub fn new(max_output_bytes: usize, available_capacity_bytes: usize) -> ToolCtx {
        ToolCtx {
            max_output_bytes,
            available_capacity_bytes,
            allow_truncation: true,
        }
    }

    /// `min(max_output_bytes, available_capacity_bytes)` (FR-WF-03a).
    pub fn effective_max_bytes(&self) -> usize {
        self.max_output_bytes.min(self.available_capacity_bytes)
    }
}

/// How a tool call failed, as the executor framework sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments failed schema validation (reserved for that, FR-WF-ERR-BADARGS-01).
    #[error("invalid arguments: {message}")]
    BadArgs {
        /// The schema error.
        message: String,
    },
    /// The tool ran and failed; `message` is the JSON envelope for `web_fetch`
    /// (FR-WF-18).
    #[error("{tool} failed: {message}")]
    ExecutionFailed {
        /// The tool name.
        tool: String,
        /// The failure; a JSON object for structured errors.
        message: String,
    },
    /// The executor's own timeout fired before the tool answered.
    #[error("{tool} timed out after {after:?}")]
    Timeout {
        /// The tool name.
        tool: String,
        /// The timeout that fired.
        after: Duration,
    },
}

/// A tool's answer as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The text handed to the model.
    pub content: String,
    /// Whether it is an error.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn success(content: String) -> ToolResult {
        ToolResult {
            content,
            is_error: false,
        }
    }

    /// An error result.
    pub fn error(content: String) -> ToolResult {
        ToolResult {
            content,
            is_error: true,
        }
    }
}

/// A tool the executor can run (Appendix E.1).
pub trait ToolExecutor: Send + Sync {
    /// The canonical, case-sensitive name (FR-WF-01).
    fn name(&self) -> &'static str;
    /// One line for the model.
    fn description(&self) -> &'static str;
    /// The JSON schema of the arguments.
    fn input_schema(&self) -> Value;
    /// Whether a call has effects outside the process (network egress).
    fn is_side_effecting(&self) -> bool;
    /// Whether the host must ask the user first.
    fn requires_approval(&self) -> bool;
    /// The executor-level timeout; must exceed every internal budget.
    fn timeout(&self) -> Option<Duration>;
    /// What the approval prompt shows, secrets redacted.
    fn approval_summary(&self, args: &Value) -> String;
    /// Runs one call.
    fn execute<'a>(&'a self, args: Value, ctx: &'a mut ToolCtx) -> ToolFut<'a>;
}

/// Formats a tool failure for the model (Appendix E.2). A message that is a JSON
/// object passes through unprefixed (FR-ERR-JSON-01); schema failures of `web_fetch`
/// become the `bad_args` envelope (FR-ERR-JSON-02).
pub fn format_error(tool: &str, error: ToolError) -> ToolResult {
    match error {
        ToolError::ExecutionFailed { message, .. } if is_json_object(&message) => {
            ToolResult::error(message)
        }
        ToolError::ExecutionFailed { message, .. } => {
            ToolResult::error(format!("{tool} failed: {message}"))
        }
        ToolError::BadArgs { message } if tool == "web_fetch" => {
            ToolResult::error(FetchError::schema_violation(message).to_json())
        }
        ToolError::BadArgs { message } => {
            ToolResult::error(format!("{tool}: invalid arguments: {message}"))
        }
        ToolError::Timeout { .. } => ToolResult::error(error.to_string()),
    }
}

fn is_json_object(message: &str) -> bool {
    message.starts_with('{')
        && serde_json::from_str::<serde_json::Map<String, Value>>(message).is_ok()
}

/// `work` under `tool`'s own timeout ([`ToolExecutor::timeout`]), as a host's
/// executor runs `execute`: for the front doors that run a tool's work their own
/// way (the MCP server, `serve`).
pub(crate) async fn within_timeout<T>(
    tool: &dyn ToolExecutor,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    match tool.timeout() {
        Some(after) => tokio::time::timeout(after, work).await.unwrap_or_else(|_| {
            Err(ToolError::Timeout {
                tool: tool.name().to_owned(),
                after,
            })
        }),
        None => work.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_pass_through_unprefixed() {
        let envelope = FetchError::redirect_limit(6, 5).to_json();
        let result = format_error(
            "web_fetch",
            ToolError::ExecutionFailed {
                tool: "web_fetch".into(),
                message: envelope.clone(),
            },
        );
        assert_eq!(result, ToolResult::error(envelope));
        let legacy = format_error(
            "other",
            ToolError::ExecutionFailed {
                tool: "other".into(),
                message: "{not json".into(),
            },
        );
        assert_eq!(legacy.content, "other failed: {not json");
    }

    #[test]
    fn schema_errors_of_web_fetch_are_bad_args_envelopes() {
        let result = format_error(
            "web_fetch",
            ToolError::BadArgs {
                message: "missing url".into(),
            },
        );
        let value: Value = serde_json::from_str(&result.content).unwrap();
        assert_eq!(value["code"], "bad_args");
        assert_eq!(value["retryable"], false);
        assert_eq!(value["details"]["validation"], "missing url");
    }

    #[test]
    fn effective_max_bytes_is_the_smaller_budget() {
        assert_eq!(ToolCtx::new(100, 40).effective_max_bytes(), 40);
        assert_eq!(ToolCtx::new(10, 40).effective_max_bytes(), 10);
    }
}
