//! [`ErrorDetails`]: the `details` object of each error code (SRD 3.7.2), typed.
//!
//! The pipeline builds and reads these values; they become JSON only at the edge,
//! in [`ErrorDetails::to_map`], whose field names and values are the wire format
//! of FR-WF-18.

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use super::TimeoutPhase;

/// The code-specific context of a [`FetchError`](super::FetchError), one variant per
/// shape of the registry. Field names are the wire names; an `Option` field is
/// written only when set.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorDetails {
    /// `bad_args` for one request field (FR-WF-02a, 02b, ERR-BADARGS-01).
    BadArgs {
        /// The argument.
        field: String,
        /// Why it was refused.
        reason: String,
        /// Extension (`start_chunk` past the end): how many chunks there are.
        chunk_count: Option<usize>,
    },
    /// `bad_args` from schema validation (FR-ERR-JSON-02).
    Validation {
        /// The validator's description.
        validation: String,
    },
    /// `invalid_url`: the URL without userinfo (SRD-READINGS 7).
    InvalidUrl {
        /// The URL as given, userinfo removed.
        url: String,
    },
    /// `invalid_scheme` (FR-WF-04).
    InvalidScheme {
        /// The refused scheme.
        scheme: String,
    },
    /// `invalid_host` (FR-WF-04b1, 04b3).
    InvalidHost {
        /// The raw host substring.
        host: String,
    },
    /// `port_blocked` (FR-WF-05e).
    PortBlocked {
        /// The refused port.
        port: u16,
        /// The configured allowlist.
        allowed_ports: Vec<u16>,
    },
    /// `ssrf_blocked` (SRD-READINGS 6).
    SsrfBlocked {
        /// The refused address.
        blocked_ip: IpAddr,
        /// The range it is in.
        cidr: String,
        /// The config toggle of that range.
        toggle: String,
    },
    /// `dns_failed` (FR-WF-06c).
    DnsFailed {
        /// The name that did not resolve.
        host: String,
        /// What the resolver said.
        error: String,
    },
    /// `robots_disallowed`.
    RobotsDisallowed {
        /// The refused path.
        path: String,
        /// The origin whose robots.txt refused it.
        origin: String,
    },
    /// `robots_unavailable` (FR-WF-09a, ROBOTS-REDIR-02).
    RobotsUnavailable {
        /// The origin.
        origin: String,
        /// Why: a stable token (`http_5xx`, `unexpected_status`, a `network` error's).
        error: String,
        /// The status of the robots.txt response, when one came.
        status: Option<u16>,
    },
    /// `redirect_limit` (FR-WF-07f1).
    RedirectLimit {
        /// Hops attempted, the failing one included.
        count: u32,
        /// `max_redirects`.
        max: u32,
    },
    /// `timeout` (FR-WF-ERR-TIMEOUT-PHASE; SRD-READINGS 10).
    Timeout {
        /// The budget that ran out, in milliseconds.
        timeout_ms: u64,
        /// Where it ran out.
        phase: TimeoutPhase,
    },
    /// `network`.
    Network {
        /// A stable token, possibly followed by `: ` and the cause
        /// (`tls_validation_failed`, `unexpected_status`, `body_read_failed: ...`).
        error: String,
        /// The unexpected status (FR-WF-07a1, 07a2).
        status: Option<u16>,
        /// The unsupported `Content-Encoding`.
        content_encoding: Option<String>,
        /// The addresses a failed connection tried, in order.
        attempted_ips: Option<Vec<IpAddr>>,
    },
    /// `response_too_large` (FR-WF-10e; SRD-READINGS 10).
    ResponseTooLarge {
        /// The size seen (declared or read so far).
        size: u64,
        /// The limit.
        max_bytes: u64,
    },
    /// `unsupported_content_type` (FR-WF-ERR-CT-01).
    UnsupportedContentType {
        /// The media type as served.
        content_type: String,
    },
    /// `http_4xx` / `http_5xx` (FR-WF-ERR-HTTP-01, 02).
    HttpStatus {
        /// The status code.
        status: u16,
        /// The reason phrase; empty when the protocol has none.
        status_text: String,
        /// Extension (issue 32): a 429 the politeness limit answered without
        /// contacting the origin carries why (`origin_held`, `origin_busy`) and
        /// when to retry. `None` for every response an origin sent, so their
        /// details stay the SRD's two fields.
        polite: Option<PoliteRefusal>,
    },
    /// `browser_unavailable` (FR-WF-11a).
    BrowserUnavailable {
        /// The configured or discovered Chromium path.
        chromium_path: String,
        /// Why.
        error: String,
        /// Chromium could not get a sandbox and running without one is not
        /// allowed: written as `"sandbox": "unavailable"`.
        sandbox_unavailable: bool,
        /// The product string of a Chromium too old to use.
        version: Option<String>,
    },
    /// `browser_crashed`.
    BrowserCrashed {
        /// What happened.
        error: String,
    },
    /// `extraction_failed` / `no_extractable_content` (FR-WF-EXT-EMPTY-02).
    NoExtractableContent,
    /// Extension (issue 31): `extraction_failed` for a document of an extension
    /// format that can not be read: `details.error` names the format
    /// (`unreadable_pdf`, `unreadable_json`, `unreadable_feed`), `details.reason`
    /// what is wrong with it.
    Unreadable {
        /// Why.
        reason: UnreadableReason,
    },
    /// `internal`.
    Internal {
        /// What went wrong.
        error: String,
    },
    /// `internal` / `tool_output_limit` (FR-WF-OUT-02, 02a).
    ToolOutputLimit {
        /// The budget not even an empty chunk fits.
        effective_max_bytes: u64,
    },
}

/// Why the politeness limit refused a request itself (extension, issue 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoliteRefusal {
    /// `details.reason`: `origin_held` (a 429 or 503 with `Retry-After` holds the
    /// origin past this call's budget) or `origin_busy` (`per_origin_in_flight`
    /// requests stayed in flight until the budget ran out).
    pub reason: &'static str,
    /// `details.retry_after_seconds`: when a retry may be admitted, at least 1.
    pub retry_after_seconds: u64,
}

/// Why a document of an extension format can not be read (issue 31): the
/// `details.reason` of its `extraction_failed` error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnreadableReason {
    /// `pdf_encrypted`: the PDF needs a password (or a permission we do not have)
    /// to decrypt.
    PdfEncrypted,
    /// `pdf_no_text_layer`: the pages are images (a scan): there is no text to
    /// read without OCR.
    PdfNoTextLayer,
    /// `pdf_malformed`: not a PDF, or one too damaged to read.
    PdfMalformed,
    /// `json_malformed`: the body is not valid JSON.
    JsonMalformed,
    /// `feed_malformed`: the feed is not well-formed XML.
    FeedMalformed,
}

impl UnreadableReason {
    /// Every reason, in declaration order.
    pub const ALL: [UnreadableReason; 5] = [
        UnreadableReason::PdfEncrypted,
        UnreadableReason::PdfNoTextLayer,
        UnreadableReason::PdfMalformed,
        UnreadableReason::JsonMalformed,
        UnreadableReason::FeedMalformed,
    ];

    /// The `details.reason` token.
    pub fn as_str(self) -> &'static str {
        match self {
            UnreadableReason::PdfEncrypted => "pdf_encrypted",
            UnreadableReason::PdfNoTextLayer => "pdf_no_text_layer",
            UnreadableReason::PdfMalformed => "pdf_malformed",
            UnreadableReason::JsonMalformed => "json_malformed",
            UnreadableReason::FeedMalformed => "feed_malformed",
        }
    }

    /// The `details.error` token: the format that could not be read.
    pub fn error(self) -> &'static str {
        match self {
            UnreadableReason::PdfEncrypted
            | UnreadableReason::PdfNoTextLayer
            | UnreadableReason::PdfMalformed => "unreadable_pdf",
            UnreadableReason::JsonMalformed => "unreadable_json",
            UnreadableReason::FeedMalformed => "unreadable_feed",
        }
    }

    /// What would help, for the error message the model reads.
    pub fn advice(self) -> &'static str {
        match self {
            UnreadableReason::PdfEncrypted => {
                "its text can not be read without the password; look for an unencrypted \
                 copy or an HTML version of the document"
            }
            UnreadableReason::PdfNoTextLayer => {
                "its pages are images (a scan) and reading them needs OCR, which this tool \
                 does not do; look for a text or HTML version of the document"
            }
            UnreadableReason::PdfMalformed => {
                "the file is damaged or not a PDF; if the download was cut short, fetching \
                 again with no_cache may help, otherwise look for another copy"
            }
            UnreadableReason::JsonMalformed => {
                "the server's answer is not JSON despite its Content-Type; the URL may need \
                 other parameters, or it serves an error page"
            }
            UnreadableReason::FeedMalformed => {
                "the feed is not well-formed XML; the site's HTML pages may be read instead"
            }
        }
    }
}

impl ErrorDetails {
    /// The `details.error` token, for the codes that carry one.
    pub fn error(&self) -> Option<&str> {
        match self {
            ErrorDetails::DnsFailed { error, .. }
            | ErrorDetails::RobotsUnavailable { error, .. }
            | ErrorDetails::Network { error, .. }
            | ErrorDetails::BrowserUnavailable { error, .. }
            | ErrorDetails::BrowserCrashed { error }
            | ErrorDetails::Internal { error } => Some(error),
            ErrorDetails::NoExtractableContent => Some("no_extractable_content"),
            ErrorDetails::Unreadable { reason } => Some(reason.error()),
            ErrorDetails::ToolOutputLimit { .. } => Some("tool_output_limit"),
            _ => None,
        }
    }

    /// The FR-WF-18 `details` object.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        let mut put = |key: &str, value: Value| {
            map.insert(key.to_owned(), value);
        };
        match self {
            ErrorDetails::BadArgs {
                field,
                reason,
                chunk_count,
            } => {
                put("field", json!(field));
                put("reason", json!(reason));
                if let Some(count) = chunk_count {
                    put("chunk_count", json!(count));
                }
            }
            ErrorDetails::Validation { validation } => put("validation", json!(validation)),
            ErrorDetails::InvalidUrl { url } => put("url", json!(url)),
            ErrorDetails::InvalidScheme { scheme } => put("scheme", json!(scheme)),
            ErrorDetails::InvalidHost { host } => put("host", json!(host)),
            ErrorDetails::PortBlocked {
                port,
                allowed_ports,
            } => {
                put("port", json!(port));
                put("allowed_ports", json!(allowed_ports));
            }
            ErrorDetails::SsrfBlocked {
                blocked_ip,
                cidr,
                toggle,
            } => {
                put("blocked_ip", json!(blocked_ip.to_string()));
                put("cidr", json!(cidr));
                put("toggle", json!(toggle));
            }
            ErrorDetails::DnsFailed { host, error } => {
                put("host", json!(host));
                put("error", json!(error));
            }
            ErrorDetails::RobotsDisallowed { path, origin } => {
                put("path", json!(path));
                put("origin", json!(origin));
            }
            ErrorDetails::RobotsUnavailable {
                origin,
                error,
                status,
            } => {
                put("origin", json!(origin));
                put("error", json!(error));
                if let Some(status) = status {
                    put("status", json!(status));
                }
            }
            ErrorDetails::RedirectLimit { count, max } => {
                put("count", json!(count));
                put("max", json!(max));
            }
            ErrorDetails::Timeout { timeout_ms, phase } => {
                put("timeout_ms", json!(timeout_ms));
                put("phase", json!(phase.as_str()));
            }
            ErrorDetails::Network {
                error,
                status,
                content_encoding,
                attempted_ips,
            } => {
                put("error", json!(error));
                if let Some(status) = status {
                    put("status", json!(status));
                }
                if let Some(coding) = content_encoding {
                    put("content_encoding", json!(coding));
                }
                if let Some(ips) = attempted_ips {
                    let ips: Vec<String> = ips.iter().map(IpAddr::to_string).collect();
                    put("attempted_ips", json!(ips));
                }
            }
            ErrorDetails::ResponseTooLarge { size, max_bytes } => {
                put("size", json!(size));
                put("max_bytes", json!(max_bytes));
            }
            ErrorDetails::UnsupportedContentType { content_type } => {
                put("content_type", json!(content_type));
            }
            ErrorDetails::HttpStatus {
                status,
                status_text,
                polite,
            } => {
                put("status", json!(status));
                put("status_text", json!(status_text));
                if let Some(polite) = polite {
                    put("reason", json!(polite.reason));
                    put("retry_after_seconds", json!(polite.retry_after_seconds));
                }
            }
            ErrorDetails::BrowserUnavailable {
                chromium_path,
                error,
                sandbox_unavailable,
                version,
            } => {
                put("chromium_path", json!(chromium_path));
                put("error", json!(error));
                if *sandbox_unavailable {
                    put("sandbox", json!("unavailable"));
                }
                if let Some(version) = version {
                    put("version", json!(version));
                }
            }
            ErrorDetails::BrowserCrashed { error } | ErrorDetails::Internal { error } => {
                put("error", json!(error));
            }
            ErrorDetails::NoExtractableContent => put("error", json!("no_extractable_content")),
            ErrorDetails::Unreadable { reason } => {
                put("error", json!(reason.error()));
                put("reason", json!(reason.as_str()));
            }
            ErrorDetails::ToolOutputLimit {
                effective_max_bytes,
            } => {
                put("error", json!("tool_output_limit"));
                put("effective_max_bytes", json!(effective_max_bytes));
            }
        }
        map
    }
}
