//! The `webfetch` command line: `webfetch fetch URL` prints the tool's JSON on stdout;
//! `webfetch mcp` serves the tool over MCP stdio; `webfetch extract FILE --base-url
//! URL` (extension) prints the JSON a fetch of a saved page would give, offline;
//! `webfetch serve` (extension) serves the tool over HTTP (MCP Streamable HTTP and
//! `GET /v1/fetch`) to many agents at once; `webfetch bot-auth` (extension) makes
//! and publishes a Web Bot Auth signing key.
//!
//! `fetch` and `extract` answer by the SRD contract; `mcp` and `serve`, the front
//! doors built for agents, by the agent contract: an extension key the config file
//! leaves unset takes the agent default (`webfetch::Contract`).
//!
//! Exit codes: 0 success; 2 the tool answered with an error envelope (printed on
//! stdout); 1 a configuration or usage error (message on stderr). stdout carries only
//! data; every log line goes to stderr.

// Not `src/bin/bot_auth.rs`: cargo would take that for a binary of its own.
#[path = "webfetch/bot_auth.rs"]
mod bot_auth;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use webfetch::mcp::WebFetchServer;
use webfetch::serve;
use webfetch::{
    ArgsSchema, BatchArgs, CanonicalUrl, Contract, ExtractionMode, FetchArgs, FetchError,
    LoadOptions, Loaded, PdfWorker, SavedPage, WebFetchTool,
};

/// Secure, token-bounded web fetching for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "webfetch", version, about)]
struct Cli {
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Human, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fetch a URL and print the response JSON on stdout; with several URLs
    /// (at most 20), one JSON object per line, in their order.
    Fetch {
        /// The http(s) URL(s) to fetch.
        #[arg(required = true, num_args = 1..=webfetch::MAX_BATCH_URLS)]
        urls: Vec<String>,
        /// A TOML file with a [tools.webfetch] table (SRD 5.3).
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        options: ToolOptions,
        /// Skip the cache read (the result is still cached).
        #[arg(long)]
        no_cache: bool,
        /// Render with headless Chromium.
        #[arg(long)]
        force_browser: bool,
        /// Byte budget for the JSON output (default: unlimited).
        #[arg(long)]
        max_output_bytes: Option<usize>,
        /// Indent the JSON for humans (same fields, same order).
        #[arg(long)]
        pretty: bool,
    },
    /// Convert a saved page into the response JSON a fetch would give, offline:
    /// no network, no cache (extension).
    Extract(ExtractArgs),
    /// Serve the web_fetch tool over MCP on stdin/stdout.
    Mcp {
        /// A TOML file with a [tools.webfetch] table (SRD 5.3).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Byte budget for each tool result.
        #[arg(long, default_value_t = webfetch::mcp::DEFAULT_MCP_MAX_OUTPUT_BYTES)]
        max_output_bytes: usize,
    },
    /// Serve the tool over HTTP: MCP Streamable HTTP at /mcp, GET /v1/fetch,
    /// GET /healthz. Logs on stderr; nothing on stdout.
    Serve {
        /// The address to listen on; a non-loopback address needs a token.
        #[arg(long, default_value = webfetch::serve::DEFAULT_LISTEN)]
        listen: std::net::SocketAddr,
        /// A TOML file with a [tools.webfetch] table (SRD 5.3).
        #[arg(long)]
        config: Option<PathBuf>,
        /// A file holding the bearer token (else the WEBFETCH_SERVE_TOKEN variable).
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Byte budget for each tool result, MCP and /v1/fetch alike.
        #[arg(long, default_value_t = webfetch::mcp::DEFAULT_MCP_MAX_OUTPUT_BYTES)]
        max_output_bytes: usize,
    },
    /// Web Bot Auth key tooling (extension): a new signing key, the key
    /// directory sites fetch to check the signatures.
    #[command(subcommand)]
    BotAuth(bot_auth::BotAuthCommand),
    /// The PDF worker the other commands start for each PDF: one
    /// request on stdin, one answer on stdout. Not for people.
    #[command(name = "pdf-worker", hide = true)]
    PdfWorker,
}

/// `webfetch extract`'s arguments.
#[derive(Debug, Args)]
struct ExtractArgs {
    /// The saved page; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// The http(s) URL the page came from: the base of its links and the
    /// response's `requested_url` / `final_url`.
    #[arg(long)]
    base_url: String,
    #[command(flatten)]
    options: ToolOptions,
    /// The Content-Type the page was served with, e.g.
    /// `text/plain; charset=windows-1252`; an empty value sniffs the body.
    #[arg(long, default_value = "text/html")]
    content_type: String,
    /// Byte budget for the JSON output (default: unlimited).
    #[arg(long)]
    max_output_bytes: Option<usize>,
    /// Indent the JSON for humans (same fields, same order).
    #[arg(long)]
    pretty: bool,
    /// A TOML file with a [tools.webfetch] table (SRD 5.3).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// The tool arguments `fetch` and `extract` share; each is left out of the call
/// when not given, so the tool applies the config defaults.
#[derive(Debug, Args)]
struct ToolOptions {
    /// Token budget per chunk, 128..=2048 (default from config).
    #[arg(long, allow_negative_numbers = true)]
    max_chunk_tokens: Option<i64>,
    /// HTML extraction (extension): the whole readable page (srd), only the main
    /// article (article), or what the kind of page calls for (auto). Default from
    /// config: srd unless configured.
    #[arg(long, value_enum)]
    extraction: Option<Extraction>,
    /// Continuation (extension): return the page from this chunk on (0-based).
    /// The response then says `next_start_chunk` when the output budget cut it.
    #[arg(long, allow_negative_numbers = true)]
    start_chunk: Option<i64>,
}

impl ToolOptions {
    /// Adds the options given to the tool arguments `args`.
    fn add_to(&self, args: &mut Value) {
        if let Some(tokens) = self.max_chunk_tokens {
            args["max_chunk_tokens"] = json!(tokens);
        }
        if let Some(extraction) = self.extraction {
            args["extraction"] = json!(ExtractionMode::from(extraction).as_str());
        }
        if let Some(start) = self.start_chunk {
            args["start_chunk"] = json!(start);
        }
    }
}

/// `--extraction`: the wire values of [`ExtractionMode`].
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Extraction {
    /// The whole readable page (FR-WF-13).
    Srd,
    /// Only the main article or post.
    Article,
    /// What the kind of page calls for: every post of a thread, every item of a
    /// listing, every section of a landing page; the response says `page_type`.
    Auto,
}

impl From<Extraction> for ExtractionMode {
    fn from(extraction: Extraction) -> ExtractionMode {
        match extraction {
            Extraction::Srd => ExtractionMode::Srd,
            Extraction::Article => ExtractionMode::Article,
            Extraction::Auto => ExtractionMode::Auto,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

fn main() -> ExitCode {
    // The PDF worker starts for every PDF: straight to it, before the parser
    // of the whole command line is built.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == PdfWorker::COMMAND)
    {
        return PdfWorker::serve_stdio();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let usage = error.use_stderr();
            let _ = error.print();
            return if usage {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // The worker writes nothing but its answer: no log subscriber.
    if let Command::PdfWorker = cli.command {
        return PdfWorker::serve_stdio();
    }
    init_logging(cli.log_format);
    match cli.command {
        Command::PdfWorker => PdfWorker::serve_stdio(),
        Command::Fetch {
            urls,
            config,
            options,
            no_cache,
            force_browser,
            max_output_bytes,
            pretty,
        } => {
            let Some(loaded) = load_config(config.as_deref(), Contract::Srd) else {
                return ExitCode::from(1);
            };
            let Some(tool) = build_tool(loaded.settings) else {
                return ExitCode::from(1);
            };
            let Some(runtime) = runtime(tokio::runtime::Builder::new_current_thread()) else {
                return ExitCode::from(1);
            };
            let max_output_bytes = max_output_bytes.unwrap_or(usize::MAX);
            if let [url] = urls.as_slice() {
                let mut args =
                    json!({ "url": url, "no_cache": no_cache, "force_browser": force_browser });
                options.add_to(&mut args);
                let result = runtime
                    .block_on(tool.call(&args, max_output_bytes))
                    .map(|built| built.json);
                return print_result(result, pretty);
            }
            let mut args =
                json!({ "urls": urls, "no_cache": no_cache, "force_browser": force_browser });
            options.add_to(&mut args);
            let batch = match BatchArgs::parse(&args) {
                Ok(batch) => batch,
                Err(error) => return print_result(Err(error), pretty),
            };
            let results = runtime.block_on(tool.fetch_each(&batch, max_output_bytes));
            // Exit 2 when any URL gave an error envelope.
            results.into_iter().fold(ExitCode::SUCCESS, |code, result| {
                let printed = print_result(result.map(|built| built.json), pretty);
                if printed == ExitCode::SUCCESS {
                    code
                } else {
                    printed
                }
            })
        }
        Command::Extract(args) => extract(args),
        Command::BotAuth(command) => bot_auth::run(command),
        Command::Serve {
            listen,
            config,
            token_file,
            max_output_bytes,
        } => serve(
            listen,
            config.as_deref(),
            token_file.as_deref(),
            max_output_bytes,
        ),
        Command::Mcp {
            config,
            max_output_bytes,
        } => {
            let Some(loaded) = load_config(config.as_deref(), Contract::Agent) else {
                return ExitCode::from(1);
            };
            let Some(tool) = build_tool(loaded.settings) else {
                return ExitCode::from(1);
            };
            let server = WebFetchServer::new(tool, max_output_bytes);
            let Some(runtime) = runtime(tokio::runtime::Builder::new_multi_thread()) else {
                return ExitCode::from(1);
            };
            match runtime.block_on(server.serve_stdio()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    tracing::error!(event = "mcp_failed", "MCP server stopped: {error}");
                    ExitCode::from(1)
                }
            }
        }
    }
}

/// `webfetch serve`: the token (refused when invalid), the config, the bind
/// (refused for a non-loopback address without a token), then serving until
/// SIGTERM or SIGINT. The bound address is announced on stderr.
fn serve(
    listen: std::net::SocketAddr,
    config: Option<&Path>,
    token_file: Option<&Path>,
    max_output_bytes: usize,
) -> ExitCode {
    let token = match serve::load_token(token_file, std::env::var(serve::TOKEN_ENV).ok()) {
        Ok(token) => token,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(1);
        }
    };
    let Some(loaded) = load_config(config, Contract::Agent) else {
        return ExitCode::from(1);
    };
    let allowed_origins = loaded.settings.serve.allowed_origins.clone();
    let Some(tool) = build_tool(loaded.settings) else {
        return ExitCode::from(1);
    };
    let Some(runtime) = runtime(tokio::runtime::Builder::new_multi_thread()) else {
        return ExitCode::from(1);
    };
    let with_token = token.is_some();
    let options = serve::ServeOptions {
        listen,
        token,
        max_output_bytes,
        allowed_origins,
    };
    runtime.block_on(async move {
        let server = match serve::Server::bind(options).await {
            Ok(server) => server,
            Err(message) => {
                eprintln!("{message}");
                return ExitCode::from(1);
            }
        };
        let bound = match server.local_addr() {
            Ok(bound) => bound,
            Err(error) => {
                eprintln!("cannot read the bound address: {error}");
                return ExitCode::from(1);
            }
        };
        let auth = if with_token {
            "bearer token required"
        } else {
            "no token"
        };
        eprintln!(
            "webfetch serve: listening on http://{bound} (/mcp, /v1/fetch, /healthz; {auth})"
        );
        server.run(tool, shutdown_signal()).await;
        eprintln!("webfetch serve: stopped");
        ExitCode::SUCCESS
    })
}

/// The tool of `settings` with the extended argument schema (every command takes
/// the extension properties), or `None` after printing why it can not be built
/// (a fleet Redis that redis-rs refuses): a configuration error, exit 1.
///
/// Every front door reads PDFs in a worker process of this binary:
/// `/proc/self/exe`, which names this very binary even after an upgrade
/// replaced its file.
fn build_tool(settings: webfetch::Settings) -> Option<WebFetchTool> {
    match WebFetchTool::builder(settings)
        .schema(ArgsSchema::Extended)
        .pdf_worker(PdfWorker::new("/proc/self/exe"))
        .build()
    {
        Ok(tool) => Some(tool),
        Err(error) => {
            eprintln!("{error}");
            None
        }
    }
}

/// Resolves on SIGINT or (Unix) SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `webfetch extract`: the same arguments check and the same JSON as `fetch`, from
/// a saved page. A base URL that is not a valid http(s) URL is a usage error.
fn extract(cli: ExtractArgs) -> ExitCode {
    let Some(loaded) = load_config(cli.config.as_deref(), Contract::Srd) else {
        return ExitCode::from(1);
    };
    if let Err(error) = CanonicalUrl::parse(&cli.base_url) {
        eprintln!("invalid --base-url {:?}: {}", cli.base_url, error.message());
        return ExitCode::from(1);
    }
    let settings = loaded.settings;
    // One byte over the cap is enough to report `response_too_large` (a PDF's cap
    // is `max_pdf_bytes` when PDF reading is on).
    let cap = webfetch::offline_body_cap(&settings, Some(&cli.content_type)).saturating_add(1);
    let body = match read_input(cli.file.as_deref(), cap) {
        Ok(body) => body,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(1);
        }
    };
    let mut args = json!({ "url": cli.base_url });
    cli.options.add_to(&mut args);
    let mut args = match FetchArgs::parse(&args, ArgsSchema::Extended) {
        Ok(args) => args,
        Err(error) => return print_result(Err(error.into_fetch_error()), cli.pretty),
    };
    args.page = Some(SavedPage {
        body,
        content_type: Some(cli.content_type),
    });
    let Some(tool) = build_tool(settings) else {
        return ExitCode::from(1);
    };
    let Some(runtime) = runtime(tokio::runtime::Builder::new_current_thread()) else {
        return ExitCode::from(1);
    };
    let max_output_bytes = cli.max_output_bytes.unwrap_or(usize::MAX);
    let result = runtime
        .block_on(tool.fetch(&args, max_output_bytes))
        .map(|built| built.json);
    print_result(result, cli.pretty)
}

/// Reads at most `cap` bytes of `file`, or of stdin for `-` or no file.
fn read_input(file: Option<&Path>, cap: u64) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    match file.filter(|path| path.as_os_str() != "-") {
        Some(path) => std::fs::File::open(path)
            .and_then(|file| file.take(cap).read_to_end(&mut body))
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?,
        None => std::io::stdin()
            .lock()
            .take(cap)
            .read_to_end(&mut body)
            .map_err(|error| format!("cannot read stdin: {error}"))?,
    };
    Ok(body)
}

/// Prints the response JSON (exit 0) or the error envelope (exit 2) on stdout.
fn print_result(result: Result<String, FetchError>, pretty: bool) -> ExitCode {
    let (text, code) = match result {
        Ok(json) => (json, ExitCode::SUCCESS),
        Err(error) => (error.to_json(), ExitCode::from(2)),
    };
    let text = if pretty { prettify(&text) } else { text };
    // A reader that closed the pipe early (`| head`) is not an error of ours:
    // `println!` would panic on it.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
    code
}

/// The runtime `builder` makes, with every driver on; `None` after saying why
/// there is none. One call (`fetch`, `extract`) takes a current-thread runtime,
/// which starts no worker threads (blocking file I/O still goes to tokio's
/// blocking pool); the servers a multi-thread one.
fn runtime(mut builder: tokio::runtime::Builder) -> Option<tokio::runtime::Runtime> {
    match builder.enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            eprintln!("cannot start the async runtime: {error}");
            None
        }
    }
}

/// Loads the config file (or the defaults) for the command's `contract` (`fetch`
/// and `extract` the SRD's, `mcp` and `serve` the agent's: it gives the extension
/// keys the file leaves unset their value), logs start-up warnings, and refuses a
/// configuration that disables the tool (5.2). `None` after printing the reason on
/// stderr.
fn load_config(path: Option<&std::path::Path>, contract: Contract) -> Option<Loaded> {
    match checked_config(path, contract) {
        Ok(loaded) => Some(loaded),
        Err(message) => {
            eprintln!("{message}");
            None
        }
    }
}

fn checked_config(path: Option<&std::path::Path>, contract: Contract) -> Result<Loaded, String> {
    let options = LoadOptions {
        contract,
        ..LoadOptions::default()
    };
    let loaded = match path {
        Some(path) => webfetch::load_file(path, options),
        None => webfetch::load_str("", options),
    }
    .map_err(|error| error.to_string())?;
    for warning in &loaded.warnings {
        tracing::warn!(event = "config_warning", "{warning}");
    }
    loaded.runnable().map_err(|error| error.to_string())
}

/// Re-indents compact JSON without reordering anything: a parse into a
/// `serde_json::Value` would sort object keys and lose the SRD's field order, so
/// the tokens stream straight from the reader to serde_json's pretty writer.
fn prettify(compact: &str) -> String {
    let mut reader = serde_json::Deserializer::from_str(compact);
    let mut out = Vec::with_capacity(compact.len() * 2);
    let mut writer = serde_json::Serializer::pretty(&mut out);
    match serde_transcode::transcode(&mut reader, &mut writer) {
        // serde_json writes UTF-8 only.
        Ok(()) => String::from_utf8(out).unwrap_or_else(|_| compact.to_owned()),
        // Our own output always parses; if it ever did not, print it as it is.
        Err(_) => compact.to_owned(),
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}
