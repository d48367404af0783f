//! `webfetch serve`: one process serving many agents over HTTP.
//!
//! - `/mcp`: MCP Streamable HTTP (rmcp's server transport, a tower service served
//!   by hyper), the same [`WebFetchServer`] as `webfetch mcp`. It runs stateless
//!   with JSON responses: no session to keep, so any process behind a load
//!   balancer can answer any request.
//! - `GET /v1/fetch?url=…`: the tool's parameters as a query.
//! - `POST /v1/fetch_batch`: `web_fetch_batch`'s arguments as a JSON body
//!   (`application/json`, at most [`MAX_BATCH_BODY_BYTES`]), its JSON as the
//!   answer.
//! - `GET /healthz`: `200 ok`, never behind the token.
//! - `GET /.well-known/http-message-signatures-directory`: the Web Bot Auth key
//!   directory when `[tools.webfetch.bot_auth]` is set (else `404`), never
//!   behind the token: sites fetch it to check the signatures.
//! - anything else: `404` with a JSON body.
//!
//! Every call of every session runs on one [`WebFetchTool`] and its clones, so
//! they share the HTTP client, the robots.txt origin cache (one robots.txt fetch
//! per origin however many calls ask at once), the disk cache, the cap on
//! concurrent browser renders and the warm browser standby.
//!
//! Security: a non-loopback address needs a bearer token; with one,
//! every endpoint but `/healthz` asks for it. Without a token (loopback only),
//! the `Host` header must name loopback, against DNS rebinding. Before anything
//! else, on every endpoint and with or without a token, a cross-site browser
//! request is refused with `403 forbidden_origin` (`origin.rs`): an
//! `Origin` that is not the listener's own or in `[tools.webfetch.serve]
//! allowed_origins`, or `Sec-Fetch-Site: cross-site` without an allowed
//! `Origin`; so a page the user visits can not make the server fetch. Limits:
//! [`MAX_HEADER_BYTES`], [`MAX_QUERY_BYTES`], [`MAX_MCP_BODY_BYTES`],
//! [`MAX_CONNECTIONS`], [`HEADER_READ_TIMEOUT`]. No response or log line echoes
//! the token or a query.
//!
//! Shutdown: when `shutdown` resolves (SIGTERM, SIGINT), the listener closes,
//! every connection finishes the request it is serving and closes, bounded by the
//! tool's timeout plus [`SHUTDOWN_MARGIN`].

mod auth;
pub(crate) mod http_api;
mod origin;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::args::ArgsSchema;
use crate::canonical_url::Origin;
use crate::executor::ToolExecutor;
use crate::mcp::WebFetchServer;
use crate::tool::WebFetchTool;

pub use self::auth::{BearerToken, MIN_TOKEN_CHARS, TOKEN_ENV, load_token};
pub use self::http_api::{NEXT_START_CHUNK_HEADER, TOTAL_CHUNKS_HEADER};

use self::origin::{CrossSite, OriginPolicy};

/// The default `--listen` address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// Cap on a request's line and headers (hyper's read buffer); more is `431`.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Cap on the query of `GET /v1/fetch`; more is `414`.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// Cap on an MCP POST body; more is `413`.
pub const MAX_MCP_BODY_BYTES: usize = 1024 * 1024;
/// Cap on a `POST /v1/fetch_batch` body (twenty URLs and the options); more is
/// `413`.
pub const MAX_BATCH_BODY_BYTES: usize = 64 * 1024;
/// Open connections at once; a connection past the cap is closed at accept.
pub const MAX_CONNECTIONS: usize = 1024;
/// Time a client has to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Added to the tool's timeout for in-flight calls to finish at shutdown.
pub const SHUTDOWN_MARGIN: Duration = Duration::from_secs(2);
/// The most characters of a refused `Origin` a log line shows.
const MAX_LOGGED_ORIGIN_CHARS: usize = 200;

type Body = BoxBody<Bytes, Infallible>;
type McpService = StreamableHttpService<WebFetchServer, LocalSessionManager>;

/// How `webfetch serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The bearer token; required for a non-loopback `listen`.
    pub token: Option<BearerToken>,
    /// The byte budget of each tool result, MCP and `/v1/fetch` alike.
    pub max_output_bytes: usize,
    /// Browser origins admitted besides the listener's own, e.g. a
    /// reverse proxy's public origin: `[tools.webfetch.serve] allowed_origins`.
    pub allowed_origins: Vec<Origin>,
}

/// A bound, not yet serving, `webfetch serve`.
pub struct Server {
    listener: TcpListener,
    options: ServeOptions,
}

impl Server {
    /// Binds `options.listen`. Refuses a non-loopback address without a token;
    /// the error never names the token.
    pub async fn bind(options: ServeOptions) -> Result<Server, String> {
        if !options.listen.ip().is_loopback() && options.token.is_none() {
            return Err(format!(
                "refusing to listen on {} without a token: a non-loopback address needs \
                 --token-file FILE or {}",
                options.listen,
                auth::TOKEN_ENV
            ));
        }
        let listener = TcpListener::bind(options.listen)
            .await
            .map_err(|error| format!("cannot listen on {}: {error}", options.listen))?;
        Ok(Server { listener, options })
    }

    /// The bound address (the port chosen for `:0`).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves `tool` until `shutdown` resolves, then drains in-flight requests.
    pub async fn run(self, tool: WebFetchTool, shutdown: impl Future<Output = ()>) {
        let Server { listener, options } = self;
        let loopback = options.listen.ip().is_loopback();
        // The own origins carry the bound port (the one chosen for `:0`).
        let bound = listener.local_addr().unwrap_or(options.listen);
        let cancel = CancellationToken::new();
        let grace = tool.timeout().unwrap_or_default() + SHUTDOWN_MARGIN;
        let app = Arc::new(App::new(
            tool,
            &options,
            bound,
            loopback,
            cancel.child_token(),
        ));
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .max_buf_size(MAX_HEADER_BYTES)
            .max_headers(64);
        tokio::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        // EMFILE and friends: back off instead of spinning.
                        tracing::warn!(event = "serve_accept_failed", "accept failed: {error}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                tracing::warn!(event = "serve_connection_limit", "connection limit reached");
                continue;
            };
            let app = Arc::clone(&app);
            let service =
                hyper::service::service_fn(move |request| Arc::clone(&app).route(request));
            let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
            tokio::spawn(async move {
                let _ = connection.await;
                drop(permit);
            });
        }
        drop(listener);
        tracing::warn!(
            event = "serve_shutdown",
            "shutting down: waiting for in-flight calls"
        );
        if tokio::time::timeout(grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                event = "serve_shutdown_forced",
                "in-flight calls still running after {grace:?}; stopping"
            );
        }
        cancel.cancel();
        app.tool.shutdown_browser_standby().await;
    }
}

/// The router and what its endpoints share.
struct App {
    mcp: McpService,
    tool: WebFetchTool,
    token: Option<BearerToken>,
    /// Whether `Host` must name loopback (a loopback listener without a token).
    check_host: bool,
    /// The browser callers admitted.
    origins: OriginPolicy,
    max_output_bytes: usize,
}

impl App {
    fn new(
        tool: WebFetchTool,
        options: &ServeOptions,
        bound: SocketAddr,
        loopback: bool,
        cancel: CancellationToken,
    ) -> App {
        // One tool for both front doors: one robots.txt cache, one disk cache,
        // one render cap and one warm browser standby.
        let tool = tool
            .with_schema(ArgsSchema::Extended)
            .with_browser_standby();
        let server = WebFetchServer::new(tool.clone(), options.max_output_bytes);
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(MAX_MCP_BODY_BYTES)
            .with_cancellation_token(cancel);
        if !loopback {
            // rmcp's default admits loopback `Host`s only (DNS rebinding); a
            // public listener has a token instead.
            config = config.disable_allowed_hosts();
        }
        let mcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        App {
            mcp,
            tool,
            token: options.token.clone(),
            check_host: loopback && options.token.is_none(),
            origins: OriginPolicy::new(bound, options.allowed_origins.clone()),
            max_output_bytes: options.max_output_bytes,
        }
    }

    async fn route(
        self: Arc<Self>,
        request: Request<Incoming>,
    ) -> Result<Response<Body>, Infallible> {
        let path = request.uri().path();
        // First, so a cross-site page learns nothing, not even what exists.
        if let Err(cross_site) = self.origins.check(request.headers()) {
            return Ok(refuse_cross_site(cross_site, &request));
        }
        if path == crate::bot_auth::DIRECTORY_PATH {
            // Public by nature (sites fetch it to check our signatures), so
            // never behind the token; still behind the cross-site check.
            return Ok(self.key_directory(request.method()));
        }
        if path == "/healthz" {
            return Ok(match *request.method() {
                Method::GET | Method::HEAD => text(StatusCode::OK, "ok"),
                _ => method_not_allowed("GET"),
            });
        }
        if let Some(token) = &self.token
            && !token.accepts(request.headers().get(header::AUTHORIZATION))
        {
            let mut response = error(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid bearer token is required",
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer"),
            );
            return Ok(response);
        }
        match path {
            "/mcp" => Ok(self.mcp.handle(request).await),
            "/v1/fetch" => Ok(self.fetch(&request).await),
            "/v1/fetch_batch" => Ok(self.fetch_batch(request).await),
            _ => Ok(not_found()),
        }
    }

    /// `GET`/`HEAD` of the Web Bot Auth key directory (extension): the public
    /// key of `[tools.webfetch.bot_auth]` as a JWKS, with the `Signature-Input`
    /// and `Signature` that prove it comes from the key's holder, signed for the
    /// authority of the configured `signature_agent` URL. `404` when requests
    /// are not signed.
    fn key_directory(&self, method: &Method) -> Response<Body> {
        let Some(auth) = &self.tool.settings().bot_auth else {
            return not_found();
        };
        if !matches!(*method, Method::GET | Method::HEAD) {
            return method_not_allowed("GET, HEAD");
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let (body, input, signature) = auth.directory(auth.directory_authority(), now);
        Response::builder()
            .header(header::CONTENT_TYPE, crate::bot_auth::DIRECTORY_MEDIA_TYPE)
            .header("signature-input", input)
            .header("signature", signature)
            .body(full(body))
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
    }

    /// `POST /v1/fetch_batch`. A JSON body only: a browser can not send one
    /// cross-site without a preflight this server never answers.
    async fn fetch_batch(&self, request: Request<Incoming>) -> Response<Body> {
        if request.method() != Method::POST {
            return method_not_allowed("POST");
        }
        if self.check_host && !host_is_loopback(&request) {
            return error(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "the Host header must name loopback",
            );
        }
        let is_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "the body must be application/json: {\"urls\": [...], ...}",
            );
        }
        let limited = http_body_util::Limited::new(request.into_body(), MAX_BATCH_BODY_BYTES);
        let Ok(collected) = limited.collect().await else {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                "the body is too large (or was cut off)",
            );
        };
        let answer =
            http_api::fetch_batch(&self.tool, &collected.to_bytes(), self.max_output_bytes).await;
        Response::builder()
            .status(answer.status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(full(answer.body))
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
    }

    async fn fetch(&self, request: &Request<Incoming>) -> Response<Body> {
        if request.method() != Method::GET {
            return method_not_allowed("GET");
        }
        if self.check_host && !host_is_loopback(request) {
            return error(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "the Host header must name loopback",
            );
        }
        let query = request.uri().query().unwrap_or("");
        if query.len() > MAX_QUERY_BYTES {
            return error(
                StatusCode::URI_TOO_LONG,
                "query_too_long",
                "the query is too long",
            );
        }
        let answer = http_api::fetch(&self.tool, query, self.max_output_bytes).await;
        let mut response = Response::builder()
            .status(answer.status)
            .header(header::CONTENT_TYPE, "application/json");
        if let Some((next, total)) = answer.continuation {
            response = response
                .header(http_api::NEXT_START_CHUNK_HEADER, next)
                .header(http_api::TOTAL_CHUNKS_HEADER, total);
        }
        response
            .body(full(answer.body))
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
    }
}

/// Whether the request's `Host` is `localhost`, an IPv4 loopback or `[::1]`,
/// with any port.
fn host_is_loopback(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<http::uri::Authority>().ok())
        .is_some_and(|host| origin::names_loopback(host.host()))
}

/// The `403` of a cross-site request, logged on one line with the
/// method, the path and the `Origin` if any (never the query or a token).
fn refuse_cross_site(cross_site: CrossSite, request: &Request<Incoming>) -> Response<Body> {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .map(|value| {
            let shown: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(MAX_LOGGED_ORIGIN_CHARS)
                .collect();
            format!(" origin={shown:?}")
        })
        .unwrap_or_default();
    let (reason, message) = match cross_site {
        CrossSite::Origin => (
            "Origin not allowed",
            "cross-site request refused: the Origin is not this server's own; to allow a \
             trusted one, list it in [tools.webfetch.serve] allowed_origins",
        ),
        CrossSite::FetchSite => (
            "Sec-Fetch-Site: cross-site",
            "cross-site request refused: web pages may not call this server; to allow a \
             trusted page, list its origin in [tools.webfetch.serve] allowed_origins",
        ),
    };
    tracing::warn!(
        event = "serve_cross_site_refused",
        "refused a cross-site request ({reason}): {} {}{origin}",
        request.method(),
        request.uri().path(),
    );
    error(StatusCode::FORBIDDEN, "forbidden_origin", message)
}

fn full(body: impl Into<Bytes>) -> Body {
    Full::new(body.into()).boxed()
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A server-level error (not a tool's envelope): `{"error": …, "message": …}`.
fn error(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": code, "message": message }).to_string();
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn not_found() -> Response<Body> {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint: use /mcp, /v1/fetch, /v1/fetch_batch or /healthz",
    )
}

fn method_not_allowed(allow: &'static str) -> Response<Body> {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, http::HeaderValue::from_static(allow));
    response
}
