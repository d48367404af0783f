//! The error-code registry of SRD 3.7.2 and its JSON envelope (FR-WF-18, 18a, 18b).
//!
//! Every failure of a fetch is a [`FetchError`]: a stable [`ErrorCode`], a human
//! message, a `retryable` flag derived from the code (FR-WF-ERR-HTTP-01 for the 4xx
//! exceptions, FR-WF-OUT-02 for `tool_output_limit`) and a `details` object whose
//! fields follow the registry. Each code has one constructor here, so every path that
//! produces a code produces it the same way.

use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod details;

pub use self::details::{ErrorDetails, PoliteRefusal, UnreadableReason};

/// The stable error codes of the SRD 3.7.2 registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Invalid request parameters.
    BadArgs,
    /// URL parsing failed.
    InvalidUrl,
    /// Non-http(s) scheme.
    InvalidScheme,
    /// Invalid host, e.g. a non-canonical numeric IP form.
    InvalidHost,
    /// Port not in the allowlist.
    PortBlocked,
    /// SSRF protection triggered.
    SsrfBlocked,
    /// DNS resolution failed.
    DnsFailed,
    /// robots.txt disallows the path.
    RobotsDisallowed,
    /// robots.txt could not be fetched.
    RobotsUnavailable,
    /// `max_redirects` exceeded.
    RedirectLimit,
    /// A time budget ran out.
    Timeout,
    /// Network or connection error.
    Network,
    /// The response exceeds a size limit.
    ResponseTooLarge,
    /// The Content-Type is not supported.
    UnsupportedContentType,
    /// HTTP 4xx client error.
    Http4xx,
    /// HTTP 5xx server error.
    Http5xx,
    /// Chromium not found, disabled or not runnable.
    BrowserUnavailable,
    /// The browser process crashed.
    BrowserCrashed,
    /// HTML extraction failed.
    ExtractionFailed,
    /// Unexpected internal error.
    Internal,
}

impl ErrorCode {
    /// Every code of the registry, in registry order.
    pub const ALL: [ErrorCode; 20] = [
        ErrorCode::BadArgs,
        ErrorCode::InvalidUrl,
        ErrorCode::InvalidScheme,
        ErrorCode::InvalidHost,
        ErrorCode::PortBlocked,
        ErrorCode::SsrfBlocked,
        ErrorCode::DnsFailed,
        ErrorCode::RobotsDisallowed,
        ErrorCode::RobotsUnavailable,
        ErrorCode::RedirectLimit,
        ErrorCode::Timeout,
        ErrorCode::Network,
        ErrorCode::ResponseTooLarge,
        ErrorCode::UnsupportedContentType,
        ErrorCode::Http4xx,
        ErrorCode::Http5xx,
        ErrorCode::BrowserUnavailable,
        ErrorCode::BrowserCrashed,
        ErrorCode::ExtractionFailed,
        ErrorCode::Internal,
    ];

    /// The wire string of the code, exactly as in the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadArgs => "bad_args",
            ErrorCode::InvalidUrl => "invalid_url",
            ErrorCode::InvalidScheme => "invalid_scheme",
            ErrorCode::InvalidHost => "invalid_host",
            ErrorCode::PortBlocked => "port_blocked",
            ErrorCode::SsrfBlocked => "ssrf_blocked",
            ErrorCode::DnsFailed => "dns_failed",
            ErrorCode::RobotsDisallowed => "robots_disallowed",
            ErrorCode::RobotsUnavailable => "robots_unavailable",
            ErrorCode::RedirectLimit => "redirect_limit",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Network => "network",
            ErrorCode::ResponseTooLarge => "response_too_large",
            ErrorCode::UnsupportedContentType => "unsupported_content_type",
            ErrorCode::Http4xx => "http_4xx",
            ErrorCode::Http5xx => "http_5xx",
            ErrorCode::BrowserUnavailable => "browser_unavailable",
            ErrorCode::BrowserCrashed => "browser_crashed",
            ErrorCode::ExtractionFailed => "extraction_failed",
            ErrorCode::Internal => "internal",
        }
    }

    /// The registry's default `retryable` value for the code. The two exceptions
    /// (408/429 and `tool_output_limit`) are applied by their constructors.
    pub fn default_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::DnsFailed
                | ErrorCode::RobotsUnavailable
                | ErrorCode::Timeout
                | ErrorCode::Network
                | ErrorCode::Http5xx
                | ErrorCode::BrowserCrashed
                | ErrorCode::Internal
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Where a time budget ran out (FR-WF-ERR-TIMEOUT-PHASE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// DNS resolution.
    Dns,
    /// TCP connection establishment.
    Connect,
    /// TLS handshake.
    Tls,
    /// Waiting for response headers after sending the request.
    Request,
    /// Reading the response body; also the fallback when the phase is unknown
    /// (FR-WF-ERR-TIMEOUT-PHASE-02).
    Response,
    /// Between redirect hops (FR-WF-ERR-TIMEOUT-PHASE-03).
    Redirect,
    /// Browser: DOMContentLoaded never fired.
    BrowserNavigation,
    /// Browser: network idle never reached.
    BrowserNetworkIdle,
    /// The robots.txt fetch.
    Robots,
}

impl TimeoutPhase {
    /// The wire string of the phase.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutPhase::Dns => "dns",
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::Tls => "tls",
            TimeoutPhase::Request => "request",
            TimeoutPhase::Response => "response",
            TimeoutPhase::Redirect => "redirect",
            TimeoutPhase::BrowserNavigation => "browser_navigation",
            TimeoutPhase::BrowserNetworkIdle => "browser_network_idle",
            TimeoutPhase::Robots => "robots",
        }
    }

    /// The phase to report when an implementation cannot tell where the budget ran
    /// out (FR-WF-ERR-TIMEOUT-PHASE-02).
    pub fn unknown() -> TimeoutPhase {
        TimeoutPhase::Response
    }
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured tool error: the envelope `{code, message, retryable, details}`.
///
/// Serialises with exactly that field order; `details` is always an object (empty
/// when the code has nothing to add). Each code has its constructors here, so a
/// code always comes with its registry's [`ErrorDetails`] and its `retryable`;
/// the fields are read through [`code`](FetchError::code),
/// [`message`](FetchError::message), [`is_retryable`](FetchError::is_retryable)
/// and [`details`](FetchError::details), so no caller can make them disagree.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct FetchError {
    /// The registry code.
    pub(crate) code: ErrorCode,
    /// Human-readable description.
    pub(crate) message: String,
    /// Whether a retry may succeed.
    pub(crate) retryable: bool,
    /// Code-specific context, written as the registry's field names.
    pub(crate) details: ErrorDetails,
}

/// The error envelope as it is on the wire (FR-WF-18), for a program that reads
/// one back: a batch item's `error`, an MCP client's `structuredContent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorEnvelope {
    /// The registry code, e.g. `ssrf_blocked`.
    pub code: String,
    /// Human-readable description.
    pub message: String,
    /// Whether a retry may succeed.
    pub retryable: bool,
    /// Code-specific context, by the registry's field names.
    pub details: Map<String, Value>,
}

impl From<&FetchError> for ErrorEnvelope {
    fn from(error: &FetchError) -> ErrorEnvelope {
        ErrorEnvelope {
            code: error.code.as_str().to_owned(),
            message: error.message.clone(),
            retryable: error.retryable,
            details: error.details_json(),
        }
    }
}

impl schemars::JsonSchema for ErrorEnvelope {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorEnvelope".into()
    }

    /// `code` is one of the registry's codes.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
        schemars::json_schema!({
            "type": "object",
            "description": "Why the call failed: retry only when retryable is true.",
            "properties": {
                "code": { "type": "string", "enum": codes },
                "message": { "type": "string" },
                "retryable": { "type": "boolean" },
                "details": { "type": "object" }
            },
            "required": ["code", "message", "retryable", "details"]
        })
    }
}

impl FetchError {
    /// An error with the code's default `retryable`.
    fn new(code: ErrorCode, message: impl Into<String>, details: ErrorDetails) -> Self {
        FetchError {
            code,
            message: message.into(),
            retryable: code.default_retryable(),
            details,
        }
    }

    /// The registry code (SRD 3.7.2).
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable description: what went wrong and what to do.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether a retry may succeed (FR-WF-18): the code's default, or what the
    /// failure showed (an HTTP 5xx is, a 4xx is not).
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// Code-specific context (the registry's `details`).
    pub fn details(&self) -> &ErrorDetails {
        &self.details
    }

    /// The envelope as compact JSON (FR-WF-18).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a FetchError always serialises")
    }

    /// The `details` object as it goes on the wire.
    pub fn details_json(&self) -> Map<String, Value> {
        // Every variant is written as an object, so the fallback is never taken.
        match serde_json::to_value(&self.details) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// `bad_args` for a request field (FR-WF-02a, 02b, ERR-BADARGS-01).
    pub fn bad_args(field: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        FetchError::new(
            ErrorCode::BadArgs,
            format!("invalid argument `{field}`: {reason}"),
            ErrorDetails::BadArgs {
                field: field.to_owned(),
                reason,
                chunk_count: None,
            },
        )
    }

    /// `bad_args` for a `start_chunk` past the last chunk (extension): the
    /// details say how many chunks there are.
    pub fn start_chunk_past_end(start: usize, chunk_count: usize) -> Self {
        let mut error = FetchError::bad_args(
            "start_chunk",
            format!("{start} is past the last chunk: the document has {chunk_count}"),
        );
        if let ErrorDetails::BadArgs {
            chunk_count: count, ..
        } = &mut error.details
        {
            *count = Some(chunk_count);
        }
        error
    }

    /// `bad_args` from schema validation (FR-ERR-JSON-02): `details.validation`.
    pub fn schema_violation(description: impl Into<String>) -> Self {
        let validation = description.into();
        FetchError::new(
            ErrorCode::BadArgs,
            validation.clone(),
            ErrorDetails::Validation { validation },
        )
    }

    /// `invalid_url`; `url` must already be free of userinfo (SRD-READINGS 7).
    pub fn invalid_url(url: &str, reason: impl fmt::Display) -> Self {
        FetchError::new(
            ErrorCode::InvalidUrl,
            format!("invalid URL: {reason}"),
            ErrorDetails::InvalidUrl {
                url: url.to_owned(),
            },
        )
    }

    /// `invalid_scheme` (FR-WF-04).
    pub fn invalid_scheme(scheme: &str) -> Self {
        FetchError::new(
            ErrorCode::InvalidScheme,
            format!("scheme `{scheme}` is not allowed; only http and https are"),
            ErrorDetails::InvalidScheme {
                scheme: scheme.to_owned(),
            },
        )
    }

    /// `invalid_host` with the raw host substring (FR-WF-04b1, 04b3).
    pub fn invalid_host(host: &str, reason: impl fmt::Display) -> Self {
        FetchError::new(
            ErrorCode::InvalidHost,
            format!("invalid host `{host}`: {reason}"),
            ErrorDetails::InvalidHost {
                host: host.to_owned(),
            },
        )
    }

    /// `port_blocked` (FR-WF-05e).
    pub fn port_blocked(port: u16, allowed_ports: &[u16]) -> Self {
        FetchError::new(
            ErrorCode::PortBlocked,
            format!("port {port} is not in the allowed ports {allowed_ports:?}"),
            ErrorDetails::PortBlocked {
                port,
                allowed_ports: allowed_ports.to_vec(),
            },
        )
    }

    /// `ssrf_blocked` with the address, the range that matched and its toggle
    /// (SRD-READINGS 6).
    pub fn ssrf_blocked(ip: IpAddr, cidr: &str, toggle: &str) -> Self {
        FetchError::new(
            ErrorCode::SsrfBlocked,
            format!("connection to {ip} is blocked: it is in {cidr} ({toggle})"),
            ErrorDetails::SsrfBlocked {
                blocked_ip: ip,
                cidr: cidr.to_owned(),
                toggle: toggle.to_owned(),
            },
        )
    }

    /// `dns_failed` (FR-WF-06c).
    pub fn dns_failed(host: &str, error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::DnsFailed,
            format!("DNS resolution of `{host}` failed: {error}"),
            ErrorDetails::DnsFailed {
                host: host.to_owned(),
                error,
            },
        )
    }

    /// `robots_disallowed`.
    pub fn robots_disallowed(path: &str, origin: &str) -> Self {
        FetchError::new(
            ErrorCode::RobotsDisallowed,
            format!("robots.txt of {origin} disallows `{path}`"),
            ErrorDetails::RobotsDisallowed {
                path: path.to_owned(),
                origin: origin.to_owned(),
            },
        )
    }

    /// `robots_unavailable` (FR-WF-09a, ROBOTS-REDIR-02).
    pub fn robots_unavailable(origin: &str, error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::RobotsUnavailable,
            format!("robots.txt of {origin} is unavailable: {error}"),
            ErrorDetails::RobotsUnavailable {
                origin: origin.to_owned(),
                error,
                status: None,
            },
        )
    }

    /// `robots_unavailable` for a robots.txt answered with `status` (FR-WF-09a).
    pub fn robots_unavailable_status(origin: &str, error: &str, status: u16) -> Self {
        let mut unavailable = FetchError::robots_unavailable(origin, error);
        if let ErrorDetails::RobotsUnavailable { status: slot, .. } = &mut unavailable.details {
            *slot = Some(status);
        }
        unavailable
    }

    /// `redirect_limit` with the hops attempted, the failing one included (FR-WF-07f1).
    pub fn redirect_limit(count: u32, max: u32) -> Self {
        FetchError::new(
            ErrorCode::RedirectLimit,
            format!("too many redirects: hop {count} exceeds the limit of {max}"),
            ErrorDetails::RedirectLimit { count, max },
        )
    }

    /// `timeout` with the budget in milliseconds and the phase (SRD-READINGS 10).
    pub fn timeout(timeout_ms: u64, phase: TimeoutPhase) -> Self {
        FetchError::new(
            ErrorCode::Timeout,
            format!("timed out after {timeout_ms} ms during {phase}"),
            ErrorDetails::Timeout { timeout_ms, phase },
        )
    }

    /// `network` with `details.error`.
    pub fn network(error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::Network,
            format!("network error: {error}"),
            ErrorDetails::Network {
                error,
                status: None,
                content_encoding: None,
                attempted_ips: None,
            },
        )
    }

    /// `network` / `unexpected_status` (FR-WF-07a1, 07a2).
    pub fn unexpected_status(status: u16) -> Self {
        let mut error = FetchError::network("unexpected_status");
        error.message = format!("unexpected HTTP status {status}");
        if let ErrorDetails::Network { status: slot, .. } = &mut error.details {
            *slot = Some(status);
        }
        error
    }

    /// `network` / `unsupported_content_encoding` (FR-WF-10c): `coding` as shown
    /// to the caller.
    pub fn unsupported_content_encoding(coding: &str) -> Self {
        let mut error = FetchError::network("unsupported_content_encoding");
        if let ErrorDetails::Network {
            content_encoding, ..
        } = &mut error.details
        {
            *content_encoding = Some(coding.to_owned());
        }
        error
    }

    /// `network` / `tls_validation_failed` (FR-WF-ERR-TLS-01).
    pub fn tls_validation_failed(reason: impl fmt::Display) -> Self {
        let mut error = FetchError::network("tls_validation_failed");
        error.message = format!("TLS certificate validation failed: {reason}");
        error
    }

    /// The same error saying which addresses a failed connection tried; only a
    /// `network` error carries them.
    pub fn with_attempted_ips(mut self, ips: Vec<IpAddr>) -> Self {
        if let ErrorDetails::Network { attempted_ips, .. } = &mut self.details {
            *attempted_ips = Some(ips);
        }
        self
    }

    /// `response_too_large` (FR-WF-10e; SRD-READINGS 10 for `size`).
    pub fn response_too_large(size: u64, max_bytes: u64) -> Self {
        FetchError::new(
            ErrorCode::ResponseTooLarge,
            format!("response exceeds the limit of {max_bytes} bytes"),
            ErrorDetails::ResponseTooLarge { size, max_bytes },
        )
    }

    /// `unsupported_content_type` (FR-WF-ERR-CT-01).
    pub fn unsupported_content_type(content_type: &str) -> Self {
        FetchError::new(
            ErrorCode::UnsupportedContentType,
            format!("content type `{content_type}` is not supported"),
            ErrorDetails::UnsupportedContentType {
                content_type: content_type.to_owned(),
            },
        )
    }

    /// `http_4xx` or `http_5xx` for an error status; 408 and 429 are retryable
    /// (FR-WF-ERR-HTTP-01). `status_text` is empty when the protocol has none
    /// (FR-WF-ERR-HTTP-02).
    pub fn http_status(status: u16, status_text: &str) -> Self {
        let code = if status >= 500 {
            ErrorCode::Http5xx
        } else {
            ErrorCode::Http4xx
        };
        let mut error = FetchError::new(
            code,
            format!("HTTP {status} {status_text}").trim_end().to_owned(),
            ErrorDetails::HttpStatus {
                price: None,
                reason: None,
                retry_after_seconds: None,
                status,
                status_text: status_text.to_owned(),
                vendor: None,
            },
        );
        if code == ErrorCode::Http4xx {
            error.retryable = matches!(status, 408 | 429);
        }
        error
    }

    /// Extension: `http_4xx` with status 429, retryable
    /// (FR-WF-ERR-HTTP-01), for a request the politeness limit refused without
    /// contacting `origin`: its details add `reason` and `retry_after_seconds`.
    pub fn polite_refusal(origin: &str, refusal: PoliteRefusal) -> Self {
        let why = match refusal.reason {
            "origin_held" => "is holding requests after a 429 or 503 with Retry-After",
            _ => "has per_origin_in_flight requests in flight",
        };
        let mut error = FetchError::new(
            ErrorCode::Http4xx,
            format!(
                "HTTP 429 Too Many Requests (not sent: {origin} {why}; retry after {} s)",
                refusal.retry_after_seconds
            ),
            ErrorDetails::HttpStatus {
                price: None,
                reason: Some(refusal.reason),
                retry_after_seconds: Some(
                    u32::try_from(refusal.retry_after_seconds).unwrap_or(u32::MAX),
                ),
                status: 429,
                status_text: "Too Many Requests".to_owned(),
                vendor: None,
            },
        );
        error.retryable = true;
        error
    }

    /// Extension (walls): the site answered with a bot-management challenge
    /// or block page (`vendor`'s), whatever its status, 200 included: `http_4xx`
    /// with `reason: "bot_challenge"`, not retryable, its message telling the
    /// model why. The page itself never reaches the model.
    pub fn bot_challenge(status: u16, status_text: &str, vendor: &'static str) -> Self {
        FetchError::new(
            ErrorCode::Http4xx,
            format!(
                "the site refused an automated client: its answer (HTTP {status}) is a bot \
                 challenge ({vendor}), not the page. Retrying will not help; webfetch does not \
                 solve challenges. Try another source for this information."
            ),
            ErrorDetails::HttpStatus {
                price: None,
                reason: Some("bot_challenge"),
                retry_after_seconds: None,
                status,
                status_text: status_text.to_owned(),
                vendor: Some(vendor),
            },
        )
    }

    /// Extension (walls): a 402 (pay per crawl): `http_4xx` with `reason:
    /// "payment_required"` and the `crawler-price` asked. webfetch never pays.
    pub fn payment_required(status_text: &str, price: Option<String>) -> Self {
        let asked = price
            .as_deref()
            .map(|price| format!(" (it asks {price})"))
            .unwrap_or_default();
        FetchError::new(
            ErrorCode::Http4xx,
            format!(
                "HTTP 402: the site sells access to crawlers{asked}; webfetch does not pay. \
                 Try another source for this information."
            ),
            ErrorDetails::HttpStatus {
                price: price.map(String::into_boxed_str),
                reason: Some("payment_required"),
                retry_after_seconds: None,
                status: 402,
                status_text: status_text.to_owned(),
                vendor: None,
            },
        )
    }

    /// `browser_unavailable` (FR-WF-11a).
    pub fn browser_unavailable(chromium_path: &str, error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::BrowserUnavailable,
            format!("browser unavailable: {error}"),
            ErrorDetails::BrowserUnavailable {
                chromium_path: chromium_path.to_owned(),
                error,
                sandbox_unavailable: false,
                version: None,
            },
        )
    }

    /// `browser_unavailable` because Chromium could not get a sandbox and running
    /// without one is not allowed: `details.sandbox = "unavailable"`.
    pub fn browser_sandbox_unavailable(chromium_path: &str, error: impl fmt::Display) -> Self {
        let mut unavailable = FetchError::browser_unavailable(chromium_path, error);
        if let ErrorDetails::BrowserUnavailable {
            sandbox_unavailable,
            ..
        } = &mut unavailable.details
        {
            *sandbox_unavailable = true;
        }
        unavailable
    }

    /// `browser_unavailable` for a Chromium too old to use, with its product
    /// string in `details.version`.
    pub fn browser_too_old(chromium_path: &str, error: impl fmt::Display, product: &str) -> Self {
        let mut unavailable = FetchError::browser_unavailable(chromium_path, error);
        if let ErrorDetails::BrowserUnavailable { version, .. } = &mut unavailable.details {
            *version = Some(product.to_owned());
        }
        unavailable
    }

    /// `browser_crashed`.
    pub fn browser_crashed(error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::BrowserCrashed,
            format!("browser crashed: {error}"),
            ErrorDetails::BrowserCrashed { error },
        )
    }

    /// `extraction_failed` / `no_extractable_content` (FR-WF-EXT-EMPTY-02).
    pub fn no_extractable_content() -> Self {
        FetchError::new(
            ErrorCode::ExtractionFailed,
            "the page has no extractable text content",
            ErrorDetails::NoExtractableContent,
        )
    }

    /// [`FetchError::no_extractable_content`] for a page whose raw HTML has SPA
    /// markers (SRD-READINGS 29): the message says why and what may help.
    pub fn no_extractable_content_client_rendered() -> Self {
        FetchError::new(
            ErrorCode::ExtractionFailed,
            "the page has no extractable text content; it looks client-rendered (a JavaScript \
             app shell): force_browser may help",
            ErrorDetails::NoExtractableContent,
        )
    }

    /// Extension: `extraction_failed` for a PDF, JSON or feed document
    /// that can not be read, `details = {error: "unreadable_<format>", reason}`.
    /// The message says what happened (`what`) and what would help.
    pub fn unreadable(reason: UnreadableReason, what: &str) -> Self {
        FetchError::new(
            ErrorCode::ExtractionFailed,
            format!("{what}: {}", reason.advice()),
            ErrorDetails::Unreadable { reason },
        )
    }

    /// `internal` with `details.error`.
    pub fn internal(error: impl fmt::Display) -> Self {
        let error = error.to_string();
        FetchError::new(
            ErrorCode::Internal,
            format!("internal error: {error}"),
            ErrorDetails::Internal { error },
        )
    }

    /// `internal` / `tool_output_limit`: not even an empty chunk fits
    /// (FR-WF-OUT-02, 02a). Not retryable.
    pub fn tool_output_limit(effective_max_bytes: u64) -> Self {
        let mut error = FetchError::new(
            ErrorCode::Internal,
            "tool_output_limit",
            ErrorDetails::ToolOutputLimit {
                effective_max_bytes,
            },
        );
        error.retryable = false;
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_field_order_and_shape() {
        let json = FetchError::redirect_limit(1, 0).to_json();
        assert!(json.starts_with(r#"{"code":"redirect_limit","message":"#));
        assert!(json.ends_with(r#""retryable":false,"details":{"count":1,"max":0}}"#));
    }

    #[test]
    fn retryable_rules_follow_the_registry() {
        assert!(FetchError::http_status(408, "Request Timeout").retryable);
        assert!(FetchError::http_status(429, "Too Many Requests").retryable);
        assert!(!FetchError::http_status(404, "Not Found").retryable);
        assert!(FetchError::http_status(503, "").retryable);
        assert_eq!(FetchError::http_status(503, "").code, ErrorCode::Http5xx);
        assert!(FetchError::internal("boom").retryable);
        let limit = FetchError::tool_output_limit(10);
        assert!(!limit.retryable);
        assert_eq!(limit.message, "tool_output_limit");
        assert_eq!(limit.details_json()["effective_max_bytes"], 10);
    }

    #[test]
    fn a_polite_refusal_is_a_retryable_429_and_origin_statuses_keep_two_fields() {
        let refusal = PoliteRefusal {
            reason: "origin_held",
            retry_after_seconds: 30,
        };
        let error = FetchError::polite_refusal("https://e.example", refusal);
        assert_eq!(error.code, ErrorCode::Http4xx);
        assert!(error.retryable);
        assert!(error.to_json().ends_with(
            r#""retryable":true,"details":{"reason":"origin_held","retry_after_seconds":30,"status":429,"status_text":"Too Many Requests"}}"#
        ), "{}", error.to_json());
        assert_eq!(
            FetchError::http_status(429, "Too Many Requests").to_json(),
            r#"{"code":"http_4xx","message":"HTTP 429 Too Many Requests","retryable":true,"details":{"status":429,"status_text":"Too Many Requests"}}"#
        );
    }

    #[test]
    fn every_code_has_a_distinct_wire_string() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{code:?}");
        }
    }
}
