//! The cache key and the file layout it names (FR-WF-16, FR-WF-CCH-KEY-01..02,
//! FR-WF-16a, 16b).
//!
//! Extension: a document extracted in article mode is keyed
//! `sha256(canonical_url + "\n" + rendering_method + "\narticle")`, so it can never
//! be served to an SRD-mode call, nor an SRD document to an article call; a browser
//! document rendered with `robots_for_frames` appends
//! `"\nrobots_for_frames"`, so frames robots.txt refused never come back from a
//! document rendered without the check, nor the reverse. A document fetched with
//! extension formats enabled appends `"\nformats=pdf,markdown,..."`
//! (the enabled set, canonical order): such a call asks for Markdown first and
//! accepts PDFs, JSON and feeds, so neither its documents nor the SRD's can answer
//! the other (a publisher's Markdown is never served to a call that asked for
//! HTML, nor a PDF's text to a call that must refuse it). The SRD key is
//! unchanged.

use std::fmt;
#[cfg(any(test, feature = "internals"))]
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::canonical_url::CanonicalUrl;
use crate::vocabulary::ExtractionMode;
use crate::vocabulary::Formats;
use crate::vocabulary::RenderingMethod;

/// Extension: what besides the URL and the rendering method decides a document's
/// content, and so its key. The default is the SRD's document, under the SRD key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Variant {
    /// How the HTML was extracted.
    pub extraction: ExtractionMode,
    /// Rendered with `robots_for_frames`, so frames robots.txt refused
    /// are not in it. Only a browser document can be one: the caller sets it for
    /// those only.
    pub robots_for_frames: bool,
    /// The extension formats the call enabled (`[tools.webfetch.content]
    /// formats`); empty for the SRD's documents.
    pub formats: Formats,
}

impl From<ExtractionMode> for Variant {
    /// A document extracted in `extraction` mode, with nothing else set.
    fn from(extraction: ExtractionMode) -> Variant {
        Variant {
            extraction,
            robots_for_frames: false,
            formats: Formats::NONE,
        }
    }
}

/// A cache key: `sha256(canonical_url + "\n" + rendering_method)` (FR-WF-16).
///
/// Held as the 32 digest bytes; shown as 64 lowercase hex characters
/// (FR-WF-CCH-KEY-02). Byte order equals the lexicographic order of the hex form, so
/// `Ord` is the tie-break order FR-WF-CCH-LRU-01 asks for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct CacheKey([u8; 32]);

const HEX: &[u8; 16] = b"0123456789abcdef";

impl CacheKey {
    /// The key of the final canonical URL fetched with `method` (FR-WF-CCH-KEY-01).
    /// Request parameters (`max_chunk_tokens`, `no_cache`, `force_browser`) are
    /// deliberately not inputs.
    ///
    /// Extension: `variant`. [`Variant::default`] (the SRD's) is the SRD's key;
    /// article mode appends `"\narticle"` to the hashed text, then
    /// `robots_for_frames` appends `"\nrobots_for_frames"`, then the formats theirs.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(
        canonical_url: &CanonicalUrl,
        method: RenderingMethod,
        variant: Variant,
    ) -> CacheKey {
        CacheKey::from_parts(canonical_url.as_str(), method, variant)
    }

    /// The key of a URL string as stored in an entry; used to check that a file
    /// holds the entry its name promises.
    pub(crate) fn from_parts(
        canonical_url: &str,
        method: RenderingMethod,
        variant: Variant,
    ) -> CacheKey {
        let mut hasher = Sha256::new();
        hasher.update(canonical_url.as_bytes());
        hasher.update(b"\n");
        hasher.update(method.as_str().as_bytes());
        if variant.extraction != ExtractionMode::Srd {
            hasher.update(b"\n");
            hasher.update(variant.extraction.as_str().as_bytes());
        }
        if variant.robots_for_frames {
            hasher.update(b"\nrobots_for_frames");
        }
        if !variant.formats.is_empty() {
            hasher.update(b"\nformats=");
            hasher.update(variant.formats.to_string().as_bytes());
        }
        CacheKey(hasher.finalize().into())
    }

    /// The 32 digest bytes (the LRU snapshot's record format).
    pub(crate) fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key whose digest is `bytes`.
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> CacheKey {
        CacheKey(bytes)
    }

    /// Parses 64 lowercase hex characters (a file stem found on disk); anything
    /// else is not one of our files.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn from_hex(text: &str) -> Option<CacheKey> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *slot = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(CacheKey(out))
    }

    /// The 64 lowercase hex characters.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn to_hex(self) -> String {
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        out
    }

    /// `{first2}`: the shard directory name (FR-WF-16a).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn shard(&self) -> String {
        let mut hex = self.to_hex();
        hex.truncate(2);
        hex
    }

    /// `{keyhex}.json`: the entry's file name within its shard (FR-WF-16a).
    pub(crate) fn file_name(&self) -> String {
        format!("{}.json", self.to_hex())
    }

    /// `{dir}/{first2}/{keyhex}.json` (FR-WF-16a). Only hex reaches the path, never
    /// URL text (FR-WF-16b).
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn entry_path(&self, dir: &Path) -> PathBuf {
        let hex = self.to_hex();
        dir.join(&hex[..2]).join(format!("{hex}.json"))
    }
}

/// Lowercase hex only: an uppercase name was not written by us.
fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_sha256_of_url_newline_method_in_lowercase_hex() {
        // sha256("https://example.com/\nhttp"), computed independently.
        let key = CacheKey::from_parts(
            "https://example.com/",
            RenderingMethod::Http,
            Variant::default(),
        );
        let expected: String = Sha256::digest(b"https://example.com/\nhttp")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(key.to_hex(), expected);
        assert_eq!(key.to_hex().len(), 64);
    }

    #[test]
    fn article_key_appends_the_mode_and_srd_key_is_unchanged() {
        let hex = |bytes: &[u8]| -> String {
            Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        let url = CanonicalUrl::parse("https://example.com/").unwrap();
        let article = CacheKey::new(&url, RenderingMethod::Http, ExtractionMode::Article.into());
        assert_eq!(
            article.to_hex(),
            hex(b"https://example.com/\nhttp\narticle")
        );
        let srd = CacheKey::new(&url, RenderingMethod::Http, Variant::default());
        assert_eq!(
            srd,
            CacheKey::new(&url, RenderingMethod::Http, Variant::default())
        );
        assert_eq!(srd.to_hex(), hex(b"https://example.com/\nhttp"));
        assert_ne!(article, srd);
    }

    #[test]
    fn formats_append_the_enabled_set_last() {
        let url = CanonicalUrl::parse("https://example.com/").unwrap();
        let variant = Variant {
            extraction: ExtractionMode::Article,
            robots_for_frames: true,
            formats: Formats::ALL,
        };
        let key = CacheKey::new(&url, RenderingMethod::Browser, variant);
        let expected: String = Sha256::digest(
            b"https://example.com/\nbrowser\narticle\nrobots_for_frames\nformats=pdf,markdown,json,feed",
        )
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
        assert_eq!(key.to_hex(), expected);
        let none = Variant {
            formats: Formats::NONE,
            ..variant
        };
        assert_ne!(key, CacheKey::new(&url, RenderingMethod::Browser, none));
    }

    #[test]
    fn robots_for_frames_appends_its_name_after_the_mode() {
        let hex = |bytes: &[u8]| -> String {
            Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        let url = CanonicalUrl::parse("https://example.com/").unwrap();
        let frames = |extraction| Variant {
            formats: Formats::NONE,
            extraction,
            robots_for_frames: true,
        };
        let srd = CacheKey::new(&url, RenderingMethod::Browser, frames(ExtractionMode::Srd));
        assert_eq!(
            srd.to_hex(),
            hex(b"https://example.com/\nbrowser\nrobots_for_frames")
        );
        assert_ne!(
            srd,
            CacheKey::new(&url, RenderingMethod::Browser, Variant::default())
        );
        let article = CacheKey::new(
            &url,
            RenderingMethod::Browser,
            frames(ExtractionMode::Article),
        );
        assert_eq!(
            article.to_hex(),
            hex(b"https://example.com/\nbrowser\narticle\nrobots_for_frames")
        );
    }

    #[test]
    fn hex_round_trips_and_rejects_foreign_names() {
        let key = CacheKey::from_parts(
            "https://a.example/",
            RenderingMethod::Browser,
            Variant::default(),
        );
        assert_eq!(CacheKey::from_hex(&key.to_hex()), Some(key));
        for bad in [
            "",
            "abc",
            &key.to_hex().to_uppercase(),
            &format!("{}0", key.to_hex()),
            &"g".repeat(64),
            &"é".repeat(32),
        ] {
            assert_eq!(CacheKey::from_hex(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ordering_matches_hex_ordering() {
        let a = CacheKey::from_hex(&format!("0f{}", "0".repeat(62))).unwrap();
        let b = CacheKey::from_hex(&format!("a0{}", "0".repeat(62))).unwrap();
        assert!(a < b);
        assert!(a.to_hex() < b.to_hex());
    }

    #[test]
    fn path_is_shard_then_hex_json() {
        let key = CacheKey::from_parts(
            "https://example.com/x?q=1",
            RenderingMethod::Http,
            Variant::default(),
        );
        let hex = key.to_hex();
        let path = key.entry_path(Path::new("/c"));
        assert_eq!(
            path,
            Path::new("/c").join(&hex[..2]).join(format!("{hex}.json"))
        );
        assert_eq!(key.shard(), &hex[..2]);
    }
}
