//! `WebFetchTool`: the `web_fetch` pipeline of SRD Appendix B, stage by stage.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::args::{ArgsError, FetchArgs};
use crate::config::Settings;
use crate::error::{FetchError, TimeoutPhase};
use crate::executor::{ToolCtx, ToolError, ToolExecutor, ToolFut};
use crate::ssrf::{self, SsrfValidator, SystemValidator};
use crate::url::CanonicalUrl;

/// The `web_fetch` tool: configuration plus the seams it runs with.
#[derive(Clone)]
pub struct WebFetchTool {
    settings: Arc<Settings>,
    validator: Arc<dyn SsrfValidator>,
}

impl WebFetchTool {
    /// A tool with the system resolver.
    pub fn new(settings: Settings) -> WebFetchTool {
        let validator = Arc::new(SystemValidator::new(&settings.security));
        WebFetchTool::with_validator(settings, validator)
    }

    /// A tool with an explicit validator (tests use `ssrf::StubValidator`).
    pub fn with_validator(settings: Settings, validator: Arc<dyn SsrfValidator>) -> WebFetchTool {
        WebFetchTool {
            settings: Arc::new(settings),
            validator,
        }
    }

    /// The resolved configuration.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether the URL's host is in `js_heavy_domains` (FR-WF-RENDER-JS-01).
    fn is_js_heavy(&self, url: &CanonicalUrl) -> bool {
        let host = url.host_str();
        self.settings
            .rendering
            .js_heavy_domains
            .iter()
            .any(|entry| match entry.strip_prefix('.') {
                Some(suffix) => host.len() > suffix.len() && host.ends_with(entry.as_str()),
                None => host == entry,
            })
    }

    /// Runs one call on raw JSON arguments and returns the response JSON, at most
    /// `effective_max_bytes` long (FR-WF-03a), or the error envelope.
    pub async fn call(
        &self,
        args: &Value,
        effective_max_bytes: usize,
    ) -> Result<String, FetchError> {
        let args = FetchArgs::from_json(args).map_err(ArgsError::into_fetch_error)?;
        self.fetch(&args, effective_max_bytes).await
    }

    /// Runs the pipeline on validated arguments.
    pub async fn fetch(
        &self,
        args: &FetchArgs,
        _effective_max_bytes: usize,
    ) -> Result<String, FetchError> {
        let deadline = Instant::now() + self.settings.timeout();
        let url = CanonicalUrl::parse(&args.url)?;
        let _addresses = self.authorize(&url, deadline).await?;
        Err(FetchError::internal("not_implemented"))
    }

    /// The SSRF stage (Appendix F.2): ports, literal checks, one resolution.
    async fn authorize(
        &self,
        url: &CanonicalUrl,
        deadline: Instant,
    ) -> Result<Vec<std::net::IpAddr>, FetchError> {
        let settings = Arc::clone(&self.settings);
        let validator = Arc::clone(&self.validator);
        let target = url.clone();
        let work = tokio::task::spawn_blocking(move || {
            ssrf::authorize(&target, &settings.security, validator.as_ref())
        });
        match tokio::time::timeout_at(deadline, work).await {
            Ok(joined) => {
                joined.map_err(|e| FetchError::internal(format!("resolver task failed: {e}")))?
            }
            Err(_) => Err(FetchError::timeout(
                budget_ms(self.settings.timeout()),
                TimeoutPhase::Dns,
            )),
        }
    }
}

fn budget_ms(budget: Duration) -> u64 {
    u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)
}

/// Appendix E's `page_load_buffer_s` default (FR-WF-TIMEOUT-01).
const PAGE_LOAD_BUFFER_SECS: u64 = 5;

impl ToolExecutor for WebFetchTool {
    fn name(&self) -> &'static str {
        "web_fetch"
    }

    fn description(&self) -> &'static str {
        "Fetch a URL and extract its content as markdown"
    }

    fn input_schema(&self) -> Value {
        crate::args::input_schema()
    }

    /// Network egress (NFR-WF-OP-01).
    fn is_side_effecting(&self) -> bool {
        true
    }

    /// FR-WF-OP-02; the host's allowlist and global deny mode are applied by the host
    /// (see `config::Loaded::requires_approval`).
    fn requires_approval(&self) -> bool {
        !self.settings.allow_auto_execution
    }

    /// `timeout_seconds + network_idle_ms/1000 + page_load_buffer_s + 2s`
    /// (FR-WF-TIMEOUT-01), so the tool's own structured timeout fires first.
    fn timeout(&self) -> Option<Duration> {
        let secs = u64::from(self.settings.timeout_seconds)
            + u64::from(self.settings.browser.network_idle_ms) / 1000
            + PAGE_LOAD_BUFFER_SECS
            + 2;
        Some(Duration::from_secs(secs))
    }

    /// `web_fetch https://host/path (http mode)`: no query, no userinfo (E.4).
    fn approval_summary(&self, args: &Value) -> String {
        let url = args.get("url").and_then(Value::as_str).unwrap_or("");
        let force_browser = args
            .get("force_browser")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        match CanonicalUrl::parse(url) {
            Ok(url) => {
                let mode = if force_browser || self.is_js_heavy(&url) {
                    "browser"
                } else {
                    "http"
                };
                format!("web_fetch {} ({mode} mode)", url.redacted())
            }
            Err(_) => "web_fetch <invalid URL> (http mode)".to_owned(),
        }
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a mut ToolCtx) -> ToolFut<'a> {
        Box::pin(async move {
            ctx.allow_truncation = false;
            let effective_max_bytes = ctx.effective_max_bytes();
            let failed = |error: FetchError| ToolError::ExecutionFailed {
                tool: "web_fetch".to_owned(),
                message: error.to_json(),
            };
            let args = match FetchArgs::from_json(&args) {
                Ok(args) => args,
                Err(ArgsError::Schema(error)) => {
                    return Err(ToolError::BadArgs {
                        message: error.message,
                    });
                }
                Err(ArgsError::Rule(error)) => return Err(failed(error)),
            };
            self.fetch(&args, effective_max_bytes).await.map_err(failed)
        })
    }
}
