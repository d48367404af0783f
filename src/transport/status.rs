//! Status mapping (FR-WF-07a, 07a1, 07a2, FR-WF-ERR-HTTP-01/02, Appendix F.3).

use http::{Response, StatusCode, Version};

use crate::error::FetchError;

/// Longest reason phrase kept: a hostile server must not grow error messages.
const MAX_STATUS_TEXT: usize = 256;

/// Whether `status` is a redirect the client follows (FR-WF-07a): 301, 302, 303,
/// 307 and 308 only.
pub(crate) fn is_followed_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// FR-WF-07a1/07a2 and F.3: `Ok(())` for 200 only. 1xx, every other 2xx, 3xx
/// (redirects that reach here were not followed) are `network` /
/// `unexpected_status` (SRD-READINGS 8 for a 1xx that ends the exchange); 4xx is
/// `http_4xx` (retryable for 408 and 429) and 5xx `http_5xx`, both with
/// `status_text`. Anything outside 100..=599 is `unexpected_status` too.
pub(crate) fn check_status(status: u16, status_text: &str) -> Result<(), FetchError> {
    match status {
        200 => Ok(()),
        400..=599 => Err(FetchError::http_status(status, status_text)),
        _ => Err(FetchError::unexpected_status(status)),
    }
}

/// The reason phrase of a response (FR-WF-ERR-HTTP-02): HTTP/1.x's as sent (hyper
/// keeps it in the extensions only when it differs from the canonical one), and
/// empty for HTTP/2 and later, which have none.
pub(crate) fn status_text<B>(response: &Response<B>) -> String {
    if response.version() >= Version::HTTP_2 {
        return String::new();
    }
    let text = match response.extensions().get::<hyper::ext::ReasonPhrase>() {
        Some(reason) => String::from_utf8_lossy(reason.as_bytes()).into_owned(),
        None => canonical_reason(response.status()).to_owned(),
    };
    truncate(text)
}

fn canonical_reason(status: StatusCode) -> &'static str {
    status.canonical_reason().unwrap_or("")
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_STATUS_TEXT {
        let mut end = MAX_STATUS_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn appendix_f3_table() {
        assert!(check_status(200, "OK").is_ok());
        for status in [
            100, 101, 103, 199, 201, 204, 206, 226, 300, 304, 305, 306, 399, 0, 600, 999,
        ] {
            let error = check_status(status, "").unwrap_err();
            assert_eq!(error.code, ErrorCode::Network, "{status}");
            assert_eq!(error.details_json()["error"], "unexpected_status");
            assert_eq!(error.details_json()["status"], status);
        }
        let not_found = check_status(404, "Not Found").unwrap_err();
        assert_eq!(not_found.code, ErrorCode::Http4xx);
        assert_eq!(not_found.details_json()["status_text"], "Not Found");
        assert!(!not_found.retryable);
        assert!(check_status(408, "").unwrap_err().retryable);
        assert!(check_status(429, "").unwrap_err().retryable);
        let unavailable = check_status(503, "").unwrap_err();
        assert_eq!(unavailable.code, ErrorCode::Http5xx);
        assert!(unavailable.retryable);
    }

    #[test]
    fn only_five_redirect_statuses_are_followed() {
        let followed: Vec<u16> = (300..400).filter(|s| is_followed_redirect(*s)).collect();
        assert_eq!(followed, vec![301, 302, 303, 307, 308]);
    }

    #[test]
    fn reason_phrase_rules() {
        let mut h1 = Response::new(());
        *h1.status_mut() = StatusCode::NOT_FOUND;
        assert_eq!(status_text(&h1), "Not Found");
        let mut h2 = Response::new(());
        *h2.status_mut() = StatusCode::NOT_FOUND;
        *h2.version_mut() = Version::HTTP_2;
        assert_eq!(status_text(&h2), "");
        assert_eq!(truncate("é".repeat(200)).len(), 256);
    }
}
