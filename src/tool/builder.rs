//! [`WebFetchToolBuilder`]: a [`WebFetchTool`] from settings plus the seams a host
//! may replace. Every seam has the default the SRD describes, so
//! `WebFetchTool::builder(settings).build()` is the tool of FR-WF-01.

use std::fmt;
use std::sync::Arc;

use crate::args::ArgsSchema;
use crate::config::{ConfigError, Settings};
use crate::content::pdf::worker::PdfWorker;
use crate::ssrf::{SsrfValidator, SystemValidator};
use crate::tokens::{Cl100k, TokenCounter};
use crate::transport::HttpClient;

use super::WebFetchTool;

/// Reads one environment variable; the proxy seam's stand-in for the process
/// environment.
type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Builds a [`WebFetchTool`]. Made by [`WebFetchTool::builder`].
///
/// | seam | default |
/// | --- | --- |
/// | [`ssrf_validator`](Self::ssrf_validator) | [`SystemValidator`]: the system resolver and the configured policy (FR-WF-06b) |
/// | [`token_counter`](Self::token_counter) | [`Cl100k`], OpenAI's cl100k_base (FR-WF-14) |
/// | [`root_certificate`](Self::root_certificate) | none: the webpki roots only |
/// | [`proxy_env`](Self::proxy_env) | the process environment, read only when `use_system_proxy` is set (FR-WF-10d) |
/// | [`schema`](Self::schema) | [`ArgsSchema::Srd`]: the arguments of FR-WF-02 exactly |
/// | [`browser_standby`](Self::browser_standby) | off: every browser render launches Chromium cold |
/// | [`pdf_worker`](Self::pdf_worker) | none: PDFs are read in-process, within the reader's own bounds |
#[must_use = "a builder does nothing until `build` is called"]
pub struct WebFetchToolBuilder {
    settings: Settings,
    validator: Option<Arc<dyn SsrfValidator>>,
    counter: Arc<dyn TokenCounter>,
    roots: Vec<Vec<u8>>,
    proxy_env: Option<EnvLookup>,
    schema: ArgsSchema,
    standby: bool,
    pdf_worker: Option<PdfWorker>,
}

impl WebFetchToolBuilder {
    pub(super) fn new(settings: Settings) -> WebFetchToolBuilder {
        WebFetchToolBuilder {
            settings,
            validator: None,
            counter: Arc::new(Cl100k),
            roots: Vec::new(),
            proxy_env: None,
            schema: ArgsSchema::Srd,
            standby: false,
            pdf_worker: None,
        }
    }

    /// Resolves host names and checks addresses with `validator` instead of the
    /// system resolver (FR-WF-06b; T-WF-INFRA-01's stub). The validator decides
    /// which addresses are allowed, so a host replacing it owns that policy.
    pub fn ssrf_validator(mut self, validator: Arc<dyn SsrfValidator>) -> WebFetchToolBuilder {
        self.validator = Some(validator);
        self
    }

    /// Counts tokens with the host's own counter (FR-WF-14: chunks are sized with
    /// the agent's tokenizer). It must be deterministic (T-WF-DET-03).
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> WebFetchToolBuilder {
        self.counter = counter;
        self
    }

    /// Trusts one more root certificate (DER) besides the webpki roots: a
    /// corporate CA, or a self-signed test server. Applies to every request of the
    /// tool, robots.txt and browser subrequests included. Checked by
    /// [`build`](Self::build).
    pub fn root_certificate(mut self, der: Vec<u8>) -> WebFetchToolBuilder {
        self.roots.push(der);
        self
    }

    /// Reads the proxy variables (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, lower
    /// case too) through `env` instead of the process environment. They are still
    /// ignored unless `use_system_proxy` is set (FR-WF-10d).
    pub fn proxy_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> WebFetchToolBuilder {
        self.proxy_env = Some(Arc::new(env));
        self
    }

    /// Accepts arguments of `schema`: [`ArgsSchema::Srd`] (the default) is
    /// FR-WF-02 exactly; [`ArgsSchema::Extended`] adds the extension properties
    /// (`extraction`, `start_chunk`) to what the tool advertises
    /// ([`ToolExecutor::input_schema`](crate::executor::ToolExecutor::input_schema))
    /// and what [`WebFetchTool::call`] and `execute` accept. The MCP server and the
    /// CLI use the extended schema; a host opts in the same way.
    pub fn schema(mut self, schema: ArgsSchema) -> WebFetchToolBuilder {
        self.schema = schema;
        self
    }

    /// Keeps one Chromium launched ahead for the next browser render (extension
    /// for long-lived hosts: the MCP server, `serve`, an embedding agent). Each
    /// Chromium still serves exactly one call on a fresh profile
    /// (BROWSER-ISO-01); at most one is idle. The first browser render launches
    /// cold and parks the next.
    pub fn browser_standby(mut self, on: bool) -> WebFetchToolBuilder {
        self.standby = on;
        self
    }

    /// Reads each PDF in a worker process (extension): `worker`'s
    /// program run as `program pdf-worker`, with its address space and CPU time
    /// capped, no file or socket it may open, killed when the call ends. A
    /// worker that dies, hits a limit or answers garbage fails that call with
    /// `extraction_failed` (`pdf_resource_limit` or `pdf_reader_crashed`); the
    /// tool goes on. The answer is the in-process reader's, byte for byte. The
    /// `webfetch` front doors use it; without it (the default) PDFs are read
    /// in-process, within the same parser bounds but no memory cap of their own.
    pub fn pdf_worker(mut self, worker: PdfWorker) -> WebFetchToolBuilder {
        self.pdf_worker = Some(worker);
        self
    }

    /// The tool, or the error of a root certificate that does not parse (or of
    /// a fleet Redis that can not be set up). With
    /// `[tools.webfetch.fleet] redis_url`, the tool's document cache, its
    /// politeness and (with `share_robots`) its robots.txt outcomes are the
    /// fleet's; nothing is connected before the first call.
    pub fn build(self) -> Result<WebFetchTool, ConfigError> {
        let settings = Arc::new(self.settings);
        let validator = self
            .validator
            .unwrap_or_else(|| Arc::new(SystemValidator::new(&settings.security)));
        let mut client = HttpClient::new(Arc::clone(&settings), validator);
        for der in self.roots {
            client = client.with_root_certificate(der).map_err(|error| {
                ConfigError::new(format!("invalid root certificate: {}", error.message))
            })?;
        }
        if let Some(env) = self.proxy_env {
            client = client.with_proxy_env(&*env);
        }
        #[cfg(feature = "fleet")]
        let fleet = crate::fleet::Fleet::from_settings(&settings)?;
        #[cfg(feature = "fleet")]
        if let Some(fleet) = &fleet {
            client = client.with_politeness(crate::politeness::Politeness::new(
                settings.fleet.per_origin_in_flight,
                Some(Arc::clone(&fleet.limiter)),
            ));
        }
        let pdf_worker = self
            .pdf_worker
            .map(|worker| Arc::new(worker.resolved(&settings)));
        let mut tool =
            WebFetchTool::from_parts(settings, client, self.counter).with_schema(self.schema);
        tool.pdf_worker = pdf_worker;
        #[cfg(feature = "fleet")]
        let tool = match fleet {
            Some(fleet) => tool.with_shared_state(fleet.documents, fleet.robots),
            None => tool,
        };
        Ok(if self.standby {
            tool.with_browser_standby()
        } else {
            tool
        })
    }
}

impl fmt::Debug for WebFetchToolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebFetchToolBuilder")
            .field("custom_validator", &self.validator.is_some())
            .field("roots", &self.roots.len())
            .field("custom_proxy_env", &self.proxy_env.is_some())
            .field("schema", &self.schema)
            .field("standby", &self.standby)
            .field("pdf_worker", &self.pdf_worker)
            .finish_non_exhaustive()
    }
}
