//! `WebFetchTool`: the `web_fetch` pipeline of SRD Appendix B, stage by stage:
//! validate (with the SSRF checks that need no network), cache read, SSRF,
//! robots, render (HTTP first, browser when forced, JS-heavy or an SPA shell),
//! content type and charset, extract, chunk, fit, cache write. Notes are
//! gathered in stage order; `Notes` keeps the canonical order whatever the
//! insertion order (FR-WF-NOTES-ORDER-01).
//!
//! The SSRF and robots stages are not run here: the renderers' requests go through
//! the client, which checks every URL (the first one included) in the FR-WF-07e
//! order before it is requested, within one [`Pass`] per call (one resolution per
//! host) and with one [`RobotsHopCheck`] per call. The browser renderer has the
//! client check the page before Chromium starts, so the Appendix B order holds in
//! both modes.
//!
//! Extensions (never used unless asked for, so every SRD response is unchanged):
//! a tool built with the [`schema`](WebFetchToolBuilder::schema)`(ArgsSchema::Extended)`
//! accepts the extension properties of [`crate::args`]; `extraction` (or the
//! config's `[tools.webfetch.extraction] mode`) picks the HTML extraction, whose
//! documents the cache keeps under their own key; `[tools.webfetch.browser]
//! robots_for_frames` has the browser check frame documents against
//! robots.txt too, and its documents are cached under their own key as well.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use tokio::time::Instant;
use tracing::Instrument;

use crate::args::{ArgsError, ArgsSchema, FetchArgs};
use crate::budget::ReadBudget;
use crate::cache::DiskCache;
use crate::cache::shared::SharedDocuments;
use crate::canonical_url::CanonicalUrl;
use crate::config::{RenderingSettings, Settings};
use crate::content::media_type::MediaKind;
use crate::error::{ErrorCode, ErrorDetails, FetchError, TimeoutPhase};
use crate::executor::{ToolCtx, ToolError, ToolExecutor, ToolFut};
use crate::extract::{self};
use crate::notes::{Note, Notes};
use crate::offline;
use crate::output::{self, BuildOptions, Built, ResponseMeta};
use crate::page::{DecodedPage, Reading};
use crate::pass::Pass;
use crate::progress::{self, Stage};
use crate::render::browser::Standby;
use crate::render::{self, FetchedDocument, RenderContext, RenderPlan};
use crate::robots::RobotsChecker;
use crate::robots::http_source::RobotsHopCheck;
#[cfg(feature = "fleet")]
use crate::robots::shared::SharedRobots;
use crate::tokens::TokenCounter;
use crate::transport::HttpClient;
use crate::vocabulary::ExtractionMode;
use crate::vocabulary::Timestamp;
use crate::vocabulary::{ExtractedDocument, RenderingMethod};

mod builder;
mod store;

pub use self::builder::WebFetchToolBuilder;
use self::store::{DocumentStore, Looked, Lookup, Put};

/// The `web_fetch` tool: configuration plus the seams it runs with. Cheap to clone;
/// clones share the HTTP client, the robots.txt origin cache and the disk cache
/// (or the fleet's Redis).
#[derive(Clone)]
pub struct WebFetchTool {
    settings: Arc<Settings>,
    client: HttpClient,
    robots: Arc<RobotsChecker>,
    cache: Arc<Mutex<Option<Arc<DiskCache>>>>,
    /// Extension: the fleet's document cache, which replaces the
    /// disk cache when `[tools.webfetch.fleet] redis_url` is set.
    shared: Option<Arc<dyn SharedDocuments>>,
    /// Extension: the cap on concurrent browser renders shared by all clones
    /// (`[tools.webfetch.browser] max_concurrent_renders`).
    renders: Arc<tokio::sync::Semaphore>,
    schema: ArgsSchema,
    standby: Option<Standby>,
    /// Sizes chunks and fits the output (FR-WF-14); cl100k_base by default.
    counter: Arc<dyn TokenCounter>,
    /// Extension: the worker process PDFs are read in, when the
    /// builder's [`pdf_worker`](WebFetchToolBuilder::pdf_worker) set one.
    pdf_worker: Option<Arc<crate::PdfWorker>>,
}

impl std::fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetchTool")
            .field("client", &self.client)
            .field("schema", &self.schema)
            .field("browser_standby", &self.standby.is_some())
            .finish_non_exhaustive()
    }
}

/// What the renderers of one call share: its pass, its robots.txt check, the
/// document deadline and the extraction mode.
struct Call<'a> {
    url: &'a CanonicalUrl,
    pass: &'a Pass,
    robots: &'a RobotsHopCheck<'a>,
    deadline: Instant,
    mode: ExtractionMode,
}

/// The document a rendering stage produced, before chunking.
struct Rendered {
    final_url: CanonicalUrl,
    method: RenderingMethod,
    document: ExtractedDocument,
    /// The HTTP result stands in for a browser render the plan wanted, because
    /// the browser was unavailable (FR-WF-12d).
    stands_in_for_browser: bool,
}

impl WebFetchTool {
    /// A tool with every default seam: the system resolver, cl100k_base, the
    /// webpki roots. [`builder`](Self::builder) replaces any of them.
    ///
    /// # Panics
    ///
    /// Only if `settings.fleet` names a Redis CA that does not parse, which the
    /// configuration loader refuses; [`builder`](Self::builder)`.build()`
    /// returns that error instead.
    pub fn new(settings: Settings) -> WebFetchTool {
        WebFetchTool::builder(settings)
            .build()
            .expect("a builder without root certificates, on checked settings, cannot fail")
    }

    /// A builder for a tool with other seams than the defaults.
    pub fn builder(settings: Settings) -> WebFetchToolBuilder {
        WebFetchToolBuilder::new(settings)
    }

    fn from_parts(
        settings: Arc<Settings>,
        client: HttpClient,
        counter: Arc<dyn TokenCounter>,
    ) -> WebFetchTool {
        WebFetchTool {
            client,
            robots: Arc::new(RobotsChecker::new(Arc::clone(&settings))),
            cache: Arc::new(Mutex::new(None)),
            shared: None,
            renders: Arc::new(tokio::sync::Semaphore::new(
                settings.browser.max_concurrent_renders as usize,
            )),
            settings,
            schema: ArgsSchema::Srd,
            standby: None,
            counter,
            pdf_worker: None,
        }
    }

    /// The same tool accepting arguments of `schema` (the builder's
    /// [`schema`](WebFetchToolBuilder::schema)): for the front doors given a
    /// built tool (the MCP server, `serve`).
    pub(crate) fn with_schema(mut self, schema: ArgsSchema) -> WebFetchTool {
        self.schema = schema;
        self
    }

    /// The same tool keeping one Chromium launched ahead for its next browser
    /// render (the builder's
    /// [`browser_standby`](WebFetchToolBuilder::browser_standby)): for the
    /// long-lived front doors given a built tool (the MCP server, `serve`). A
    /// tool that has a standby already keeps it, so `serve`'s front doors share
    /// one.
    pub(crate) fn with_browser_standby(mut self) -> WebFetchTool {
        self.standby.get_or_insert_with(Standby::new);
        self
    }

    /// Shuts down the browser standby's parked Chromium, if any, and waits
    /// until it and its profile are gone (a long-lived host, before it exits).
    pub async fn shutdown_browser_standby(&self) {
        if let Some(standby) = &self.standby {
            standby.shutdown().await;
        }
    }

    /// The argument schema this tool accepts.
    pub fn schema(&self) -> ArgsSchema {
        self.schema
    }

    /// The resolved configuration.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether the URL's host is in `js_heavy_domains` (FR-WF-RENDER-JS-01).
    fn is_js_heavy(&self, url: &CanonicalUrl) -> bool {
        render::is_js_heavy(url.host_str(), &self.settings.rendering.js_heavy_domains)
    }

    /// The same tool on a fleet's shared state: its document cache
    /// instead of the disk's, its robots.txt outcomes behind this process's
    /// cache. The client's politeness is set by the builder.
    #[cfg(feature = "fleet")]
    fn with_shared_state(
        mut self,
        documents: Option<Arc<dyn SharedDocuments>>,
        robots: Option<Arc<dyn SharedRobots>>,
    ) -> WebFetchTool {
        let checker = RobotsChecker::new(Arc::clone(&self.settings)).with_shared(robots);
        self.robots = Arc::new(checker);
        self.shared = documents;
        self
    }

    /// The token counter chunks are measured with.
    pub(crate) fn counter(&self) -> &dyn TokenCounter {
        &*self.counter
    }

    /// Where documents are kept: the fleet's Redis when configured, else the
    /// disk cache, opened on first use. A directory that cannot be created
    /// disables caching for this invocation only (FR-WF-CCH-ENABLE-02): the next
    /// call tries again. `None` when caching is off.
    fn document_store(&self) -> Option<DocumentStore> {
        if self.settings.fleet.redis.is_some() {
            return self.shared.clone().map(DocumentStore::Shared);
        }
        let mut slot = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = DiskCache::open(&self.settings.cache).map(Arc::new);
        }
        slot.clone().map(DocumentStore::Disk)
    }

    /// Runs one call on raw JSON arguments, validated against this tool's schema
    /// ([`schema`](WebFetchToolBuilder::schema)), then as [`fetch`](Self::fetch)
    /// within the tool's own timeout ([`ToolExecutor::timeout`], FR-WF-TIMEOUT-01),
    /// as a host's executor and the MCP and HTTP front doors run it: a caller
    /// with no timeout of its own (the CLI, Python) never waits past it.
    pub async fn call(
        &self,
        args: &Value,
        effective_max_bytes: usize,
    ) -> Result<Built, FetchError> {
        let args = FetchArgs::parse(args, self.schema).map_err(ArgsError::into_fetch_error)?;
        self.within_own_timeout(self.fetch(&args, effective_max_bytes))
            .await
    }

    /// `call` under the tool's own timeout: the `timeout` envelope (phase
    /// unknown) when that backstop, past `timeout_seconds` and the page-load
    /// buffer, fires first.
    pub(crate) async fn within_own_timeout(
        &self,
        call: impl Future<Output = Result<Built, FetchError>>,
    ) -> Result<Built, FetchError> {
        let Some(after) = ToolExecutor::timeout(self) else {
            return call.await;
        };
        tokio::time::timeout(after, call).await.unwrap_or_else(|_| {
            let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
            Err(FetchError::timeout(after_ms, TimeoutPhase::unknown()))
        })
    }

    /// Runs the pipeline on validated arguments: the response, its JSON at most
    /// `effective_max_bytes` long (FR-WF-03a), also saying where a response cut
    /// by the output budget may be continued (extension, `start_chunk`) for a
    /// front door that tells its caller how to read on; or the error envelope.
    /// One typed entry point: the request carries its extensions.
    ///
    /// Its start and end are logged with the query redacted (FR-WF-19b, 19c).
    /// Every event of the call, whichever module emits it (robots.txt, the
    /// client, the cache, the browser), is inside the `web_fetch` span, which
    /// carries the FR-WF-19c fields: `requested_host`, `rendering_method` (the
    /// planned method, then the one used) and `cache_hit`. The span is at ERROR
    /// level so that any filter that lets an event through keeps its context.
    pub async fn fetch(
        &self,
        args: &FetchArgs,
        effective_max_bytes: usize,
    ) -> Result<Built, FetchError> {
        if args.page.is_some() {
            // Extension: a saved page, read offline (`webfetch extract`), within
            // the call's time as a fetch is.
            let (settings, counter) = (Arc::clone(&self.settings), Arc::clone(&self.counter));
            let (args, worker) = (args.clone(), self.pdf_worker.clone());
            let deadline = Instant::now() + self.settings.timeout();
            return ReadBudget::run_blocking(
                Some(deadline.into_std()),
                self.settings.timeout_ms(),
                move || {
                    let worker = worker.as_deref();
                    offline::respond(&settings, &args, effective_max_bytes, &*counter, worker)
                },
            )
            .await;
        }
        let url = CanonicalUrl::parse(&args.url);
        let host = url
            .as_ref()
            .map(|u| u.host_str().to_owned())
            .unwrap_or_default();
        let span = tracing::error_span!(
            "web_fetch",
            requested_host = %host,
            rendering_method = tracing::field::Empty,
            cache_hit = tracing::field::Empty,
        );
        self.fetch_logged(args, url, &host, effective_max_bytes)
            .instrument(span)
            .await
    }

    async fn fetch_logged(
        &self,
        args: &FetchArgs,
        url: Result<CanonicalUrl, FetchError>,
        host: &str,
        effective_max_bytes: usize,
    ) -> Result<Built, FetchError> {
        let path = url.as_ref().map(|u| u.redacted()).unwrap_or_default();
        tracing::info!(event = "fetch_start", requested_host = %host, url = %path);
        let mut cache_hit = false;
        let result = match url {
            Ok(url) => {
                self.run(args, &url, effective_max_bytes, &mut cache_hit)
                    .await
            }
            Err(error) => Err(error),
        };
        match &result {
            Ok((_, method)) => tracing::info!(
                event = "fetch_complete",
                requested_host = %host,
                url = %path,
                rendering_method = %method,
                cache_hit,
            ),
            Err(error) => {
                let event = if error.code == ErrorCode::SsrfBlocked {
                    "ssrf_blocked"
                } else {
                    "fetch_failed"
                };
                let blocked_ip = match &error.details {
                    ErrorDetails::SsrfBlocked { blocked_ip, .. } => blocked_ip.to_string(),
                    _ => String::new(),
                };
                tracing::warn!(
                    event,
                    requested_host = %host,
                    url = %path,
                    cache_hit,
                    error_code = %error.code,
                    blocked_ip,
                    "{}",
                    error.message
                );
            }
        }
        result.map(|(built, _)| built)
    }

    /// The stages of Appendix B after URL validation.
    async fn run(
        &self,
        args: &FetchArgs,
        url: &CanonicalUrl,
        effective_max_bytes: usize,
        cache_hit: &mut bool,
    ) -> Result<(Built, RenderingMethod), FetchError> {
        let mode = args.extraction_mode(&self.settings);
        let plan = render::plan(args.force_browser, url, &self.settings);
        // The SSRF checks that need no network (an IP literal's address, the
        // port; the scheme and host form were checked by parsing) run before
        // any cache look-up, disk or Redis: a cached entry is never served for
        // a URL that a fetch would refuse before sending anything, and the
        // error is the fetch's own (Appendix B: SSRFCheck).
        self.client.check_offline(url)?;
        let store = self.document_store();
        let mut notes = Notes::new();

        // CheckCache (skipped, not disabled, by no_cache: FR-WF-17). With the
        // fleet's store, a miss may wait for another instance fetching the same
        // page, within this call's document budget.
        let mut flight = None;
        let hit = match (&store, args.no_cache) {
            (Some(store), false) => {
                let methods: Vec<RenderingMethod> = std::iter::once(plan.first_method())
                    .chain(plan.other_method())
                    .collect();
                let lookup = Lookup {
                    url,
                    methods: &methods,
                    mode,
                    settings: &self.settings,
                    wait_until: Instant::now() + self.settings.timeout(),
                };
                match store.lookup(lookup).await {
                    Looked::Hit(hit, method) => Some((hit, method)),
                    Looked::Miss(miss) => {
                        flight = Some(miss);
                        None
                    }
                }
            }
            _ => None,
        };
        // Each field once, where possible: a formatter may append re-recorded
        // values instead of replacing them.
        let span = tracing::Span::current();
        let method = hit
            .as_ref()
            .map_or(plan.first_method(), |(_, method)| *method);
        span.record("cache_hit", hit.is_some());
        span.record("rendering_method", method.as_str());
        if let Some((hit, method)) = hit {
            // A hit reports `cache_hit` only: the notes of the fetch that filled
            // the entry (`charset_fallback`, `article_fallback_srd`) are not kept.
            *cache_hit = true;
            notes.add(Note::CacheHit);
            let meta = ResponseMeta {
                requested_url: args.url.clone(),
                final_url: url.as_str().to_owned(),
                fetched_at: Timestamp::from_datetime(hit.fetched_at),
                rendering_method: method,
                notes,
            };
            let document = Arc::new(hit.document);
            let built = self
                .respond(args, document, meta, effective_max_bytes)
                .await?;
            return Ok((built, method));
        }

        // SSRFCheck, RobotsCheck, Fetch, ContentType, Extract: the renderers'
        // requests pass the client's checks. robots.txt has a budget of its own
        // (FR-WF-ROBOTS-TIMEOUT-01) that the document's does not count
        // (FR-WF-10a; SRD-READINGS 26).
        let pass = Pass::new();
        let robots = RobotsHopCheck::new(&self.robots, &self.client, &pass);
        let call = Call {
            url,
            pass: &pass,
            robots: &robots,
            deadline: Instant::now() + self.settings.timeout(),
            mode,
        };
        let rendered = self.render(plan, &call, &mut notes).await;
        notes.extend(&robots.into_notes());
        let rendered = rendered?;
        if rendered.method != method {
            span.record("rendering_method", rendered.method.as_str());
        }
        let fetched_at = OffsetDateTime::now_utc();

        // WriteCache (best effort, FR-WF-16h), before fitting so its note is in the
        // response; only the result actually returned is cached (CCH-KEY-03).
        let document = Arc::new(rendered.document);
        if let Some(store) = &store {
            let written = store
                .put(Put {
                    url: &rendered.final_url,
                    method: rendered.method,
                    stand_in: rendered.stands_in_for_browser,
                    variant: store::variant(&self.settings, rendered.method, mode),
                    document: &document,
                    fetched_at,
                })
                .await;
            if let Err(reason) = written {
                tracing::warn!(event = "cache_write_failed", "cache_write_failed: {reason}");
                notes.add(Note::CacheWriteFailed);
            }
        }
        // Written: whoever waits for this page finds it now.
        if let Some(flight) = flight {
            flight.land().await;
        }

        // Chunk and FitToOutput.
        let meta = ResponseMeta {
            requested_url: args.url.clone(),
            final_url: rendered.final_url.as_str().to_owned(),
            fetched_at: Timestamp::from_datetime(fetched_at),
            rendering_method: rendered.method,
            notes,
        };
        let built = self
            .respond(args, document, meta, effective_max_bytes)
            .await?;
        Ok((built, rendered.method))
    }

    /// Chunk and FitToOutput: the response to `args` for `document`, in the
    /// window `args` asks for (FR-WF-15, OUT-01; `start_chunk` extension). On a
    /// blocking thread: counting the tokens of megabytes of Markdown is work no
    /// async worker of a shared server should stall on.
    async fn respond(
        &self,
        args: &FetchArgs,
        document: Arc<ExtractedDocument>,
        meta: ResponseMeta,
        effective_max_bytes: usize,
    ) -> Result<Built, FetchError> {
        let options = BuildOptions {
            max_chunk_tokens: args.chunk_tokens(&self.settings),
            start_chunk: args.start_chunk,
            effective_max_bytes,
        };
        let counter = Arc::clone(&self.counter);
        progress::report(Stage::Chunking);
        ReadBudget::run_blocking(None, self.settings.timeout_ms(), move || {
            output::build(&document, meta, options, &*counter)
        })
        .await
    }

    /// Appendix B.3: the plan's renderers, in its order (FR-WF-12).
    async fn render(
        &self,
        plan: RenderPlan,
        call: &Call<'_>,
        notes: &mut Notes,
    ) -> Result<Rendered, FetchError> {
        match plan {
            RenderPlan::Browser => self.render_browser(call, notes).await,
            RenderPlan::BrowserPreferred => {
                // A `js_heavy_domains` host. SRD-READINGS 19 (FR-WF-11a, 12d): only
                // `force_browser` makes an unavailable browser an error; otherwise the
                // HTTP result stands, with the note. Any other browser failure is the
                // result of browser mode and is returned (FR-WF-12f).
                match self.render_browser(call, notes).await {
                    Err(error) if error.code == ErrorCode::BrowserUnavailable => {
                        tracing::warn!(
                            event = "browser_unavailable_used_http",
                            "{}",
                            error.message
                        );
                        notes.add(Note::BrowserUnavailableUsedHttp);
                        let rendered = self.render_http(call, notes, false).await?;
                        Ok(Rendered {
                            stands_in_for_browser: true,
                            ..rendered
                        })
                    }
                    rendered => rendered,
                }
            }
            RenderPlan::Http => self.render_http(call, notes, false).await,
            RenderPlan::HttpThenMaybeBrowser => self.render_http(call, notes, true).await,
        }
    }

    /// HTTP mode: fetch (robots.txt checked for every URL of the chain), decode,
    /// extract; then, if `spa_fallback`, the browser when the page looks like an
    /// unrendered SPA shell.
    async fn render_http(
        &self,
        call: &Call<'_>,
        notes: &mut Notes,
        spa_fallback: bool,
    ) -> Result<Rendered, FetchError> {
        let fetched = render::fetch_document(
            &self.client,
            call.url,
            call.deadline,
            Some(call.robots),
            Some(call.pass),
        )
        .await?;
        let page = self.read_page(&fetched, call).await?;
        let detect_walls = self.settings.detect_walls;
        let (page, shell) = if fetched.kind == MediaKind::Html && (spa_fallback || detect_walls) {
            // Off the async workers too: it may extract the page once more.
            let (settings, url) = (
                Arc::clone(&self.settings),
                fetched.final_url.as_url().clone(),
            );
            ReadBudget::run_blocking(None, self.settings.timeout_ms(), move || {
                let shell = looks_like_spa_shell(&page, &url, &settings.rendering);
                Ok((page, shell))
            })
            .await?
        } else {
            (page, false)
        };
        let wants_browser = spa_fallback && shell;
        let mut http_notes = page.notes;
        if detect_walls && shell {
            // Read as is unless the browser renders it below.
            http_notes.add(Note::JavascriptRequired);
        }
        let mut http_result = Rendered {
            final_url: fetched.final_url,
            method: RenderingMethod::Http,
            document: page.document,
            stands_in_for_browser: false,
        };
        if !wants_browser {
            notes.extend(&http_notes);
            return Ok(http_result);
        }
        let mut browser_notes = Notes::new();
        match self.render_browser(call, &mut browser_notes).await {
            Ok(rendered) => {
                notes.extend(&browser_notes);
                Ok(rendered)
            }
            // FR-WF-12d: only an unavailable browser (disabled, not found, failed
            // to launch) leaves the HTTP result standing, with the note.
            Err(error) if error.code == ErrorCode::BrowserUnavailable => {
                tracing::warn!(event = "browser_unavailable_used_http", error_code = %error.code, "{}", error.message);
                notes.extend(&http_notes);
                notes.add(Note::BrowserUnavailableUsedHttp);
                http_result.stands_in_for_browser = true;
                Ok(http_result)
            }
            // SRD-READINGS 30: a browser that ran and failed (a blocked or
            // disallowed top-frame hop, an idle timeout, a crash) is the answer;
            // never a success that hides what the page tried to do.
            Err(error) => Err(error),
        }
    }

    /// Decode and Extract of a fetched document ([`DecodedPage::read`]), on a
    /// blocking thread under the call's read budget: seconds of parsing must not
    /// stall the runtime's workers of a server with other calls, and the reader
    /// stops when the call ends.
    async fn read_page(
        &self,
        fetched: &FetchedDocument,
        call: &Call<'_>,
    ) -> Result<DecodedPage, FetchError> {
        let (settings, body, url, mode) = (
            Arc::clone(&self.settings),
            fetched.body.clone(),
            fetched.final_url.as_url().clone(),
            call.mode,
        );
        let (kind, header_charset) = (fetched.kind, fetched.header_charset.clone());
        progress::report(if kind == MediaKind::Pdf {
            Stage::ReadingPdf
        } else {
            Stage::Extracting
        });
        let deadline = Some(fetched.deadline.into_std());
        let pdf_worker = self.pdf_worker.clone();
        ReadBudget::run_blocking(deadline, self.settings.timeout_ms(), move || {
            let reading = Reading {
                mode,
                content: &settings.content,
                pdf_worker: pdf_worker.as_deref(),
            };
            DecodedPage::read(&body, kind, header_charset.as_deref(), &url, &reading)
        })
        .await
    }

    /// Browser mode: Chromium renders the page; every request it makes goes through
    /// the pinned client within the call's pass, and robots.txt applies to the top
    /// frame's chain only (SRD 3.4.3 .. 3.4.6, ROBOTS-SCOPE-01), and to frame
    /// documents too with `robots_for_frames`, through the same check.
    async fn render_browser(
        &self,
        call: &Call<'_>,
        notes: &mut Notes,
    ) -> Result<Rendered, FetchError> {
        let mut ctx = RenderContext::new(&self.client, call.url, call.deadline)
            .with_pass(call.pass)
            .with_robots_hook(call.robots);
        // Extension: at most `max_concurrent_renders` Chromiums at once; the
        // renderer takes its slot after the page's own checks.
        ctx = ctx.with_render_slots(&self.renders);
        if let Some(standby) = &self.standby {
            ctx = ctx.with_standby(standby);
        }
        progress::report(Stage::Rendering);
        let page = render::render(&ctx).await?;
        if let Some(fetched) = page.not_rendered {
            // A PDF (or JSON, a feed, Markdown) is read from the HTTP
            // response, never rendered: the answer is HTTP mode's.
            let read = self.read_page(&fetched, call).await?;
            notes.extend(&read.notes);
            return Ok(Rendered {
                final_url: fetched.final_url,
                method: RenderingMethod::Http,
                document: read.document,
                stands_in_for_browser: false,
            });
        }
        if self.settings.detect_walls {
            render::wall::refuse_rendered(&page.html)?;
        }
        if page.dom_truncated {
            notes.add(Note::BrowserDomTruncated);
        }
        if page.blocked_non_get {
            notes.add(Note::BrowserBlockedNonGet);
        }
        if page.charset_fallback {
            notes.add(Note::CharsetFallback);
        }
        // A render may settle past the call's `timeout_seconds` (network idle has
        // a wait of its own); reading its DOM has the page-load buffer the tool's
        // outer timeout allows for (FR-WF-TIMEOUT-01).
        let (html, url, mode) = (page.html, page.final_url.as_url().clone(), call.mode);
        let idle = Duration::from_millis(u64::from(self.settings.browser.network_idle_ms));
        progress::report(Stage::Extracting);
        let deadline = Some((call.deadline + idle + PAGE_LOAD_BUFFER).into_std());
        let extracted = ReadBudget::run_blocking(deadline, self.settings.timeout_ms(), move || {
            DecodedPage::from_html(html, &url, mode)
        })
        .await?;
        notes.extend(&extracted.notes);
        Ok(Rendered {
            final_url: page.final_url,
            method: RenderingMethod::Browser,
            document: extracted.document,
            stands_in_for_browser: false,
        })
    }
}

/// FR-WF-12c: little extracted text (in chars, after normalisation,
/// FR-WF-12c-UNIT) and an SPA indicator in the raw decoded HTML. Status 200 is
/// implied: any other status already failed the fetch (FR-WF-12f).
///
/// The text measured is the SRD reading of the page whatever the extraction
/// mode: an article is legitimately shorter than the whole page, and the
/// choice of renderer must not change with an extension. So a short article
/// (rare) is measured again with the SRD algorithm.
fn looks_like_spa_shell(
    page: &DecodedPage,
    final_url: &url::Url,
    rendering: &RenderingSettings,
) -> bool {
    let falls_back = |document: &ExtractedDocument| {
        let chars = render::select::extracted_chars(&document.markdown);
        render::should_fall_back(chars, &page.text, true, rendering)
    };
    falls_back(&page.document)
        && (page.is_srd_reading
            || extract::extract_html(&page.text, final_url, ExtractionMode::Srd)
                .is_ok_and(|e| falls_back(&e.document)))
}

/// Appendix E's `page_load_buffer_s` default (FR-WF-TIMEOUT-01).
const PAGE_LOAD_BUFFER: Duration = Duration::from_secs(5);

impl ToolExecutor for WebFetchTool {
    fn name(&self) -> &'static str {
        "web_fetch"
    }

    fn description(&self) -> &'static str {
        "Fetch a URL and extract its content as markdown"
    }

    /// FR-WF-02's schema, or the extended one (see [`WebFetchToolBuilder::schema`]).
    fn input_schema(&self) -> Value {
        self.schema.input_schema()
    }

    /// Network egress (NFR-WF-OP-01).
    fn is_side_effecting(&self) -> bool {
        true
    }

    /// FR-WF-OP-02: `allow_auto_execution` or the host's allowlist skip the prompt; a
    /// global deny mode always requires it (see [`Settings::requires_approval`]).
    fn requires_approval(&self) -> bool {
        self.settings.requires_approval()
    }

    /// `timeout_seconds + network_idle_ms/1000 + page_load_buffer_s + 2s`
    /// (FR-WF-TIMEOUT-01), so the tool's own structured timeout fires first.
    fn timeout(&self) -> Option<Duration> {
        let secs = u64::from(self.settings.timeout_seconds)
            + u64::from(self.settings.browser.network_idle_ms) / 1000
            + PAGE_LOAD_BUFFER.as_secs()
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
            let built = self.answer(args, ctx.effective_max_bytes()).await?;
            Ok(built.json)
        })
    }
}

impl WebFetchTool {
    /// [`ToolExecutor::execute`]'s argument handling and error mapping around
    /// [`fetch`](Self::fetch): schema violations are `BadArgs`, every other
    /// error the envelope as `ExecutionFailed` (Appendix E). The front doors
    /// that also want the continuation (the MCP server, `serve`) run this under
    /// the tool's own timeout.
    pub(crate) async fn answer(
        &self,
        args: Value,
        effective_max_bytes: usize,
    ) -> Result<Built, ToolError> {
        let failed = |error: FetchError| ToolError::ExecutionFailed {
            tool: "web_fetch".to_owned(),
            message: error.to_json(),
        };
        let args = match FetchArgs::parse(&args, self.schema) {
            Ok(args) => args,
            Err(ArgsError::Schema(error)) => {
                return Err(ToolError::BadArgs {
                    message: error.message,
                });
            }
            Err(ArgsError::Rule(error)) => return Err(failed(error)),
        };
        self.fetch(&args, effective_max_bytes).await.map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_call_past_the_tools_own_timeout_is_the_timeout_envelope() {
        let tool = WebFetchTool::builder(Settings::default()).build().unwrap();
        let never = std::future::pending::<Result<Built, FetchError>>();
        let error = tool.within_own_timeout(never).await.unwrap_err();
        let after = ToolExecutor::timeout(&tool).unwrap();
        assert_eq!(error.code(), ErrorCode::Timeout);
        assert_eq!(
            error.details(),
            &ErrorDetails::Timeout {
                timeout_ms: u64::try_from(after.as_millis()).unwrap(),
                phase: TimeoutPhase::unknown(),
            }
        );
    }
}
