//! The redirect decision of one hop (FR-WF-07, 07b, 07b1, 07e, 07f, 07f1, 07g;
//! Appendix B.2).
//!
//! Pure: given the current URL, the `Location` header and the hops followed so
//! far, either the validated next URL or the error. The client then runs the
//! hop's port/SSRF checks and the robots hook before connecting.

use http::HeaderValue;

use crate::canonical_url::CanonicalUrl;
use crate::error::FetchError;

/// Appendix B.2: count the hop, refuse it past `max_redirects`
/// (`redirect_limit {count, max}` where `count` includes the refused hop, so
/// `max_redirects = 0` gives `{count: 1, max: 0}`), then resolve and validate the
/// `Location` exactly like an input URL (SRD-READINGS 2, 3).
pub(crate) fn next_hop(
    current: &CanonicalUrl,
    location: Option<&HeaderValue>,
    followed: u32,
    max_redirects: u32,
) -> Result<CanonicalUrl, FetchError> {
    let attempted = followed.saturating_add(1);
    if attempted > max_redirects {
        return Err(FetchError::redirect_limit(attempted, max_redirects));
    }
    let raw = location.map(location_text);
    current.resolve_redirect(raw.as_deref())
}

/// The `Location` value as text. Servers sometimes send raw UTF-8 or Latin-1
/// bytes; valid UTF-8 is kept (the URL parser percent-encodes it), any other
/// non-ASCII byte is percent-encoded here so no byte is lost or invented.
fn location_text(value: &HeaderValue) -> String {
    match std::str::from_utf8(value.as_bytes()) {
        Ok(text) => text.to_owned(),
        Err(_) => value
            .as_bytes()
            .iter()
            .map(|&b| {
                if b.is_ascii() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn base() -> CanonicalUrl {
        CanonicalUrl::parse("http://a.example/dir/page").unwrap()
    }

    #[test]
    fn limit_counts_the_refused_hop() {
        let location = HeaderValue::from_static("/next");
        let zero = next_hop(&base(), Some(&location), 0, 0).unwrap_err();
        assert_eq!(zero.code, ErrorCode::RedirectLimit);
        assert_eq!(
            (
                zero.details_json()["count"].as_u64(),
                zero.details_json()["max"].as_u64()
            ),
            (Some(1), Some(0))
        );
        let sixth = next_hop(&base(), Some(&location), 5, 5).unwrap_err();
        assert_eq!(sixth.details_json()["count"], 6);
        assert_eq!(
            next_hop(&base(), Some(&location), 4, 5).unwrap().as_str(),
            "http://a.example/next"
        );
    }

    #[test]
    fn location_is_resolved_and_validated() {
        let relative = HeaderValue::from_static("other?x=1#frag");
        assert_eq!(
            next_hop(&base(), Some(&relative), 0, 5).unwrap().as_str(),
            "http://a.example/dir/other?x=1"
        );
        let missing = next_hop(&base(), None, 0, 5).unwrap_err();
        assert_eq!(
            (missing.code, missing.details_json()["url"].as_str()),
            (ErrorCode::InvalidUrl, Some(""))
        );
        let bad = HeaderValue::from_static("http://[::1");
        let error = next_hop(&base(), Some(&bad), 0, 5).unwrap_err();
        assert_eq!(
            (error.code, error.details_json()["url"].as_str()),
            (ErrorCode::InvalidUrl, Some("http://[::1"))
        );
        let scheme = HeaderValue::from_static("file:///etc/passwd");
        assert_eq!(
            next_hop(&base(), Some(&scheme), 0, 5).unwrap_err().code,
            ErrorCode::InvalidScheme
        );
        let octal = HeaderValue::from_static("http://0177.0.0.1/");
        assert_eq!(
            next_hop(&base(), Some(&octal), 0, 5).unwrap_err().code,
            ErrorCode::InvalidHost
        );
    }

    #[test]
    fn non_utf8_location_bytes_are_escaped() {
        let latin1 = HeaderValue::from_bytes(b"/caf\xe9").unwrap();
        assert_eq!(location_text(&latin1), "/caf%E9");
        assert_eq!(
            next_hop(&base(), Some(&latin1), 0, 5).unwrap().as_str(),
            "http://a.example/caf%E9"
        );
    }
}
