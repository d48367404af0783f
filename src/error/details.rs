//! [`ErrorDetails`]: the `details` object of each error code (SRD 3.7.2), typed.
//!
//! The pipeline builds and reads these values; they become JSON only at the edge,
//! through the serde derive below, whose field names and values are the wire
//! format of FR-WF-18. Each variant declares its fields in alphabetical order:
//! that is the order the wire has always had (the object was once a sorted map),
//! and the byte-exact test at the end holds it.

use std::fmt::Display;
use std::net::IpAddr;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::TimeoutPhase;

/// The code-specific context of a [`FetchError`](super::FetchError), one variant per
/// shape of the registry. Field names are the wire names; an `Option` field is
/// written only when set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ErrorDetails {
    /// `bad_args` for one request field (FR-WF-02a, 02b, ERR-BADARGS-01).
    BadArgs {
        /// Extension (`start_chunk` past the end): how many chunks there are.
        #[serde(skip_serializing_if = "Option::is_none")]
        chunk_count: Option<usize>,
        /// The argument.
        field: String,
        /// Why it was refused.
        reason: String,
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
        /// The configured allowlist.
        allowed_ports: Vec<u16>,
        /// The refused port.
        port: u16,
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
        /// What the resolver said.
        error: String,
        /// The name that did not resolve.
        host: String,
    },
    /// `robots_disallowed`.
    RobotsDisallowed {
        /// The origin whose robots.txt refused it.
        origin: String,
        /// The refused path.
        path: String,
    },
    /// `robots_unavailable` (FR-WF-09a, ROBOTS-REDIR-02).
    RobotsUnavailable {
        /// Why: a stable token (`http_5xx`, `unexpected_status`, a `network` error's).
        error: String,
        /// The origin.
        origin: String,
        /// The status of the robots.txt response, when one came.
        #[serde(skip_serializing_if = "Option::is_none")]
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
        /// Where it ran out.
        #[serde(serialize_with = "as_display")]
        phase: TimeoutPhase,
        /// The budget that ran out, in milliseconds.
        timeout_ms: u64,
    },
    /// `network`.
    Network {
        /// The addresses a failed connection tried, in order.
        #[serde(skip_serializing_if = "Option::is_none")]
        attempted_ips: Option<Vec<IpAddr>>,
        /// The unsupported `Content-Encoding`.
        #[serde(skip_serializing_if = "Option::is_none")]
        content_encoding: Option<String>,
        /// A stable token, possibly followed by `: ` and the cause
        /// (`tls_validation_failed`, `unexpected_status`, `body_read_failed: ...`).
        error: String,
        /// The unexpected status (FR-WF-07a1, 07a2).
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// `response_too_large` (FR-WF-10e; SRD-READINGS 10).
    ResponseTooLarge {
        /// The limit.
        max_bytes: u64,
        /// The size seen (declared or read so far).
        size: u64,
    },
    /// `unsupported_content_type` (FR-WF-ERR-CT-01).
    UnsupportedContentType {
        /// The media type as served.
        content_type: String,
    },
    /// `http_4xx` / `http_5xx` (FR-WF-ERR-HTTP-01, 02). Every field but the
    /// SRD's two is an extension, written only when set, so a response an
    /// origin sent keeps the SRD's details.
    HttpStatus {
        /// Extension (walls): the price a 402 asked (`crawler-price`).
        #[serde(skip_serializing_if = "Option::is_none")]
        price: Option<Box<str>>,
        /// Extension: why the page was not had. A 429 the politeness limit
        /// answered without contacting the origin: `origin_held` or
        /// `origin_busy`. A wall: `bot_challenge` or `payment_required`.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<&'static str>,
        /// Extension: with a politeness refusal, when a retry may be admitted.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after_seconds: Option<u32>,
        /// The status code.
        status: u16,
        /// The reason phrase; empty when the protocol has none.
        status_text: String,
        /// Extension: with `bot_challenge`, whose wall it is (`cloudflare`,
        /// `akamai`, `datadome`, `human`, `aws_waf`, `vercel`, `captcha`).
        #[serde(skip_serializing_if = "Option::is_none")]
        vendor: Option<&'static str>,
    },
    /// `browser_unavailable` (FR-WF-11a).
    BrowserUnavailable {
        /// The configured or discovered Chromium path.
        chromium_path: String,
        /// Why.
        error: String,
        /// Chromium could not get a sandbox and running without one is not
        /// allowed: written as `"sandbox": "unavailable"`.
        #[serde(
            rename = "sandbox",
            skip_serializing_if = "is_false",
            serialize_with = "as_unavailable"
        )]
        sandbox_unavailable: bool,
        /// The product string of a Chromium too old to use.
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
    /// `browser_crashed`.
    BrowserCrashed {
        /// What happened.
        error: String,
    },
    /// `extraction_failed` / `no_extractable_content` (FR-WF-EXT-EMPTY-02).
    #[serde(serialize_with = "no_extractable_content")]
    NoExtractableContent,
    /// Extension: `extraction_failed` for a document of an extension
    /// format that can not be read: `details.error` names the format
    /// (`unreadable_pdf`, `unreadable_json`, `unreadable_feed`), `details.reason`
    /// what is wrong with it.
    #[serde(serialize_with = "unreadable")]
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
    #[serde(serialize_with = "tool_output_limit")]
    ToolOutputLimit {
        /// The budget not even an empty chunk fits.
        effective_max_bytes: u64,
    },
}

/// Why the politeness limit refused a request itself (extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PoliteRefusal {
    /// `details.reason`: `origin_held` (a 429 or 503 with `Retry-After` holds the
    /// origin past this call's budget) or `origin_busy` (`per_origin_in_flight`
    /// requests stayed in flight until the budget ran out).
    pub reason: &'static str,
    /// `details.retry_after_seconds`: when a retry may be admitted, at least 1.
    pub retry_after_seconds: u64,
}

/// Why a document of an extension format can not be read: the
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
    /// `pdf_resource_limit`: reading the PDF would take more than the reader
    /// allows one document: objects, decompressed bytes, or the memory or CPU
    /// time of the worker process the front doors read PDFs in. A
    /// hostile or pathological file.
    PdfResourceLimit,
    /// `pdf_reader_crashed`: the worker process reading the PDF died otherwise
    /// (a signal, a bug of the parser) or answered something unreadable.
    /// That call fails; the next one gets a fresh worker.
    PdfReaderCrashed,
    /// `json_malformed`: the body is not valid JSON.
    JsonMalformed,
    /// `feed_malformed`: the feed is not well-formed XML.
    FeedMalformed,
}

impl UnreadableReason {
    /// Every reason, in declaration order.
    pub const ALL: [UnreadableReason; 7] = [
        UnreadableReason::PdfEncrypted,
        UnreadableReason::PdfNoTextLayer,
        UnreadableReason::PdfMalformed,
        UnreadableReason::PdfResourceLimit,
        UnreadableReason::PdfReaderCrashed,
        UnreadableReason::JsonMalformed,
        UnreadableReason::FeedMalformed,
    ];

    /// The `details.reason` token.
    pub fn as_str(self) -> &'static str {
        match self {
            UnreadableReason::PdfEncrypted => "pdf_encrypted",
            UnreadableReason::PdfNoTextLayer => "pdf_no_text_layer",
            UnreadableReason::PdfMalformed => "pdf_malformed",
            UnreadableReason::PdfResourceLimit => "pdf_resource_limit",
            UnreadableReason::PdfReaderCrashed => "pdf_reader_crashed",
            UnreadableReason::JsonMalformed => "json_malformed",
            UnreadableReason::FeedMalformed => "feed_malformed",
        }
    }

    /// The `details.error` token: the format that could not be read.
    pub fn error(self) -> &'static str {
        match self {
            UnreadableReason::PdfEncrypted
            | UnreadableReason::PdfNoTextLayer
            | UnreadableReason::PdfMalformed
            | UnreadableReason::PdfResourceLimit
            | UnreadableReason::PdfReaderCrashed => "unreadable_pdf",
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
            UnreadableReason::PdfResourceLimit => {
                "it asks for more memory, time or objects than the reader allows one \
                 document (a hostile or pathological file); look for an HTML or text \
                 version of the document"
            }
            UnreadableReason::PdfReaderCrashed => {
                "the PDF reader failed on this file; retrying will not help, look for an \
                 HTML or text version of the document"
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
}

// The variants whose wire form has a token the type does not hold: the tokens
// are the registry's, written in the wire's key order.

fn no_extractable_content<S: Serializer>(s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(1))?;
    map.serialize_entry("error", "no_extractable_content")?;
    map.end()
}

fn unreadable<S: Serializer>(reason: &UnreadableReason, s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(2))?;
    map.serialize_entry("error", reason.error())?;
    map.serialize_entry("reason", reason.as_str())?;
    map.end()
}

fn tool_output_limit<S: Serializer>(effective_max_bytes: &u64, s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(2))?;
    map.serialize_entry("effective_max_bytes", effective_max_bytes)?;
    map.serialize_entry("error", "tool_output_limit")?;
    map.end()
}

fn as_display<S: Serializer>(value: &impl Display, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

fn as_unavailable<S: Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("unavailable")
}

fn is_false(value: &bool) -> bool {
    !value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every variant, every optional field both set and unset.
    fn samples() -> Vec<ErrorDetails> {
        let ip: IpAddr = "169.254.169.254".parse().unwrap();
        let v6: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let mut all = vec![
            ErrorDetails::BadArgs {
                field: "url".into(),
                reason: "missing".into(),
                chunk_count: None,
            },
            ErrorDetails::BadArgs {
                field: "start_chunk".into(),
                reason: "past the end".into(),
                chunk_count: Some(3),
            },
            ErrorDetails::Validation {
                validation: "\"x\" is not an integer".into(),
            },
            ErrorDetails::InvalidUrl {
                url: "ht tp://".into(),
            },
            ErrorDetails::InvalidScheme {
                scheme: "ftp".into(),
            },
            ErrorDetails::InvalidHost {
                host: "1.2.3.256".into(),
            },
            ErrorDetails::PortBlocked {
                port: 22,
                allowed_ports: vec![80, 443],
            },
            ErrorDetails::SsrfBlocked {
                blocked_ip: ip,
                cidr: "169.254.0.0/16".into(),
                toggle: "block_link_local".into(),
            },
            ErrorDetails::DnsFailed {
                host: "nowhere.test".into(),
                error: "NXDOMAIN".into(),
            },
            ErrorDetails::RobotsDisallowed {
                path: "/private".into(),
                origin: "https://a.test".into(),
            },
            ErrorDetails::RobotsUnavailable {
                origin: "https://a.test".into(),
                error: "http_5xx".into(),
                status: Some(503),
            },
            ErrorDetails::RobotsUnavailable {
                origin: "https://a.test".into(),
                error: "network".into(),
                status: None,
            },
            ErrorDetails::RedirectLimit { count: 6, max: 5 },
            ErrorDetails::Timeout {
                timeout_ms: 20_000,
                phase: TimeoutPhase::Connect,
            },
            ErrorDetails::Network {
                error: "connect_failed".into(),
                status: None,
                content_encoding: None,
                attempted_ips: Some(vec![ip, v6]),
            },
            ErrorDetails::Network {
                error: "unsupported_content_encoding".into(),
                status: Some(200),
                content_encoding: Some("zstd".into()),
                attempted_ips: None,
            },
            ErrorDetails::ResponseTooLarge {
                size: 10_000_001,
                max_bytes: 10_000_000,
            },
            ErrorDetails::UnsupportedContentType {
                content_type: "image/png".into(),
            },
            ErrorDetails::HttpStatus {
                price: None,
                reason: None,
                retry_after_seconds: None,
                status: 404,
                status_text: "Not Found".into(),
                vendor: None,
            },
            ErrorDetails::HttpStatus {
                price: None,
                reason: Some("origin_held"),
                retry_after_seconds: Some(7),
                status: 429,
                status_text: "Too Many Requests".into(),
                vendor: None,
            },
            ErrorDetails::HttpStatus {
                price: None,
                reason: Some("bot_challenge"),
                retry_after_seconds: None,
                status: 403,
                status_text: "Forbidden".into(),
                vendor: Some("cloudflare"),
            },
            ErrorDetails::HttpStatus {
                price: Some("USD 0.01".into()),
                reason: Some("payment_required"),
                retry_after_seconds: None,
                status: 402,
                status_text: "Payment Required".into(),
                vendor: None,
            },
            ErrorDetails::BrowserUnavailable {
                chromium_path: "/usr/bin/chromium".into(),
                error: "not found".into(),
                sandbox_unavailable: false,
                version: None,
            },
            ErrorDetails::BrowserUnavailable {
                chromium_path: "/usr/bin/chromium".into(),
                error: "too old".into(),
                sandbox_unavailable: true,
                version: Some("HeadlessChrome/90.0".into()),
            },
            ErrorDetails::BrowserCrashed {
                error: "renderer crashed".into(),
            },
            ErrorDetails::NoExtractableContent,
            ErrorDetails::Internal {
                error: "oops".into(),
            },
            ErrorDetails::ToolOutputLimit {
                effective_max_bytes: 512,
            },
        ];
        all.extend(
            UnreadableReason::ALL
                .into_iter()
                .map(|reason| ErrorDetails::Unreadable { reason }),
        );
        all
    }

    /// FR-WF-18: the wire bytes of every variant, keys in the order they have
    /// always been written (sorted), optional fields only when set.
    #[test]
    fn fr_wf_18_details_wire_bytes() {
        let wire: Vec<String> = samples()
            .iter()
            .map(|details| serde_json::to_string(details).unwrap())
            .collect();
        let expected = [
            r#"{"field":"url","reason":"missing"}"#,
            r#"{"chunk_count":3,"field":"start_chunk","reason":"past the end"}"#,
            r#"{"validation":"\"x\" is not an integer"}"#,
            r#"{"url":"ht tp://"}"#,
            r#"{"scheme":"ftp"}"#,
            r#"{"host":"1.2.3.256"}"#,
            r#"{"allowed_ports":[80,443],"port":22}"#,
            r#"{"blocked_ip":"169.254.169.254","cidr":"169.254.0.0/16","toggle":"block_link_local"}"#,
            r#"{"error":"NXDOMAIN","host":"nowhere.test"}"#,
            r#"{"origin":"https://a.test","path":"/private"}"#,
            r#"{"error":"http_5xx","origin":"https://a.test","status":503}"#,
            r#"{"error":"network","origin":"https://a.test"}"#,
            r#"{"count":6,"max":5}"#,
            r#"{"phase":"connect","timeout_ms":20000}"#,
            r#"{"attempted_ips":["169.254.169.254","::ffff:10.0.0.1"],"error":"connect_failed"}"#,
            r#"{"content_encoding":"zstd","error":"unsupported_content_encoding","status":200}"#,
            r#"{"max_bytes":10000000,"size":10000001}"#,
            r#"{"content_type":"image/png"}"#,
            r#"{"status":404,"status_text":"Not Found"}"#,
            r#"{"reason":"origin_held","retry_after_seconds":7,"status":429,"status_text":"Too Many Requests"}"#,
            r#"{"reason":"bot_challenge","status":403,"status_text":"Forbidden","vendor":"cloudflare"}"#,
            r#"{"price":"USD 0.01","reason":"payment_required","status":402,"status_text":"Payment Required"}"#,
            r#"{"chromium_path":"/usr/bin/chromium","error":"not found"}"#,
            r#"{"chromium_path":"/usr/bin/chromium","error":"too old","sandbox":"unavailable","version":"HeadlessChrome/90.0"}"#,
            r#"{"error":"renderer crashed"}"#,
            r#"{"error":"no_extractable_content"}"#,
            r#"{"error":"oops"}"#,
            r#"{"effective_max_bytes":512,"error":"tool_output_limit"}"#,
            r#"{"error":"unreadable_pdf","reason":"pdf_encrypted"}"#,
            r#"{"error":"unreadable_pdf","reason":"pdf_no_text_layer"}"#,
            r#"{"error":"unreadable_pdf","reason":"pdf_malformed"}"#,
            r#"{"error":"unreadable_pdf","reason":"pdf_resource_limit"}"#,
            r#"{"error":"unreadable_pdf","reason":"pdf_reader_crashed"}"#,
            r#"{"error":"unreadable_json","reason":"json_malformed"}"#,
            r#"{"error":"unreadable_feed","reason":"feed_malformed"}"#,
        ];
        assert_eq!(wire, expected);
    }
}
