//! `webfetch serve`'s bearer token: where it comes from
//! (`--token-file` or `WEBFETCH_SERVE_TOKEN`) and the constant-time check of
//! `Authorization: Bearer …`.
//!
//! Only a SHA-256 digest of the token is kept, and a presented token is hashed
//! the same way before the comparison, so the comparison takes the same time
//! whatever the lengths and contents; neither value has a `Debug` or `Display`
//! that could put it in a log line or an error.

use std::path::Path;

use http::HeaderValue;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The environment variable that holds the token when no `--token-file` is given.
pub const TOKEN_ENV: &str = "WEBFETCH_SERVE_TOKEN";

/// The shortest token accepted: a guessable token is no protection.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The most a `--token-file` may hold: a token and a newline, with room to spare.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// The configured bearer token, as its digest.
#[derive(Clone)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl BearerToken {
    /// A token from its text, surrounding whitespace (a file's trailing newline)
    /// removed. Refused when shorter than [`MIN_TOKEN_CHARS`] or when it holds a
    /// character a header value can not carry; the error never quotes it.
    pub fn new(secret: &str) -> Result<BearerToken, String> {
        let secret = secret.trim();
        if secret.chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "the serve token must be at least {MIN_TOKEN_CHARS} characters"
            ));
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the serve token must be printable ASCII without spaces".into());
        }
        Ok(BearerToken {
            digest: digest(secret.as_bytes()),
        })
    }

    /// Whether an `Authorization` header carries this token (`Bearer` scheme,
    /// case-insensitive), compared in constant time.
    pub fn accepts(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let value = value.as_bytes();
        let Some((scheme, presented)) = value.split_at_checked(7) else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case(b"bearer ") {
            return false;
        }
        let presented = presented.trim_ascii();
        bool::from(digest(presented).ct_eq(&self.digest))
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The token of `--token-file FILE`, else of [`TOKEN_ENV`] (`env` is its value),
/// else none. An unreadable file or an invalid token is an error naming the
/// source, never the token.
pub fn load_token(file: Option<&Path>, env: Option<String>) -> Result<Option<BearerToken>, String> {
    if let Some(path) = file {
        // A token file another user can write lets them choose the token: read
        // only a regular file of ours (or root's) that group and others cannot
        // write, through the one loader of config secrets.
        let bytes = crate::config::secret_file::read(path, MAX_TOKEN_FILE_BYTES)
            .map_err(|reason| format!("--token-file {} {reason}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("--token-file {}: not UTF-8", path.display()))?;
        return BearerToken::new(&text)
            .map(Some)
            .map_err(|reason| format!("--token-file {}: {reason}", path.display()));
    }
    match env {
        Some(text) if !text.trim().is_empty() => BearerToken::new(&text)
            .map(Some)
            .map_err(|reason| format!("{TOKEN_ENV}: {reason}")),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cret-token-of-some-length";

    fn header(text: &str) -> HeaderValue {
        HeaderValue::from_str(text).unwrap()
    }

    #[test]
    fn only_the_right_bearer_token_is_accepted() {
        let token = BearerToken::new(&format!("{SECRET}\n")).unwrap();
        assert!(token.accepts(Some(&header(&format!("Bearer {SECRET}")))));
        assert!(token.accepts(Some(&header(&format!("bearer {SECRET}")))));
        assert!(!token.accepts(None));
        assert!(!token.accepts(Some(&header("Bearer wrong-token-of-some-length"))));
        assert!(!token.accepts(Some(&header(&format!("Basic {SECRET}")))));
        assert!(!token.accepts(Some(&header(&format!("Bearer {SECRET}x")))));
        assert!(!token.accepts(Some(&header("Bearer"))));
        assert!(!token.accepts(Some(&header(SECRET))));
    }

    #[test]
    fn short_or_unprintable_tokens_are_refused_without_echo() {
        let error = BearerToken::new("short").unwrap_err();
        assert!(!error.contains("short"), "{error}");
        assert!(BearerToken::new("a token with spaces in it").is_err());
        assert!(format!("{:?}", BearerToken::new(SECRET).unwrap()).contains("redacted"));
    }

    #[test]
    fn the_file_wins_over_the_environment() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, SECRET.as_bytes()).unwrap();
        let token = load_token(Some(file.path()), Some("other-token-of-some-length".into()))
            .unwrap()
            .unwrap();
        assert!(token.accepts(Some(&header(&format!("Bearer {SECRET}")))));
        assert!(load_token(None, None).unwrap().is_none());
        assert!(load_token(None, Some(" ".into())).unwrap().is_none());
        assert!(load_token(None, Some(SECRET.into())).unwrap().is_some());
        let error = load_token(None, Some("tiny".into())).unwrap_err();
        assert!(error.starts_with(TOKEN_ENV), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_write_or_a_link_is_refused_without_echo() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, SECRET).unwrap();
        for mode in [0o666, 0o620, 0o602] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let error = load_token(Some(&path), None).unwrap_err();
            assert!(error.contains("writable by group or others"), "{error}");
            assert!(!error.contains(SECRET), "{error}");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(load_token(Some(&path), None).unwrap().is_some());
        let link = dir.path().join("link");
        symlink(&path, &link).unwrap();
        let error = load_token(Some(&link), None).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
    }
}
