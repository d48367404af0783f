//! URL validation and the canonical URL (SRD 3.2.1 and Appendix A).
//!
//! [`CanonicalUrl::parse`] runs the checks of FR-WF-04-PREC in order (parse, scheme,
//! userinfo, IPv6 zone, numeric host) and returns the canonical form of Appendix A:
//! fragment removed, scheme and host lowercase, IDNA to ASCII, default port elided,
//! dot segments resolved, query order kept, percent-encoding normalised. WHATWG
//! parsing is the `url` crate's; the raw-host rules (FR-WF-04b1) look at the input
//! string itself, because the parser silently turns `0x7f000001` into `127.0.0.1`.

mod origin;

use std::fmt;
use std::net::IpAddr;

use url::{Host, Url};

pub use self::origin::{Origin, OriginError};
use crate::error::FetchError;

/// A URL that passed every URL-level check, in canonical form (Appendix A.2).
///
/// The only way to build one is through the validation of FR-WF-04-PREC, so holding
/// a `CanonicalUrl` means the scheme is http(s), there is no userinfo, no zone id
/// and no non-canonical numeric host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CanonicalUrl(Url);

/// The host of a canonical URL: a DNS name to resolve or an IP literal that skips
/// DNS (FR-WF-06-LITERAL).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetHost {
    /// An ASCII (IDNA-normalised, lowercase) domain name.
    Domain(String),
    /// An IPv4 or IPv6 literal.
    Ip(IpAddr),
}

impl CanonicalUrl {
    /// Validates an input URL (FR-WF-04-PREC) and returns its canonical form.
    pub fn parse(input: &str) -> Result<CanonicalUrl, FetchError> {
        let cleaned = strip_like_whatwg(input);
        let url = match Url::parse(&cleaned) {
            Ok(url) => url,
            Err(error) => return Err(parse_failure(&cleaned, error)),
        };
        CanonicalUrl::from_parsed(url, &cleaned)
    }

    /// Resolves a redirect `Location` against this URL (FR-WF-07b) and validates the
    /// target exactly like an input URL (FR-WF-07e, SRD-READINGS 2). A missing or
    /// unparsable Location is `invalid_url` with the raw value (FR-WF-07b1).
    pub fn resolve_redirect(&self, location: Option<&str>) -> Result<CanonicalUrl, FetchError> {
        let raw = location.unwrap_or("");
        let cleaned = strip_like_whatwg(raw);
        if cleaned.is_empty() {
            return Err(FetchError::invalid_url("", "redirect without a Location"));
        }
        let joined = self
            .0
            .join(&cleaned)
            .map_err(|e| parse_failure(&cleaned, e))?;
        CanonicalUrl::from_parsed(joined, &cleaned)
    }

    /// Steps 2-5 of FR-WF-04-PREC on a parsed URL; `raw` is the text it came from.
    fn from_parsed(mut url: Url, raw: &str) -> Result<CanonicalUrl, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::invalid_scheme(url.scheme()));
        }
        let raw_authority = raw_authority(raw);
        let has_userinfo = !url.username().is_empty()
            || url.password().is_some()
            || raw_authority.is_some_and(|a| a.contains('@'));
        if has_userinfo {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            return Err(FetchError::invalid_url(
                url.as_str(),
                "URLs with userinfo (user:password@) are not allowed",
            ));
        }
        let raw_host = raw_authority.map(host_of_authority);
        if let Some(inner) = raw_host.and_then(|h| h.strip_prefix('['))
            && inner.contains('%')
        {
            return Err(FetchError::invalid_url(
                url.as_str(),
                "IPv6 zone identifiers are not allowed",
            ));
        }
        if let Some(Host::Ipv4(_)) = url.host() {
            // A relative redirect keeps the (already validated) host of its base.
            if let Some(raw_host) = raw_host
                && !is_canonical_dotted_decimal(raw_host)
            {
                return Err(FetchError::invalid_host(
                    raw_host,
                    "non-canonical numeric IPv4 form; use dotted decimal",
                ));
            }
        }
        if url.host().is_none() {
            return Err(FetchError::invalid_url(url.as_str(), "URL has no host"));
        }
        url.set_fragment(None);
        normalize_percent_encoding(&mut url);
        Ok(CanonicalUrl(url))
    }

    /// The canonical URL string (Appendix A.2).
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The parsed URL.
    pub fn as_url(&self) -> &Url {
        &self.0
    }

    /// `"http"` or `"https"`.
    pub fn scheme(&self) -> &str {
        self.0.scheme()
    }

    /// The host to resolve or the literal to check.
    pub fn host(&self) -> TargetHost {
        match self.0.host() {
            Some(Host::Ipv4(ip)) => TargetHost::Ip(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => TargetHost::Ip(IpAddr::V6(ip)),
            Some(Host::Domain(domain)) => TargetHost::Domain(domain.to_owned()),
            None => unreachable!("a CanonicalUrl always has a host"),
        }
    }

    /// The host as it appears in the URL (IPv6 in brackets).
    pub fn host_str(&self) -> &str {
        self.0.host_str().unwrap_or("")
    }

    /// The effective port: explicit, else 80/443 (FR-WF-05f).
    pub fn port(&self) -> u16 {
        self.0
            .port_or_known_default()
            .expect("http(s) always has a default port")
    }

    /// The origin of this URL: what robots.txt and politeness are kept per.
    pub fn origin(&self) -> Origin {
        Origin::of_url(self)
    }

    /// The robots.txt matching input: canonical path plus `?query` if present
    /// (FR-WF-ROBOTS-PATH-01).
    pub fn path_and_query(&self) -> String {
        match self.0.query() {
            Some(query) => format!("{}?{query}", self.0.path()),
            None => self.0.path().to_owned(),
        }
    }

    /// `scheme://host[:port]/path`, without the query: safe for logs and approval
    /// prompts (FR-WF-19b, NFR-WF-OP-03).
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }
}

/// `scheme://host[:port]/path` of a raw URL that may never have been validated (a
/// browser subrequest), for logs (FR-WF-19b): query, fragment and userinfo
/// dropped; a URL with no host is its scheme only, and one that does not parse
/// is `<unparsable>`.
pub(crate) fn redact_raw(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(url) if url.has_host() => redact(&url),
        Ok(url) => format!("{}:", url.scheme()),
        Err(_) => "<unparsable>".to_owned(),
    }
}

/// The one redaction of the crate: the URL without query, fragment or userinfo.
fn redact(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

impl fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Mirrors the WHATWG pre-processing: leading/trailing C0 controls and spaces
/// trimmed, tabs and newlines removed anywhere, so raw-host extraction sees what the
/// parser saw.
fn strip_like_whatwg(input: &str) -> String {
    input
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect()
}

/// A parse failure is `invalid_url`, except an out-of-range dotted-decimal IPv4
/// host, which is `invalid_host` with the raw host (FR-WF-04b3, SRD-READINGS 1).
///
/// WHATWG parsing rejects such a host, yet FR-WF-04-PREC still ranks the numeric-host
/// rule last: a non-http(s) scheme is `invalid_scheme` (`ftp://1.2.3.256/`) and
/// userinfo is `invalid_url` (`http://u:p@1.2.3.256/`, FR-WF-04c) before it.
fn parse_failure(cleaned: &str, error: url::ParseError) -> FetchError {
    if error == url::ParseError::InvalidIpv4Address
        && let Some(authority) = raw_authority(cleaned)
    {
        let host = host_of_authority(authority);
        if is_dotted_digits(host) {
            if let Some(colon) = scheme_end(cleaned) {
                let scheme = cleaned[..colon].to_ascii_lowercase();
                if !matches!(scheme.as_str(), "http" | "https") {
                    return FetchError::invalid_scheme(&scheme);
                }
            }
            if authority.contains('@') {
                return FetchError::invalid_url(
                    &redact_userinfo(cleaned),
                    "URLs with userinfo (user:password@) are not allowed",
                );
            }
            return FetchError::invalid_host(host, "IPv4 octet out of range");
        }
    }
    FetchError::invalid_url(&redact_userinfo(cleaned), error)
}

/// The authority substring of the raw input (FR-WF-04b1): after the scheme's `:`
/// and its slashes (or after `//` in a scheme-relative reference), up to the next
/// `/`, `\`, `?`, `#` or the end. `None` when the input has no authority.
fn raw_authority(input: &str) -> Option<&str> {
    let after_scheme = match scheme_end(input) {
        Some(colon) => {
            let rest = &input[colon + 1..];
            let trimmed = rest.trim_start_matches(['/', '\\']);
            if trimmed.len() == rest.len() && !is_special(&input[..colon]) {
                return None;
            }
            trimmed
        }
        None => {
            let mut chars = input.chars();
            match (chars.next(), chars.next()) {
                (Some('/' | '\\'), Some('/' | '\\')) => input[2..].trim_start_matches(['/', '\\']),
                _ => return None,
            }
        }
    };
    let end = after_scheme
        .find(['/', '\\', '?', '#'])
        .unwrap_or(after_scheme.len());
    Some(&after_scheme[..end])
}

fn is_special(scheme: &str) -> bool {
    ["http", "https", "ws", "wss", "ftp", "file"]
        .iter()
        .any(|s| s.eq_ignore_ascii_case(scheme))
}

/// The index of the `:` ending a scheme (`^[A-Za-z][A-Za-z0-9+.-]*:`), if any.
fn scheme_end(input: &str) -> Option<usize> {
    let bytes = input.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (bytes[end] == b':').then_some(end)
}

/// The host part of an authority: without `userinfo@` and `:port`; bracketed IPv6
/// keeps its brackets.
fn host_of_authority(authority: &str) -> &str {
    let host_port = match authority.rfind('@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    if host_port.starts_with('[') {
        return match host_port.find(']') {
            Some(close) => &host_port[..=close],
            None => host_port,
        };
    }
    match host_port.rfind(':') {
        Some(colon) => &host_port[..colon],
        None => host_port,
    }
}

/// FR-WF-04b1's canonical dotted-decimal regex, without a regex engine: four octets
/// 0-255, no leading zeros except a lone `0`.
fn is_canonical_dotted_decimal(host: &str) -> bool {
    let octets: Vec<&str> = host.split('.').collect();
    octets.len() == 4
        && octets.iter().all(|octet| {
            !octet.is_empty()
                && octet.len() <= 3
                && octet.bytes().all(|b| b.is_ascii_digit())
                && (octet.len() == 1 || !octet.starts_with('0'))
                && octet.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// Dots and digits only, e.g. `1.2.3.256`.
fn is_dotted_digits(host: &str) -> bool {
    !host.is_empty() && host.contains('.') && host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// The input with any `userinfo@` removed, for error details (SRD-READINGS 7).
fn redact_userinfo(input: &str) -> String {
    match raw_authority(input) {
        Some(authority) if authority.contains('@') => {
            let at = authority.rfind('@').expect("contains @");
            let start = authority.as_ptr() as usize - input.as_ptr() as usize;
            format!("{}{}", &input[..start], &input[start + at + 1..])
        }
        _ => input.to_owned(),
    }
}

/// FR-WF-NORM-06 on path and query: `%xx` of an unreserved character is decoded,
/// every other escape gets uppercase hex. Reserved characters stay encoded.
fn normalize_percent_encoding(url: &mut Url) {
    let path = normalize_escapes(url.path());
    if path != url.path() {
        url.set_path(&path);
    }
    if let Some(query) = url.query() {
        let normalized = normalize_escapes(query);
        if normalized != query {
            url.set_query(Some(&normalized));
        }
    }
}

fn normalize_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2]))
        {
            let value = hi << 4 | lo;
            let unreserved =
                value.is_ascii_alphanumeric() || matches!(value, b'-' | b'.' | b'_' | b'~');
            // After a stray `%` (`%E%61`), decoding a hex digit would make a new
            // escape (`%Ea`) that the next normalisation reads differently:
            // keep it encoded, so the canonical form is a fixed point.
            if unreserved && !(value.is_ascii_hexdigit() && ends_in_partial_escape(&out)) {
                out.push(value as char);
            } else {
                out.push('%');
                out.push(bytes[i + 1].to_ascii_uppercase() as char);
                out.push(bytes[i + 2].to_ascii_uppercase() as char);
            }
            i += 3;
            continue;
        }
        let ch = text[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Whether `text` ends with `%` or `%` and one hex digit: the start of an escape
/// that one more hex digit would complete.
fn ends_in_partial_escape(text: &str) -> bool {
    match text.as_bytes() {
        [.., b'%'] => true,
        [.., b'%', digit] => digit.is_ascii_hexdigit(),
        _ => false,
    }
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn canonical(input: &str) -> String {
        CanonicalUrl::parse(input).unwrap().as_str().to_owned()
    }

    fn code(input: &str) -> ErrorCode {
        CanonicalUrl::parse(input).unwrap_err().code
    }

    #[test]
    fn appendix_a3_examples() {
        assert_eq!(
            canonical("HTTPS://Example.COM/Page#section"),
            "https://example.com/Page"
        );
        assert_eq!(canonical("http://example.com:80/"), "http://example.com/");
        assert_eq!(
            canonical("https://example.com:443/a/../b"),
            "https://example.com/b"
        );
        assert_eq!(
            canonical("http://EXAMPLE.com:8080/"),
            "http://example.com:8080/"
        );
        assert_eq!(
            canonical("https://example.com/path?b=2&a=1"),
            "https://example.com/path?b=2&a=1"
        );
    }

    /// Found by `cargo fuzz run url`: decoding `%61` after a stray `%E` made a new
    /// escape `%Ea`, which the next parse upper-cased.
    #[test]
    fn canonical_form_is_a_fixed_point_after_stray_percent() {
        for input in [
            "https://s/%E%61e",
            "https://s/%%36%31",
            "https://s/a%4%31?q=%%46%46",
            "https:s:/.448K.%2E%71e.%\u{18}\0%E%61e",
        ] {
            let once = canonical(input);
            assert_eq!(canonical(&once), once, "{input}");
        }
        assert_eq!(canonical("https://s/%E%61e"), "https://s/%E%61e");
        assert_eq!(canonical("https://s/%41%E"), "https://s/A%E");
    }

    #[test]
    fn percent_encoding_is_normalised() {
        assert_eq!(
            canonical("http://a.example/%7euser/%2f%41?q=%7e%2a"),
            "http://a.example/~user/%2FA?q=~%2A"
        );
        assert_eq!(canonical("http://a.example"), "http://a.example/");
    }

    #[test]
    fn precedence_table_rows() {
        assert_eq!(code("not a url"), ErrorCode::InvalidUrl);
        assert_eq!(code("ftp://user:pass@host/"), ErrorCode::InvalidScheme);
        assert_eq!(
            code("https://user:pass@example.com/"),
            ErrorCode::InvalidUrl
        );
        assert_eq!(code("http://[fe80::1%25lo0]/"), ErrorCode::InvalidUrl);
        assert_eq!(code("http://0x7f000001/"), ErrorCode::InvalidHost);
    }

    /// FR-WF-04-PREC with an out-of-range dotted quad, which WHATWG parsing rejects:
    /// scheme first, then userinfo, and only then `invalid_host` (SRD-READINGS 1).
    #[test]
    fn out_of_range_dotted_quad_keeps_precedence() {
        let alone = CanonicalUrl::parse("http://1.2.3.256/").unwrap_err();
        assert_eq!(alone.code, ErrorCode::InvalidHost);
        assert_eq!(alone.details_json()["host"], "1.2.3.256");
        let userinfo = CanonicalUrl::parse("http://u:p@1.2.3.256/").unwrap_err();
        assert_eq!(userinfo.code, ErrorCode::InvalidUrl);
        assert!(!userinfo.to_json().contains("u:p"));
        let scheme = CanonicalUrl::parse("ftp://1.2.3.256/").unwrap_err();
        assert_eq!(scheme.code, ErrorCode::InvalidScheme);
        assert_eq!(scheme.details_json()["scheme"], "ftp");
        assert_eq!(code("FTP://u:p@1.2.3.256/"), ErrorCode::InvalidScheme);
    }

    #[test]
    fn userinfo_never_echoed() {
        let error = CanonicalUrl::parse("https://user:secret@example.com/").unwrap_err();
        assert!(!error.to_json().contains("secret"));
        assert_eq!(error.details_json()["url"], "https://example.com/");
    }

    #[test]
    fn raw_authority_forms() {
        assert_eq!(raw_authority("http://a.b:80/x"), Some("a.b:80"));
        assert_eq!(raw_authority("http:\\\\a.b\\x"), Some("a.b"));
        assert_eq!(raw_authority("//a.b/x"), Some("a.b"));
        assert_eq!(raw_authority("/x"), None);
        assert_eq!(host_of_authority("u:p@[::1]:8080"), "[::1]");
        assert_eq!(host_of_authority("u@h:1"), "h");
    }

    #[test]
    fn redirect_resolution_validates_the_target() {
        let base = CanonicalUrl::parse("http://example.com/a/b").unwrap();
        assert_eq!(
            base.resolve_redirect(Some("../c")).unwrap().as_str(),
            "http://example.com/c"
        );
        assert_eq!(
            base.resolve_redirect(Some("//0x7f000001/"))
                .unwrap_err()
                .code,
            ErrorCode::InvalidHost
        );
        assert_eq!(
            base.resolve_redirect(Some("file:///etc/passwd"))
                .unwrap_err()
                .code,
            ErrorCode::InvalidScheme
        );
        let missing = base.resolve_redirect(None).unwrap_err();
        assert_eq!(
            (missing.code, missing.details_json()["url"].as_str()),
            (ErrorCode::InvalidUrl, Some(""))
        );
        for (location, expected) in [
            ("http://1.2.3.256/", ErrorCode::InvalidHost),
            ("//1.2.3.256/", ErrorCode::InvalidHost),
            ("http://u:p@1.2.3.256/", ErrorCode::InvalidUrl),
            ("ftp://1.2.3.256/", ErrorCode::InvalidScheme),
        ] {
            let error = base.resolve_redirect(Some(location)).unwrap_err();
            assert_eq!(error.code, expected, "{location}");
        }
        let blank = base.resolve_redirect(Some("   ")).unwrap_err();
        assert_eq!(blank.details_json()["url"], "");
    }

    #[test]
    fn origin_display_and_robots_url() {
        let url = CanonicalUrl::parse("http://Example.com:8080/x?y").unwrap();
        assert_eq!(url.origin().to_string(), "http://example.com:8080");
        assert_eq!(
            url.origin().robots_url().as_str(),
            "http://example.com:8080/robots.txt"
        );
        let url = CanonicalUrl::parse("https://example.com/x").unwrap();
        assert_eq!(url.origin().to_string(), "https://example.com");
        assert_eq!(url.path_and_query(), "/x");
        assert_eq!(
            CanonicalUrl::parse("https://e.com/p?q=secret")
                .unwrap()
                .redacted(),
            "https://e.com/p"
        );
    }

    #[test]
    fn fr_wf_19b_redaction_keeps_scheme_host_path_only() {
        assert_eq!(
            redact_raw("http://u:p@a.test/p?q=secret#f"),
            "http://a.test/p"
        );
        assert_eq!(
            redact_raw("https://a.test:8443/x/?t=1"),
            "https://a.test:8443/x/"
        );
        assert_eq!(redact_raw("data:text/plain,secret"), "data:");
        assert_eq!(redact_raw("::"), "<unparsable>");
        let canonical = CanonicalUrl::parse("https://A.test/p?token=secret").unwrap();
        assert_eq!(canonical.redacted(), "https://a.test/p");
    }
}
