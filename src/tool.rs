//! `WebFetchTool`: the `web_fetch` pipeline of SRD Appendix B, stage by stage.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::args::{ArgsError, FetchArgs};
use crate::config::Settings;
use crate::error::{FetchError, TimeoutPhase};
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
