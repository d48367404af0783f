//! Shared helpers of the integration tests: configs built through the real loader,
//! the stub resolver, wiremock shorthands and an order-preserving view of JSON.

pub(crate) mod child_cost;
pub(crate) mod deadline;
pub(crate) mod gate;
pub(crate) mod hostile_pdfs;
pub(crate) mod origin;
pub(crate) mod redis_server;
pub(crate) mod stdio_mcp;

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use webfetch::internals::chunk::chunk;
use webfetch::testing::StubValidator;
use webfetch::{FetchChunk, LoadOptions, Settings, TokenCounter, load_str};
use webfetch::{WebFetchTool, WebFetchToolBuilder};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// 127.0.0.1, where every wiremock listens.
pub(crate) const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A `[tools.webfetch]` configuration under construction. Loopback is unblocked
/// through the visible gate (`allow_insecure_overrides`, `block_loopback = false`);
/// private, link-local and reserved ranges stay blocked.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    ports: Vec<u16>,
    timeout_seconds: u32,
    cache_dir: Option<PathBuf>,
    top: Vec<String>,
    security: Vec<String>,
    sections: Vec<String>,
}

impl Config {
    /// Loopback allowed on `ports`, caching disabled, `timeout_seconds = 10`, the
    /// browser disabled.
    pub(crate) fn new(ports: &[u16]) -> Config {
        Config {
            ports: ports.to_vec(),
            timeout_seconds: 10,
            cache_dir: None,
            top: Vec::new(),
            security: Vec::new(),
            sections: Vec::new(),
        }
    }

    /// `timeout_seconds = secs` instead of 10 (a `timeout_seconds` line given to
    /// [`Config::top`] wins over both).
    pub(crate) fn timeout(mut self, secs: u32) -> Config {
        self.timeout_seconds = secs;
        self
    }

    /// Caches in `dir` (a tempdir: T-WF-INFRA-03).
    pub(crate) fn cache(mut self, dir: &Path) -> Config {
        self.cache_dir = Some(dir.to_path_buf());
        self
    }

    /// A `key = value` line under `[tools.webfetch]`.
    pub(crate) fn top(mut self, line: &str) -> Config {
        self.top.push(line.to_owned());
        self
    }

    /// A `key = value` line under `[tools.webfetch.security]`, after the loopback
    /// gate and `allowed_ports`, e.g. `additional_blocked_cidrs = ["127.0.0.2/32"]`.
    pub(crate) fn security(mut self, line: &str) -> Config {
        self.security.push(line.to_owned());
        self
    }

    /// A whole sub-table, e.g. `"[tools.webfetch.robots]\nfail_open = true"`. A
    /// `[tools.webfetch.browser]` table replaces the default `enabled = false` one.
    pub(crate) fn section(mut self, text: &str) -> Config {
        self.sections.push(text.to_owned());
        self
    }

    /// The TOML text.
    pub(crate) fn toml(&self) -> String {
        let mut text = String::from("[tools.webfetch]\n");
        if !self.top.iter().any(|l| l.starts_with("timeout_seconds")) {
            let _ = writeln!(text, "timeout_seconds = {}", self.timeout_seconds);
        }
        let cache = match &self.cache_dir {
            Some(dir) => dir.display().to_string(),
            None => String::new(),
        };
        let _ = writeln!(text, "cache_dir = {}", toml_string(&cache));
        for line in &self.top {
            let _ = writeln!(text, "{line}");
        }
        let ports: Vec<String> = self.ports.iter().map(u16::to_string).collect();
        let _ = writeln!(
            text,
            "[tools.webfetch.security]\nallow_insecure_overrides = true\n\
             block_loopback = false\nallowed_ports = [{}]",
            ports.join(", ")
        );
        for line in &self.security {
            let _ = writeln!(text, "{line}");
        }
        if !self
            .sections
            .iter()
            .any(|s| s.starts_with("[tools.webfetch.browser]"))
        {
            text.push_str("[tools.webfetch.browser]\nenabled = false\n");
        }
        for section in &self.sections {
            let _ = writeln!(text, "{section}");
        }
        text
    }

    /// The resolved settings, through the real loader.
    pub(crate) fn settings(&self) -> Settings {
        load(&self.toml())
    }

    /// A builder of a tool with these settings and the stub resolver of [`stub`].
    pub(crate) fn builder(&self) -> WebFetchToolBuilder {
        let settings = self.settings();
        let validator = Arc::new(stub(&settings));
        WebFetchTool::builder(settings).ssrf_validator(validator)
    }

    /// The tool of [`Config::builder`].
    pub(crate) fn tool(&self) -> WebFetchTool {
        self.builder()
            .build()
            .expect("the test config builds a tool")
    }
}

/// T-WF-BR-ENV-01: the Chromium under test (`FORGE_TEST_CHROMIUM_PATH`), or `None`
/// with a message: the browser tests are skipped.
pub(crate) fn chromium() -> Option<String> {
    match std::env::var("FORGE_TEST_CHROMIUM_PATH") {
        Ok(path) if !path.trim().is_empty() => Some(path),
        _ => {
            eprintln!("skipped: FORGE_TEST_CHROMIUM_PATH is not set (T-WF-BR-ENV-01)");
            None
        }
    }
}

/// Whether the machine can not give Chromium its sandbox, as `.ci/run` found out
/// (`FORGE_TEST_CHROMIUM_NO_SANDBOX=1`: no unprivileged user namespaces, as in some
/// containers). The browser tests then run with `allow_no_sandbox = true`, and the
/// test that proves the sandbox is skipped.
pub(crate) fn chromium_without_sandbox() -> bool {
    std::env::var("FORGE_TEST_CHROMIUM_NO_SANDBOX").is_ok_and(|v| v == "1")
}

/// How long one browser test may hold its turn before [`browser_turn`]'s watchdog
/// calls it hung: about a hundred times a browser test's usual few seconds, so
/// only a test that stopped making progress reaches it.
const HANG_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// One browser test's turn at Chromium: `serial` held (one browser at a time) and
/// a hang watchdog running until the turn is dropped.
pub(crate) struct BrowserTurn {
    // Dropping the watchdog stops it.
    _watchdog: deadline::Watchdog,
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

/// Waits for the browser tests' `serial` lock, then starts a watchdog: if the
/// test still holds its turn after [`HANG_LIMIT`], the watchdog prints the test's
/// name and the processes still running to stderr and ends the test binary with a
/// failure. A hung Chromium or CDP connection then fails CI at once, saying where,
/// instead of stalling it until its own time limit. Not a timing assertion: no
/// test passes or fails by how fast it is.
pub(crate) async fn browser_turn(serial: &'static tokio::sync::Mutex<()>) -> BrowserTurn {
    let guard = serial.lock().await;
    let test = std::thread::current()
        .name()
        .unwrap_or("a browser test")
        .to_owned();
    let watchdog = deadline::Watchdog::start(HANG_LIMIT, move || {
        let processes = std::process::Command::new("ps")
            .args(["-eo", "pid,ppid,stat,etime,args"])
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_else(|e| format!("(ps failed: {e})"));
        // Straight to stderr: the test harness captures `eprintln!`, also
        // from threads a test spawns, and would drop it at the exit.
        let _ = writeln!(
            std::io::stderr(),
            "{test}: still running after {} s, so it hung; ending the test binary.\n{processes}",
            HANG_LIMIT.as_secs()
        );
        std::process::exit(101);
    });
    BrowserTurn {
        _watchdog: watchdog,
        _serial: guard,
    }
}

/// Live (non-zombie) processes whose command line contains `needle`.
pub(crate) fn live_processes_naming(needle: &Path) -> Vec<String> {
    let needle = needle.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with('Z'))
            })
            .unwrap_or(true);
        if cmdline.contains(&needle) && !zombie {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

/// The `[tools.webfetch.browser]` table of the browser tests: Chromium at
/// `chromium`, `network_idle_ms = 10000`, then the `extra` lines.
pub(crate) fn browser_section(chromium: &str, extra: &str) -> String {
    let mut table = format!(
        "[tools.webfetch.browser]\nchromium_path = {}\nnetwork_idle_ms = 10000\n",
        toml_string(chromium)
    );
    if chromium_without_sandbox() && !extra.contains("allow_no_sandbox") {
        table.push_str("allow_no_sandbox = true\n");
    }
    table.push_str(extra);
    table
}

/// A `tracing` writer collecting everything written to it: every clone appends to
/// the same buffer. Give it to a subscriber with `.with_writer(buffer.clone())`.
#[derive(Clone, Default)]
pub(crate) struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogBuffer {
    type Writer = LogBuffer;

    fn make_writer(&'a self) -> LogBuffer {
        self.clone()
    }
}

impl LogBuffer {
    /// A plain-text subscriber writing into this buffer, filtered by `filter`
    /// (an `EnvFilter` directive such as `webfetch=debug`).
    pub(crate) fn subscriber(
        &self,
        filter: &str,
    ) -> impl tracing::Subscriber + Send + Sync + use<> {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(self.clone())
            .finish()
    }

    /// What was written so far, as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

/// Settings from a whole TOML text, through the real loader.
/// The chunks of `markdown` without their provenance, as a response carries them
/// (FR-WF-15), with no page hints.
pub(crate) fn plain_chunks(
    markdown: &str,
    max: usize,
    counter: &dyn TokenCounter,
) -> Vec<FetchChunk> {
    chunk(markdown, &[], max, counter)
        .into_iter()
        .map(|sourced| sourced.chunk)
        .collect()
}

/// The text of each chunk of a response's JSON, in order (the response must
/// have its `chunks`).
pub(crate) fn chunk_texts(response: &serde_json::Value) -> Vec<&str> {
    response["chunks"]
        .as_array()
        .expect("chunks is an array")
        .iter()
        .map(|chunk| chunk["text"].as_str().expect("text is a string"))
        .collect()
}

pub(crate) fn load(toml: &str) -> Settings {
    load_str(toml, LoadOptions::default())
        .expect("test config loads")
        .settings
}

/// A TOML basic string.
pub(crate) fn toml_string(text: &str) -> String {
    format!("{:?}", text)
}

/// The stub resolver (T-WF-INFRA-01): `site.test` and `other.test` are loopback;
/// `internal.test` (10/8), `metadata.test` (169.254/16) and `mapped.test`
/// (`::ffff:10.0.0.1`) must stay blocked; anything else does not resolve.
pub(crate) fn stub(settings: &Settings) -> StubValidator {
    StubValidator::new(&settings.security)
        .with_host("site.test", &[LOCALHOST])
        .with_host("other.test", &[LOCALHOST])
        .with_host("internal.test", &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 5))])
        .with_host(
            "metadata.test",
            &[IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254))],
        )
        .with_host(
            "mapped.test",
            &[IpAddr::V6(Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped())],
        )
        .with_host("v6.test", &[IpAddr::V6(Ipv6Addr::LOCALHOST)])
}

/// A 200 `text/html; charset=utf-8` response.
pub(crate) fn html(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.as_bytes().to_vec(), "text/html; charset=utf-8")
}

/// Mounts `GET path` answering `response`.
pub(crate) async fn serve(server: &MockServer, at: &str, response: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(response)
        .mount(server)
        .await;
}

/// Mounts a robots.txt with `body`.
pub(crate) async fn robots(server: &MockServer, body: &str) {
    serve(
        server,
        "/robots.txt",
        ResponseTemplate::new(200).set_body_raw(body.as_bytes().to_vec(), "text/plain"),
    )
    .await;
}

/// How many requests for `at` (path only) the server received.
pub(crate) async fn hits(server: &MockServer, at: &str) -> usize {
    server
        .received_requests()
        .await
        .expect("request recording is on")
        .iter()
        .filter(|r| r.url.path() == at)
        .count()
}

/// `http://site.test:{port}{path}`.
pub(crate) fn site(server: &MockServer, path: &str) -> String {
    format!("http://site.test:{}{path}", server.address().port())
}

/// Every `*.json` file under `dir`, recursively.
pub(crate) fn json_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(at: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(at) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// A JSON value with object keys in document order (serde_json's `Value` sorts them),
/// to check the field order of FR-WF-OUT-01a and FR-WF-18.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ordered {
    /// An object, keys in order.
    Object(Vec<(String, Ordered)>),
    /// An array.
    Array(Vec<Ordered>),
    /// Anything else.
    Scalar,
}

impl Ordered {
    /// Parses `text`.
    pub(crate) fn parse(text: &str) -> Ordered {
        serde_json::from_str(text).expect("valid JSON")
    }

    /// The keys of an object, in order (empty for anything else).
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            Ordered::Object(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// The value of `key` in an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The elements of an array.
    pub(crate) fn items(&self) -> &[Ordered] {
        match self {
            Ordered::Array(items) => items,
            _ => &[],
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
                    fields.push((key, value));
                }
                Ok(Ordered::Object(fields))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads up to the blank line that ends a request head (at most 16 KiB) from a raw
/// loopback server's socket; returns it.
pub(crate) async fn read_head(socket: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match socket.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A PDF whose pages each show `lines` of text: `(text, x, y, size)`
/// in Helvetica, with `/Title` when `title` is given and `extra_trailer` (e.g. an
/// `/Encrypt` entry) appended to the trailer. Offsets in the cross-reference table
/// are exact, so a strict reader reads it as written.
pub(crate) fn pdf(
    pages: &[Vec<(&str, f32, f32, f32)>],
    title: Option<&str>,
    extra_trailer: &str,
) -> Vec<u8> {
    let mut objects: Vec<String> = Vec::new();
    let page_count = pages.len();
    // 1 catalog, 2 pages, 3 font, 4 info, then page and content pairs.
    let kids: Vec<String> = (0..page_count)
        .map(|i| format!("{} 0 R", 5 + 2 * i))
        .collect();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".to_owned());
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {page_count} >>",
        kids.join(" ")
    ));
    objects.push(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    );
    objects.push(format!("<< /Title ({}) >>", title.unwrap_or("")));
    for (i, lines) in pages.iter().enumerate() {
        let mut content = String::new();
        for (text, x, y, size) in lines {
            let escaped = text
                .replace('\\', "\\\\")
                .replace('(', "\\(")
                .replace(')', "\\)");
            let _ = writeln!(content, "BT /F1 {size} Tf {x} {y} Td ({escaped}) Tj ET");
        }
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \
             /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            6 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        let _ = writeln!(table, "{offset:010} 00000 n ");
    }
    out.extend_from_slice(table.as_bytes());
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R /Info 4 0 R {extra_trailer}>>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}
