//! The MCP stdio server: one tool, `web_fetch`, with the FR-WF-02 input schema
//! plus our extension properties ([`ArgsSchema::Extended`]: `extraction`), each
//! optional; a call that uses none gets exactly the SRD's response.
//!
//! The tool carries a title, annotations (read-only, idempotent, open world) and
//! an `outputSchema` generated from [`FetchResponse`]. A success returns the
//! response JSON as text content (the SRD's bytes) and as `structuredContent`; a
//! tool error returns `isError: true` with the error envelope the same two ways,
//! so the model can read the code.
//! The server speaks only protocol on stdout; logs go to stderr.
//!
//! Continuation (extension): when the output budget cut a page, the JSON is left
//! as the SRD has it (unless the call asked for a window with `start_chunk`), and a
//! second text block tells the model in words how to read on, with the numbers in
//! the result's `_meta` ([`META_NEXT_START_CHUNK`], [`META_TOTAL_CHUNKS`]) for
//! programs.

use crate::content::describe::formats_description;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::args::ArgsSchema;
use crate::batch::{self, BATCH_TOOL_NAME, BatchResponse, MAX_BATCH_URLS};
use crate::budget::millis;
use crate::error::{FetchError, TimeoutPhase};
use crate::executor::{ToolError, ToolExecutor, format_error, within_timeout};
use crate::output::{Built, FetchResponse};
use crate::progress::{Progress, Report};
use crate::tool::WebFetchTool;

/// Default byte budget for one MCP tool result: small enough for common clients'
/// tool-output limits (about 25k tokens), large enough for dozens of chunks.
pub const DEFAULT_MCP_MAX_OUTPUT_BYTES: usize = 60_000;

/// The `_meta` key of a cut result: the `start_chunk` that reads on.
pub const META_NEXT_START_CHUNK: &str = "webfetch/next_start_chunk";
/// The `_meta` key of a cut result: the page's chunk count.
pub const META_TOTAL_CHUNKS: &str = "webfetch/total_chunks";

/// The `web_fetch` MCP server.
#[derive(Clone)]
pub struct WebFetchServer {
    tool: Arc<WebFetchTool>,
    max_output_bytes: usize,
}

impl WebFetchServer {
    /// A server around a tool, which it serves with the extended schema and a
    /// warm browser standby (a long-lived host); each call's output fits
    /// `max_output_bytes`.
    pub fn new(tool: WebFetchTool, max_output_bytes: usize) -> WebFetchServer {
        WebFetchServer {
            tool: Arc::new(
                tool.with_schema(ArgsSchema::Extended)
                    .with_browser_standby(),
            ),
            max_output_bytes,
        }
    }

    fn tool_definition(&self) -> Tool {
        let schema = match self.tool.input_schema() {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        // A paragraph a model can act on, then the extension formats this
        // server reads, their limits and errors.
        let description = format!(
            "{}{}",
            tool_description(self.max_output_bytes),
            formats_description(&self.tool.settings().content)
        );
        let mut tool = Tool::new(self.tool.name(), description, schema);
        tool.title = Some("Fetch a web page".to_owned());
        tool.annotations = Some(read_only_annotations());
        tool.output_schema = Some(Arc::new(json_schema::<FetchResponse>()));
        tool
    }

    fn batch_definition(&self) -> Tool {
        let schema = match batch::input_schema() {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let description = batch_description(self.max_output_bytes);
        let mut tool = Tool::new(BATCH_TOOL_NAME, description, schema);
        tool.title = Some("Fetch several web pages".to_owned());
        tool.annotations = Some(read_only_annotations());
        tool.output_schema = Some(Arc::new(json_schema::<BatchResponse>()));
        tool
    }

    /// Serves MCP over stdin/stdout until the client disconnects.
    /// The parked browser of the standby is shut down before this returns.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let tool = Arc::clone(&self.tool);
        let served = async {
            let running = self.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
            Ok(())
        }
        .await;
        tool.shutdown_browser_standby().await;
        served
    }
}

impl ServerHandler for WebFetchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("webfetch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "web_fetch fetches an http(s) URL and returns its readable content as token-bounded \
                 Markdown chunks in JSON. Private networks and robots.txt-disallowed pages are refused. \
                 By default it keeps what the kind of page calls for (page_type says which); \
                 pass extraction: \"srd\" for the whole page. \
                 A long page cut to fit the output limit says which start_chunk reads on.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            self.tool_definition(),
            self.batch_definition(),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            name if name == self.tool.name() => answered(&context, self.fetch(args)).await?,
            BATCH_TOOL_NAME => answered(&context, self.batch(args)).await?,
            unknown => {
                return Err(McpError::invalid_params(
                    format!(
                        "unknown tool `{unknown}`; this server has `web_fetch` and \
                         `{BATCH_TOOL_NAME}`"
                    ),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

impl WebFetchServer {
    /// `web_fetch`: one page, under the tool's own timeout.
    async fn fetch(&self, args: Value) -> CallToolResult {
        let tool = self.tool.as_ref();
        // Boxed: the pipeline's future is large, and moved through the
        // combinators below it would be copied on the worker's stack each time.
        let answer = Box::pin(tool.answer(args, self.max_output_bytes));
        match within_timeout(tool, answer).await {
            Ok(built) => success(built),
            Err(error) => failure(tool.name(), error),
        }
    }

    /// `web_fetch_batch`: every page, the output budget shared among them.
    async fn batch(&self, args: Value) -> CallToolResult {
        match self.tool.answer_batch(&args, self.max_output_bytes).await {
            Ok(json) => batch_success(json),
            Err(error) => failure(
                BATCH_TOOL_NAME,
                ToolError::ExecutionFailed {
                    tool: BATCH_TOOL_NAME.to_owned(),
                    message: error.to_json(),
                },
            ),
        }
    }
}

/// Runs one request's `work` with its progress told, when the request carries
/// a `progressToken`, and ended by its cancellation (`notifications/cancelled`,
/// or the HTTP request's stream gone): dropping the work closes its
/// connections and stops its readers at their next check
/// (`budget::ReadBudget`). Nobody reads the answer to a cancelled request,
/// which is an error.
async fn answered(
    context: &RequestContext<RoleServer>,
    work: impl Future<Output = CallToolResult>,
) -> Result<CallToolResult, McpError> {
    let (progress, told) = match context.meta.get_progress_token() {
        Some(token) => {
            let (progress, told) = progress_to(context, token);
            (Some(progress), Some(told))
        }
        None => (None, None),
    };
    let work = async {
        match progress {
            Some(progress) => progress.scope(work).await,
            None => work.await,
        }
    };
    let result = tokio::select! {
        result = work => result,
        () = context.ct.cancelled() => {
            return Err(McpError::internal_error("the request was cancelled", None));
        }
    };
    // Every progress notification goes out before the result.
    if let Some(told) = told {
        let _ = told.await;
    }
    Ok(result)
}

/// The MCP tool's description: what comes back, the limits, what the
/// error codes mean for a retry and how to read past a cut page, in words a model
/// can act on. (The executor seam keeps the SRD's one line, Appendix E.)
fn tool_description(max_output_bytes: usize) -> String {
    format!(
        "Fetch an http(s) web page (HTML or plain text) and read it as JSON: title, \
         final_url, page_type (with extraction \"auto\", the default here: article, forum, \
         product, listing, documentation or service, the kind of page found), chunks of \
         Markdown with the heading each falls under and its token_count, and notes on how \
         it was read. Private and internal addresses and pages robots.txt disallows are \
         refused. A result holds at most {max_output_bytes} bytes: a longer page comes back \
         with truncated: true and a second message naming the start_chunk that reads on; \
         call again with the response's final_url and that start_chunk. A failure is an \
         error envelope {{code, message, retryable, details}}: retry the same call only when \
         retryable is true (timeout, network, http_5xx, 408 and 429); ssrf_blocked, \
         port_blocked, robots_disallowed, invalid_url and most http_4xx will fail again. \
         An http_4xx whose details.reason is bot_challenge (details.vendor names the \
         service) or payment_required means the site refuses automated clients: do not \
         retry, look for the information elsewhere. extraction_failed on a page that \
         needs JavaScript, or a result noted javascript_required, may work with \
         force_browser: true."
    )
}

/// The batch tool's description: when to use it, its limits, how to read on.
fn batch_description(max_output_bytes: usize) -> String {
    format!(
        "Fetch several http(s) pages at once (1 to {MAX_BATCH_URLS} URLs) and read each \
         as web_fetch does, with the same options. Use it instead of several web_fetch \
         calls when you already know the pages you want: they are read in parallel \
         (politely: never more than a site allows at once) and the same URL is read once. \
         The answer is {{results: [...]}} in the order of urls; each item has its url and \
         either response (what web_fetch returns) or error (its error envelope; one failed \
         page does not fail the others). All items share one output limit of \
         {max_output_bytes} bytes: short pages come back whole, and a long page is cut at \
         a chunk boundary with next_start_chunk, to read on with web_fetch, url set to that \
         response's final_url and start_chunk to next_start_chunk."
    )
}

/// A call's progress, sent to the client as `notifications/progress` for
/// `token` (in order, by one task that ends once the progress is dropped with
/// the call), and that task.
fn progress_to(
    context: &RequestContext<RoleServer>,
    token: ProgressToken,
) -> (Progress, tokio::task::JoinHandle<()>) {
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel::<Report>();
    let peer = context.peer.clone();
    let told = tokio::spawn(async move {
        while let Some(report) = reports.recv().await {
            let param = ProgressNotificationParam::new(token.clone(), f64::from(report.progress))
                .with_message(report.message);
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    let progress = Progress::new(move |report| {
        let _ = sender.send(report);
    });
    (progress, told)
}

/// What a client may assume of `web_fetch`: it only reads (a GET of public
/// pages, nothing changed anywhere), the same call reads the same page again,
/// and what it reads is the open web. Clients use these hints to auto-approve.
fn read_only_annotations() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(true)
}

/// The JSON Schema (2020-12) of `T`'s wire form, generated from the type.
/// Only the standard's `format`s are kept: schemars marks integers `uint` and
/// the like, which validating clients (AJV in the TypeScript SDK) warn about on
/// every call; `minimum` already says what they would.
fn json_schema<T: schemars::JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with_transform(schemars::transform::RestrictFormats::default())
        .into_generator()
        .into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// `text` (a response or an error envelope) as structured content: the same
/// JSON as the text block, parsed, for clients that read `structuredContent`.
fn structured(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
}

/// A batch's JSON, as text and as `structuredContent`.
fn batch_success(json: String) -> CallToolResult {
    let structured_content = structured(&json);
    let mut result = CallToolResult::success(vec![ContentBlock::text(json)]);
    result.structured_content = structured_content;
    result
}

/// The response JSON, as text (the SRD's bytes) and as `structuredContent`;
/// when the output budget cut the page, also the words and the `_meta` that
/// say how to read on.
fn success(built: Built) -> CallToolResult {
    let structured_content = structured(&built.json);
    let mut result = success_blocks(built);
    result.structured_content = structured_content;
    result
}

/// The content blocks of [`success`].
fn success_blocks(built: Built) -> CallToolResult {
    let Some(next) = built.next_start_chunk else {
        return CallToolResult::success(vec![ContentBlock::text(built.json)]);
    };
    let total = built.total_chunks;
    let words = format!(
        "This page was cut to fit the output limit: chunks {next} to {} of {total} were \
         not returned. To read on, call web_fetch again with url set to this \
         response's final_url and start_chunk: {next}.",
        total - 1
    );
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(built.json),
        ContentBlock::text(words),
    ]);
    let mut meta = serde_json::Map::new();
    meta.insert(META_NEXT_START_CHUNK.to_owned(), next.into());
    meta.insert(META_TOTAL_CHUNKS.to_owned(), total.into());
    result.meta = Some(MetaObject(meta));
    result
}

/// A failed call: the error envelope as text (Appendix E.2's formatting) and
/// as `structuredContent`, with `isError: true`. The executor's own timeout,
/// which Appendix E words as a sentence, is structured as the `timeout`
/// envelope with that sentence as its message.
fn failure(tool: &str, error: ToolError) -> CallToolResult {
    let envelope = match &error {
        ToolError::Timeout { after, .. } => {
            let mut timeout = FetchError::timeout(millis(*after), TimeoutPhase::unknown());
            timeout.message = error.to_string();
            serde_json::to_value(&timeout).ok()
        }
        _ => None,
    };
    let formatted = format_error(tool, error);
    let mut result = CallToolResult::error(vec![ContentBlock::text(formatted.content.clone())]);
    result.structured_content = envelope.or_else(|| structured(&formatted.content));
    result
}
