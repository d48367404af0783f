//! The on-disk entry, format version 2 (FR-WF-16c, FR-WF-CCH-VER-01,
//! FR-WF-CCH-ENTRY-OPT-01, FR-WF-CCH-CONTENT-01).
//!
//! Pure: bytes in, bytes out. The entry stores the extracted document, never the
//! chunked response, so every hit is re-chunked with the current request's budget.
//!
//! Extension: an entry extracted in article mode carries `"extraction":"article"`
//! after `rendering_method`, and a browser document rendered with
//! `robots_for_frames` `"robots_for_frames":true` after that; both are
//! part of its key ([`Variant`]), and a document fetched with extension formats
//! `"formats":["pdf",...]` after that. SRD entries omit the fields, so
//! they are byte for byte the SRD's shape.
//!
//! An HTTP result that stood in for a browser render because the browser was
//! unavailable (FR-WF-12d, SRD-READINGS 19) carries `"browser_unavailable":true`
//! next, not part of the key: the reader can tell it apart from a page HTTP
//! rendered by plan, and not serve it once a browser is available. Every other
//! entry omits the field.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::key::{CacheKey, Variant};
use crate::canonical_url::CanonicalUrl;
use crate::vocabulary::ExtractionMode;
use crate::vocabulary::Timestamp;
use crate::vocabulary::{ExtractedDocument, RenderingMethod};
use crate::vocabulary::{Format, Formats};

/// The one entry format this build reads and writes. Older (v1 stored chunks) and
/// newer versions are misses, never migrated (FR-WF-CCH-VER-01).
pub(crate) const VERSION: u64 = 2;

/// A decoded, validated v2 entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) canonical_url: String,
    pub(crate) method: RenderingMethod,
    /// Extension: how the document was extracted and rendered
    /// ([`Variant::default`] for every SRD entry).
    pub(crate) variant: Variant,
    /// An HTTP result standing in for an unavailable browser.
    pub(crate) browser_unavailable: bool,
    pub(crate) fetched_at: Timestamp,
    pub(crate) expires_at: Timestamp,
    pub(crate) last_accessed_at: Timestamp,
    pub(crate) extracted: ExtractedDocument,
}

/// The JSON written, fields in the SRD's order (FR-WF-16c); compact on disk.
#[derive(Serialize)]
struct WireOut<'a> {
    version: u64,
    canonical_url: &'a str,
    rendering_method: RenderingMethod,
    #[serde(skip_serializing_if = "is_srd")]
    extraction: ExtractionMode,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    robots_for_frames: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    formats: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    browser_unavailable: bool,
    fetched_at: String,
    expires_at: String,
    last_accessed_at: String,
    extracted: &'a ExtractedDocument,
}

fn is_srd(mode: &ExtractionMode) -> bool {
    *mode == ExtractionMode::Srd
}

/// The JSON read. Unknown top-level fields are tolerated (a later v2 writer may
/// add some); `extracted` is strict (`ExtractedDocument` denies unknown fields).
#[derive(Deserialize)]
struct WireIn {
    version: u64,
    canonical_url: String,
    rendering_method: RenderingMethod,
    #[serde(default)]
    extraction: ExtractionMode,
    #[serde(default)]
    robots_for_frames: bool,
    #[serde(default)]
    formats: Vec<String>,
    #[serde(default)]
    browser_unavailable: bool,
    fetched_at: String,
    expires_at: String,
    last_accessed_at: String,
    extracted: ExtractedDocument,
}

/// Only the version: read when a full parse fails, to say why in the log.
#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

/// Why stored bytes are not a usable entry. Every case is a miss and the file is
/// deleted (FR-WF-CCH-READ-01, READ-02); the variant only feeds the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// A `version` other than [`VERSION`].
    #[error("unsupported entry version {0}")]
    UnsupportedVersion(u64),
    /// Not JSON, truncated, or fields missing or mistyped.
    #[error("malformed entry: {0}")]
    Malformed(String),
    /// A timestamp not in the strict FR-WF-CCH-TS-01 form.
    #[error("malformed timestamp in field {0}")]
    Timestamp(&'static str),
    /// The URL, method and variant inside do not hash to the file's name: never
    /// serve it.
    #[error("entry does not belong to its key")]
    WrongKey,
}

/// Why an entry cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EncodeError {
    /// serde_json refused (not expected for these types).
    #[error("serialization failed: {0}")]
    Json(String),
}

/// What a new entry is made of: one fetch's result, whichever store keeps it
/// (the disk cache, or the fleet's Redis). The one argument of a write.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Fresh<'a> {
    /// The final URL (FR-WF-CCH-KEY-01).
    pub url: &'a CanonicalUrl,
    /// The method that produced the document (CCH-KEY-03).
    pub method: RenderingMethod,
    /// Extension: the variant (extraction mode, `robots_for_frames`, formats),
    /// part of the key; [`Variant::default`] is the SRD's key.
    pub variant: Variant,
    /// An HTTP result that stood in for a browser render because the browser was
    /// unavailable (FR-WF-12d, SRD-READINGS 19): filed under the HTTP key like any
    /// HTTP result, and marked, so that a reader with a browser available can pass
    /// it over ([`CachedDocument::browser_unavailable`](super::CachedDocument::browser_unavailable)).
    pub stand_in: bool,
    /// The document.
    pub document: &'a ExtractedDocument,
    /// When the fetch completed (FR-WF-CCH-TS-02).
    pub fetched_at: OffsetDateTime,
    /// The time of the write: `last_accessed_at` (FR-WF-CCH-LRU-01).
    pub now: OffsetDateTime,
}

impl<'a> Fresh<'a> {
    /// The result of an ordinary fetch, under the SRD's key ([`Variant::default`],
    /// not a stand-in); set `variant` or `stand_in` on the value for the rest.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(
        url: &'a CanonicalUrl,
        method: RenderingMethod,
        document: &'a ExtractedDocument,
        fetched_at: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Fresh<'a> {
        Fresh {
            url,
            method,
            variant: Variant::default(),
            stand_in: false,
            document,
            fetched_at,
            now,
        }
    }
}

impl Entry {
    /// A new entry: `expires_at = fetched_at + ttl_days` (FR-WF-16d),
    /// `last_accessed_at = now`, stamps at second precision (CCH-TS-01). A
    /// stand-in is filed under the HTTP key like any HTTP result.
    pub(crate) fn fresh(fresh: Fresh<'_>, ttl_days: u32) -> Entry {
        let fetched_at = Timestamp::from_datetime(fresh.fetched_at);
        Entry {
            canonical_url: fresh.url.as_str().to_owned(),
            method: if fresh.stand_in {
                RenderingMethod::Http
            } else {
                fresh.method
            },
            variant: fresh.variant,
            browser_unavailable: fresh.stand_in,
            fetched_at,
            expires_at: fetched_at.plus_days(ttl_days),
            last_accessed_at: Timestamp::from_datetime(fresh.now),
            extracted: fresh.document.clone(),
        }
    }

    /// The key this entry is filed under.
    pub(crate) fn key(&self) -> CacheKey {
        CacheKey::from_parts(&self.canonical_url, self.method, self.variant)
    }

    /// Compact JSON, `title`/`language` omitted when absent (FR-WF-CCH-ENTRY-OPT-01).
    pub(crate) fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let wire = WireOut {
            version: VERSION,
            canonical_url: &self.canonical_url,
            rendering_method: self.method,
            extraction: self.variant.extraction,
            robots_for_frames: self.variant.robots_for_frames,
            formats: self.variant.formats.iter().map(Format::as_str).collect(),
            browser_unavailable: self.browser_unavailable,
            fetched_at: self.fetched_at.to_string(),
            expires_at: self.expires_at.to_string(),
            last_accessed_at: self.last_accessed_at.to_string(),
            extracted: &self.extracted,
        };
        serde_json::to_vec(&wire).map_err(|e| EncodeError::Json(e.to_string()))
    }

    /// Parses and validates the bytes of the file named by `key`.
    pub(crate) fn decode(bytes: &[u8], key: &CacheKey) -> Result<Entry, DecodeError> {
        let wire: WireIn = match serde_json::from_slice(bytes) {
            Ok(wire) => wire,
            Err(error) => {
                return Err(match serde_json::from_slice::<VersionOnly>(bytes) {
                    Ok(v) if v.version != VERSION => DecodeError::UnsupportedVersion(v.version),
                    _ => DecodeError::Malformed(error.to_string()),
                });
            }
        };
        if wire.version != VERSION {
            return Err(DecodeError::UnsupportedVersion(wire.version));
        }
        let stamp =
            |text: &str, field| Timestamp::parse(text).map_err(|_| DecodeError::Timestamp(field));
        let formats = wire
            .formats
            .iter()
            .map(|name| name.parse::<Format>())
            .collect::<Result<Formats, _>>()
            .map_err(|e| DecodeError::Malformed(e.to_string()))?;
        let entry = Entry {
            fetched_at: stamp(&wire.fetched_at, "fetched_at")?,
            expires_at: stamp(&wire.expires_at, "expires_at")?,
            last_accessed_at: stamp(&wire.last_accessed_at, "last_accessed_at")?,
            canonical_url: wire.canonical_url,
            method: wire.rendering_method,
            variant: Variant {
                extraction: wire.extraction,
                robots_for_frames: wire.robots_for_frames,
                formats,
            },
            browser_unavailable: wire.browser_unavailable,
            extracted: wire.extracted,
        };
        if entry.key() != *key {
            return Err(DecodeError::WrongKey);
        }
        Ok(entry)
    }

    /// `expires_at < now` is a miss (FR-WF-16d); equal is still fresh.
    pub(crate) fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at < now
    }

    /// Whether the entry claims to have been fetched after `now`, by more than
    /// [`CLOCK_SKEW_SECONDS`]: a miss. No fetch wrote it on a clock that
    /// agrees with this one, and serving it would report a `fetched_at` still
    /// to come (FR-WF-17a) and keep the entry past its TTL.
    pub(crate) fn is_from_the_future(&self, now: Timestamp) -> bool {
        self.fetched_at.unix_seconds() > now.unix_seconds().saturating_add(CLOCK_SKEW_SECONDS)
    }
}

/// How far ahead of this clock an entry's `fetched_at` may be and still be
/// served. Stamps have second precision, a fleet's instances (or one host's
/// clock after an NTP step) disagree by far less than this, and a refused
/// entry only costs a fetch; much more would let a skewed or forged stamp
/// through.
pub(crate) const CLOCK_SKEW_SECONDS: i64 = 5;

/// The key that holds `last_accessed_at`, with the quotes that make it structural:
/// inside a JSON string every `"` is escaped, so `at":"` cannot occur there.
const LAST_ACCESSED_KEY: &[u8] = br#""last_accessed_at":""#;

/// Rewrites the `last_accessed_at` value of encoded entry `bytes` in place from
/// `old` to `new`, the hit-path shortcut of FR-WF-CCH-LRU-01: stamps are fixed
/// width, so nothing else moves and the 100 KiB document need not be escaped
/// again. Returns `false`, leaving `bytes` untouched, unless the key occurs exactly
/// once and holds exactly `old`; the caller then re-encodes the entry.
pub(crate) fn restamp(bytes: &mut [u8], old: Timestamp, new: Timestamp) -> bool {
    let (old, new) = (old.to_string(), new.to_string());
    let (at, second) = {
        let mut hits = find_all(bytes, LAST_ACCESSED_KEY);
        (hits.next(), hits.next())
    };
    let (Some(at), None) = (at, second) else {
        return false;
    };
    let start = at + LAST_ACCESSED_KEY.len();
    let end = start + old.len();
    let matches = bytes.get(start..end) == Some(old.as_bytes()) && bytes.get(end) == Some(&b'"');
    match bytes.get_mut(start..end) {
        Some(value) if matches && new.len() == old.len() => {
            value.copy_from_slice(new.as_bytes());
            true
        }
        _ => false,
    }
}

/// Start offsets of `needle` in `haystack`. Linear: a first-byte scan, then a
/// short comparison at each candidate.
fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let first = needle.first().copied();
    haystack
        .iter()
        .enumerate()
        .filter(move |(_, b)| Some(**b) == first)
        .map(|(i, _)| i)
        .filter(move |&i| haystack.get(i..i + needle.len()) == Some(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(title: Option<&str>) -> Entry {
        Entry {
            canonical_url: "https://example.com/page".into(),
            method: RenderingMethod::Http,
            variant: Variant::default(),
            browser_unavailable: false,
            fetched_at: Timestamp::parse("2026-01-10T12:00:00Z").unwrap(),
            expires_at: Timestamp::parse("2026-01-17T12:00:00Z").unwrap(),
            last_accessed_at: Timestamp::parse("2026-01-10T14:30:00Z").unwrap(),
            extracted: ExtractedDocument {
                markdown: "# Page Title\n\nContent here...".into(),
                title: title.map(str::to_owned),
                language: None,
                page_type: None,
                page_starts: Vec::new(),
            },
        }
    }

    fn key_of(entry: &Entry) -> CacheKey {
        CacheKey::from_parts(&entry.canonical_url, entry.method, entry.variant)
    }

    #[test]
    fn encodes_the_srd_shape_in_order_with_optional_fields_omitted() {
        let entry = sample(Some("Page Title"));
        let text = String::from_utf8(entry.encode().unwrap()).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"version":2,"canonical_url":"https://example.com/page","#,
                r#""rendering_method":"http","fetched_at":"2026-01-10T12:00:00Z","#,
                r#""expires_at":"2026-01-17T12:00:00Z","last_accessed_at":"2026-01-10T14:30:00Z","#,
                r##""extracted":{"markdown":"# Page Title\n\nContent here...","title":"Page Title"}}"##
            )
        );
        let bare = String::from_utf8(sample(None).encode().unwrap()).unwrap();
        assert!(!bare.contains("title") && !bare.contains("language") && !bare.contains("null"));
    }

    #[test]
    fn an_article_entry_names_its_mode_and_belongs_to_the_article_key_only() {
        let mut entry = sample(None);
        entry.variant = ExtractionMode::Article.into();
        let text = String::from_utf8(entry.encode().unwrap()).unwrap();
        assert!(
            text.contains(r#""rendering_method":"http","extraction":"article","fetched_at""#),
            "{text}"
        );
        assert_eq!(
            Entry::decode(text.as_bytes(), &key_of(&entry)),
            Ok(entry.clone())
        );
        let srd_key = CacheKey::from_parts(&entry.canonical_url, entry.method, Variant::default());
        assert_eq!(
            Entry::decode(text.as_bytes(), &srd_key),
            Err(DecodeError::WrongKey)
        );
        // An SRD entry under the article key is refused too.
        let srd = sample(None).encode().unwrap();
        assert_eq!(
            Entry::decode(&srd, &key_of(&entry)),
            Err(DecodeError::WrongKey)
        );
    }

    #[test]
    fn a_formats_entry_names_them_and_belongs_to_its_key_only() {
        let mut entry = sample(None);
        entry.variant.formats = Formats::ALL;
        let text = String::from_utf8(entry.encode().unwrap()).unwrap();
        assert!(
            text.contains(r#""rendering_method":"http","formats":["pdf","markdown","json","feed"],"fetched_at""#),
            "{text}"
        );
        assert_eq!(
            Entry::decode(text.as_bytes(), &key_of(&entry)),
            Ok(entry.clone())
        );
        let srd_key = CacheKey::from_parts(&entry.canonical_url, entry.method, Variant::default());
        assert_eq!(
            Entry::decode(text.as_bytes(), &srd_key),
            Err(DecodeError::WrongKey)
        );
        let srd = sample(None).encode().unwrap();
        assert!(!String::from_utf8(srd.clone()).unwrap().contains("formats"));
        assert_eq!(
            Entry::decode(&srd, &key_of(&entry)),
            Err(DecodeError::WrongKey)
        );
        let unknown = text.replace("\"feed\"]", "\"docx\"]");
        assert!(matches!(
            Entry::decode(unknown.as_bytes(), &key_of(&entry)),
            Err(DecodeError::Malformed(_))
        ));
    }

    #[test]
    fn a_robots_for_frames_entry_says_so_and_belongs_to_its_key_only() {
        let mut entry = sample(None);
        entry.method = RenderingMethod::Browser;
        entry.variant = Variant {
            extraction: ExtractionMode::Article,
            robots_for_frames: true,
            formats: Formats::NONE,
        };
        let text = String::from_utf8(entry.encode().unwrap()).unwrap();
        assert!(
            text.contains(
                r#""rendering_method":"browser","extraction":"article","robots_for_frames":true,"fetched_at""#
            ),
            "{text}"
        );
        assert_eq!(
            Entry::decode(text.as_bytes(), &key_of(&entry)),
            Ok(entry.clone())
        );
        // Neither the entry without the check nor the one with it is served
        // under the other's key.
        let mut unchecked = entry.clone();
        unchecked.variant.robots_for_frames = false;
        assert_eq!(
            Entry::decode(text.as_bytes(), &key_of(&unchecked)),
            Err(DecodeError::WrongKey)
        );
        assert_eq!(
            Entry::decode(&unchecked.encode().unwrap(), &key_of(&entry)),
            Err(DecodeError::WrongKey)
        );
    }

    #[test]
    fn round_trips() {
        let entry = sample(Some("T"));
        let bytes = entry.encode().unwrap();
        assert_eq!(Entry::decode(&bytes, &key_of(&entry)), Ok(entry));
    }

    #[test]
    fn rejects_other_versions_malformed_bytes_and_foreign_keys() {
        let entry = sample(None);
        let key = key_of(&entry);
        let good = String::from_utf8(entry.encode().unwrap()).unwrap();
        let cases: Vec<(String, DecodeError)> = vec![
            (
                good.replace(r#""version":2"#, r#""version":1"#),
                DecodeError::UnsupportedVersion(1),
            ),
            (
                good.replace(r#""version":2"#, r#""version":3"#),
                DecodeError::UnsupportedVersion(3),
            ),
            (
                r#"{"version":3,"something":"else"}"#.into(),
                DecodeError::UnsupportedVersion(3),
            ),
            (
                r#"{"version":1,"chunks":[]}"#.into(),
                DecodeError::UnsupportedVersion(1),
            ),
            (
                good.replace("2026-01-17T12:00:00Z", "2026-01-17T12:00:00.5Z"),
                DecodeError::Timestamp("expires_at"),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(Entry::decode(text.as_bytes(), &key), Err(want), "{text}");
        }
        for text in [
            "",
            "{",
            "null",
            &good[..good.len() - 1],
            r#"{"version":2}"#,
            &good.replace(r#""version":2"#, r#""version":"2""#),
            &good.replace(r#""markdown""#, r#""markup""#),
        ] {
            assert!(
                matches!(
                    Entry::decode(text.as_bytes(), &key),
                    Err(DecodeError::Malformed(_))
                ),
                "{text}"
            );
        }
        let other = CacheKey::from_parts(
            &entry.canonical_url,
            RenderingMethod::Browser,
            Variant::default(),
        );
        assert_eq!(
            Entry::decode(good.as_bytes(), &other),
            Err(DecodeError::WrongKey)
        );
    }

    #[test]
    fn expiry_is_strictly_after_expires_at() {
        let entry = sample(None);
        assert!(!entry.is_expired(entry.expires_at));
        assert!(entry.is_expired(
            Timestamp::from_unix_seconds(entry.expires_at.unix_seconds() + 1).unwrap()
        ));
    }

    #[test]
    fn restamp_changes_only_last_accessed_at() {
        let mut entry = sample(Some("T"));
        entry.extracted.markdown =
            r#"quote "last_accessed_at":"2026-01-10T14:30:00Z" inside"#.into();
        let mut bytes = entry.encode().unwrap();
        let new = Timestamp::parse("2026-02-01T00:00:00Z").unwrap();
        assert!(restamp(&mut bytes, entry.last_accessed_at, new));
        entry.last_accessed_at = new;
        assert_eq!(bytes, entry.encode().unwrap());
        assert_eq!(Entry::decode(&bytes, &key_of(&entry)), Ok(entry));
    }

    #[test]
    fn restamp_refuses_ambiguous_or_unexpected_bytes() {
        let entry = sample(None);
        let old = entry.last_accessed_at;
        let new = Timestamp::parse("2026-02-01T00:00:00Z").unwrap();
        let good = String::from_utf8(entry.encode().unwrap()).unwrap();
        let nested = good.replacen(
            r#"{"version":2,"#,
            r#"{"x":{"last_accessed_at":"2026-01-10T14:30:00Z"},"version":2,"#,
            1,
        );
        let other_value = good.replace("2026-01-10T14:30:00Z", "2026-01-10T14:30:01Z");
        for text in [nested, other_value, String::new(), "{}".into()] {
            let mut bytes = text.clone().into_bytes();
            assert!(!restamp(&mut bytes, old, new), "{text}");
            assert_eq!(bytes, text.into_bytes(), "untouched");
        }
    }

    #[test]
    fn a_stand_in_is_marked_after_the_key_fields_and_round_trips() {
        let mut entry = sample(None);
        entry.browser_unavailable = true;
        let bytes = entry.encode().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(r#""rendering_method":"http","browser_unavailable":true,"fetched_at""#),
            "{text}"
        );
        assert_eq!(Entry::decode(&bytes, &key_of(&entry)).unwrap(), entry);
        // Unmarked entries keep the SRD shape and read back unmarked.
        let plain = sample(None).encode().unwrap();
        assert!(!String::from_utf8_lossy(&plain).contains("browser_unavailable"));
        let decoded = Entry::decode(&plain, &key_of(&sample(None))).unwrap();
        assert!(!decoded.browser_unavailable);
    }
}
