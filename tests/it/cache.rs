//! The on-disk cache (SRD 3.6), T-WF-CCH-01..13 and T-WF-DET-01, each in its own
//! temp dir (T-WF-INFRA-03). Pipeline-level halves (no_cache skipping the read,
//! re-chunking a hit, fallback caching) belong to the tool tests; here the cache
//! module's side of each contract is pinned down.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration as StdDuration, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use tempfile::TempDir;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use webfetch::CacheSettings;
use webfetch::CanonicalUrl;
use webfetch::RenderingMethod;
use webfetch::internals::cache::{CacheKey, CacheWriteError, DiskCache, Fresh, Variant};
use webfetch::internals::vocabulary::ExtractedDocument;

use crate::support::Config;
use crate::support::deadline::{WAIT, join_within, wait_child};

const T0: OffsetDateTime = datetime!(2026-01-10 12:00:00 UTC);
const HTTP: RenderingMethod = RenderingMethod::Http;
const BROWSER: RenderingMethod = RenderingMethod::Browser;

/// Cache settings through the real config loader, `cache_dir` set to `dir`.
fn settings(dir: &Path, extra: &str) -> CacheSettings {
    Config::new(&[]).cache(dir).top(extra).settings().cache
}

fn open(dir: &Path, extra: &str) -> DiskCache {
    DiskCache::open(&settings(dir, extra)).expect("cache enabled")
}

fn url(text: &str) -> CanonicalUrl {
    CanonicalUrl::parse(text).expect("valid URL")
}

fn doc(markdown: &str) -> ExtractedDocument {
    ExtractedDocument {
        markdown: markdown.to_owned(),
        title: None,
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    }
}

/// A cache with `extra` settings in a new temp dir, returned with it to keep it alive.
fn temp_cache(extra: &str) -> (TempDir, DiskCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path(), extra);
    (dir, cache)
}

/// A [`temp_cache`] holding "body" for `https://example.com/` (HTTP, at [`T0`]), with
/// that page and its entry's path.
fn one_entry(extra: &str) -> (TempDir, DiskCache, CanonicalUrl, PathBuf) {
    let (dir, cache) = temp_cache(extra);
    let page = url("https://example.com/");
    put_http(&cache, &page, "body", 0);
    let path = cache.entry_path(&page, HTTP);
    (dir, cache, page, path)
}

/// Stores `markdown` for `page` as an HTTP render fetched at [`T0`] and written
/// `seconds` later.
fn put_http(cache: &DiskCache, page: &CanonicalUrl, markdown: &str, seconds: i64) {
    let written = T0 + Duration::seconds(seconds);
    cache
        .put(Fresh::new(page, HTTP, &doc(markdown), T0, written))
        .unwrap();
}

/// The markdown of the hit for (`page`, `method`) at [`T0`]; panics on a miss.
fn hit_markdown(cache: &DiskCache, page: &CanonicalUrl, method: RenderingMethod) -> String {
    cache
        .get(page, method, Variant::default(), T0)
        .unwrap()
        .document
        .markdown
}

/// `https://example.com/a`, `/b` and `/c`.
fn pages_abc() -> [CanonicalUrl; 3] {
    ["a", "b", "c"].map(|name| url(&format!("https://example.com/{name}")))
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file under `dir`, relative, sorted, but for the cache's own bookkeeping
/// (the ledger and LRU snapshot, `.webfetch-*` at the top).
fn files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(at).unwrap().flatten() {
            let path = entry.path();
            if at == root
                && entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".webfetch-")
            {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The relative path of the entry file whose key is `hex`.
fn entry_file(hex: &str) -> PathBuf {
    PathBuf::from(&hex[..2]).join(format!("{hex}.json"))
}

/// The bytes of every file under `dir`.
fn total_bytes(dir: &Path) -> u64 {
    files(dir)
        .iter()
        .map(|p| fs::metadata(dir.join(p)).unwrap().len())
        .sum()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Collects what `tracing` logs while `f` runs.
fn logs_of<T>(f: impl FnOnce() -> T) -> (T, String) {
    let buffer = crate::support::LogBuffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let value = tracing::subscriber::with_default(subscriber, f);
    let text = buffer.text();
    (value, text)
}

#[test]
fn t_wf_cch_01_hit_returns_prior_content_with_original_fetched_at() {
    let (_dir, cache) = temp_cache("");
    let page = url("https://example.com/page");
    let document = ExtractedDocument {
        markdown: "# Page Title\n\nContent here...".into(),
        title: Some("Page Title".into()),
        language: Some("en".into()),
        page_type: None,
        page_starts: Vec::new(),
    };
    assert_eq!(
        cache.get(&page, HTTP, Variant::default(), T0),
        None,
        "empty cache misses"
    );
    let fetched_at = T0 + Duration::milliseconds(900);
    cache
        .put(Fresh::new(&page, HTTP, &document, fetched_at, fetched_at))
        .unwrap();

    let hit = cache
        .get(&page, HTTP, Variant::default(), T0 + Duration::hours(5))
        .expect("hit");
    assert_eq!(hit.document, document);
    assert_eq!(hit.fetched_at, T0, "original fetch time, second precision");
    let again = cache
        .get(&page, HTTP, Variant::default(), T0 + Duration::hours(6))
        .expect("hit");
    assert_eq!(again.fetched_at, T0, "a hit never changes fetched_at");
}

#[test]
fn t_wf_cch_02_fresh_write_overwrites_existing_entry() {
    // The module half of FR-WF-17 / CCH-NOCACHE-01: the no_cache fetch's put
    // replaces the entry under the same key. Skipping the read is the tool's part.
    let (dir, cache) = temp_cache("");
    let page = url("https://example.com/news");
    put_http(&cache, &page, "old", 0);
    let later = T0 + Duration::hours(1);
    cache
        .put(Fresh::new(&page, HTTP, &doc("new"), later, later))
        .unwrap();

    let hit = cache
        .get(&page, HTTP, Variant::default(), later)
        .expect("hit");
    assert_eq!(hit.document.markdown, "new");
    assert_eq!(hit.fetched_at, later);
    assert_eq!(files(dir.path()).len(), 1, "one entry, replaced in place");
}

#[test]
fn t_wf_cch_03_expired_entries_are_a_miss() {
    let (_dir, cache, page, path) = one_entry("cache_ttl_days = 2");
    assert_eq!(json(&path)["expires_at"], "2026-01-12T12:00:00Z");

    // expires_at == now is not yet "expires_at < now".
    assert!(
        cache
            .get(&page, HTTP, Variant::default(), T0 + Duration::days(2))
            .is_some()
    );
    let late = T0 + Duration::days(2) + Duration::seconds(1);
    assert_eq!(cache.get(&page, HTTP, Variant::default(), late), None);
    assert_eq!(
        cache.get(&page, HTTP, Variant::default(), late),
        None,
        "stays a miss"
    );
}

#[test]
fn fr_wf_cch_ttl_02_hits_do_not_slide_expiry() {
    let (_dir, cache, page, path) = one_entry("cache_ttl_days = 7");
    for day in 1..=7 {
        assert!(
            cache
                .get(&page, HTTP, Variant::default(), T0 + Duration::days(day))
                .is_some()
        );
    }
    assert_eq!(json(&path)["expires_at"], "2026-01-17T12:00:00Z");
    let just_after = T0 + Duration::days(7) + Duration::seconds(1);
    assert_eq!(cache.get(&page, HTTP, Variant::default(), just_after), None);
}

#[test]
fn t_wf_cch_04_http_and_browser_renders_have_separate_keys() {
    let (dir, cache) = temp_cache("");
    let page = url("https://example.com/app");
    assert_ne!(
        CacheKey::new(&page, HTTP, Variant::default()),
        CacheKey::new(&page, BROWSER, Variant::default())
    );
    assert_ne!(
        cache.entry_path(&page, HTTP),
        cache.entry_path(&page, BROWSER)
    );

    cache
        .put(Fresh::new(&page, HTTP, &doc("static shell"), T0, T0))
        .unwrap();
    assert_eq!(cache.get(&page, BROWSER, Variant::default(), T0), None);
    cache
        .put(Fresh::new(&page, BROWSER, &doc("rendered app"), T0, T0))
        .unwrap();
    assert_eq!(hit_markdown(&cache, &page, HTTP), "static shell");
    assert_eq!(hit_markdown(&cache, &page, BROWSER), "rendered app");
    assert_eq!(files(dir.path()).len(), 2);
    assert_eq!(
        json(&cache.entry_path(&page, BROWSER))["rendering_method"],
        "browser"
    );
}

#[test]
fn t_wf_cch_05_cache_path_uses_hash_only() {
    let (dir, cache) = temp_cache("");
    let page = url("https://münchen.example/secret/../etc/passwd?token=hunter2&next=/x");
    put_http(&cache, &page, "x", 0);

    let hex = sha256_hex(&format!("{}\nhttp", page.as_str()));
    let listed = files(dir.path());
    assert_eq!(listed, vec![entry_file(&hex)]);
    let shown = listed[0].to_string_lossy().into_owned();
    for fragment in [
        "xn--", "mnchen", "example", "etc", "passwd", "token", "hunter2", "next",
    ] {
        assert!(!shown.contains(fragment), "{fragment} leaked into {shown}");
    }
    assert!(
        shown
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b'/' || b == b'.' || b"json".contains(&b))
    );
}

#[test]
fn t_wf_cch_06_lru_eviction_when_limit_reached() {
    let (dir, cache) = temp_cache("max_cache_entries = 2");
    let [a, b, c] = pages_abc();
    put_http(&cache, &a, "a", 0);
    put_http(&cache, &b, "b", 1);
    // A hit makes `a` the most recently used.
    assert!(
        cache
            .get(&a, HTTP, Variant::default(), T0 + Duration::seconds(2))
            .is_some()
    );
    put_http(&cache, &c, "c", 3);

    let now = T0 + Duration::seconds(4);
    assert_eq!(
        cache.get(&b, HTTP, Variant::default(), now),
        None,
        "least recently used is evicted"
    );
    assert!(cache.get(&a, HTTP, Variant::default(), now).is_some());
    assert!(cache.get(&c, HTTP, Variant::default(), now).is_some());
    assert_eq!(files(dir.path()).len(), 2);
}

#[test]
fn t_wf_cch_06_lru_order_survives_a_new_process() {
    // The ledger and the LRU snapshot are the directory's (mtime mirrors
    // last_accessed_at), so LRU order carries over between processes.
    let dir = tempfile::tempdir().unwrap();
    let [a, b, c] = pages_abc();
    {
        let first = open(dir.path(), "max_cache_entries = 2");
        put_http(&first, &a, "a", 0);
        put_http(&first, &b, "b", 1);
        assert!(
            first
                .get(&a, HTTP, Variant::default(), T0 + Duration::seconds(2))
                .is_some()
        );
    }
    let second = open(dir.path(), "max_cache_entries = 2");
    second.warm_index();
    put_http(&second, &c, "c", 3);
    let now = T0 + Duration::seconds(4);
    assert_eq!(second.get(&b, HTTP, Variant::default(), now), None);
    assert!(second.get(&a, HTTP, Variant::default(), now).is_some());
}

#[test]
fn fr_wf_cch_lru_01_ties_are_broken_by_key() {
    let (_dir, cache) = temp_cache("max_cache_entries = 2");
    let [a, b, c] = pages_abc();
    put_http(&cache, &a, "a", 0);
    put_http(&cache, &b, "b", 0);
    put_http(&cache, &c, "c", 1);
    let (key_a, key_b) = (
        CacheKey::new(&a, HTTP, Variant::default()),
        CacheKey::new(&b, HTTP, Variant::default()),
    );
    let (evicted, kept) = if key_a.to_hex() < key_b.to_hex() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    assert!(cache.get(evicted, HTTP, Variant::default(), T0).is_none());
    assert!(cache.get(kept, HTTP, Variant::default(), T0).is_some());
}

#[test]
fn fr_wf_cch_evict_01_byte_budget_evicts_until_both_limits_hold() {
    // The smallest byte budget the config allows: 1 MiB.
    let (dir, cache) = temp_cache("max_cache_entries = 100\nmax_cache_bytes = 1048576");
    let big = "x".repeat(400 * 1024);
    let pages: Vec<_> = (0..3)
        .map(|i| url(&format!("https://example.com/{i}")))
        .collect();
    for (i, page) in pages.iter().enumerate() {
        let at = T0 + Duration::seconds(i64::try_from(i).unwrap());
        cache
            .put(Fresh::new(page, HTTP, &doc(&big), at, at))
            .unwrap();
    }
    // Three 400 KiB entries exceed 1 MiB: the oldest went, by bytes not count.
    assert!(cache.get(&pages[0], HTTP, Variant::default(), T0).is_none());
    assert!(cache.get(&pages[1], HTTP, Variant::default(), T0).is_some());
    assert!(cache.get(&pages[2], HTTP, Variant::default(), T0).is_some());
    // On-disk sizes are what counts (FR-WF-CCH-SIZE-02).
    let total = total_bytes(dir.path());
    assert!(total <= 1_048_576, "{total}");
}

#[test]
fn t_wf_cch_07_entry_stores_the_unchunked_document() {
    // FR-WF-CCH-CONTENT-01, module half: the entry is the whole extracted
    // document, with nothing chunk-shaped in it, so every hit can be re-chunked
    // with the current max_chunk_tokens. The re-chunking itself is the tool's test.
    let (_dir, cache) = temp_cache("");
    let page = url("https://example.com/long");
    let markdown: String = (0..200)
        .map(|i| format!("## Section {i}\n\nParagraph {i} of the document.\n\n"))
        .collect();
    let document = ExtractedDocument {
        markdown: markdown.clone(),
        title: Some("Long".into()),
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    };
    cache
        .put(Fresh::new(&page, HTTP, &document, T0, T0))
        .unwrap();
    let stored = json(&cache.entry_path(&page, HTTP));
    assert_eq!(stored["extracted"]["markdown"], markdown.as_str());
    let keys: Vec<_> = stored.as_object().unwrap().keys().cloned().collect();
    assert!(!keys.iter().any(|k| k.contains("chunk")), "{keys:?}");
    assert_eq!(
        cache
            .get(&page, HTTP, Variant::default(), T0)
            .unwrap()
            .document,
        document
    );
}

#[test]
fn t_wf_cch_08_hit_updates_last_accessed_at() {
    let (dir, cache, page, path) = one_entry("");
    let before = json(&path);
    assert_eq!(before["last_accessed_at"], "2026-01-10T12:00:00Z");

    let t1 = datetime!(2026-01-11 08:30:00.250 UTC);
    assert!(cache.get(&page, HTTP, Variant::default(), t1).is_some());
    let after = json(&path);
    assert_eq!(after["last_accessed_at"], "2026-01-11T08:30:00Z");
    for field in [
        "version",
        "canonical_url",
        "rendering_method",
        "fetched_at",
        "expires_at",
        "extracted",
    ] {
        assert_eq!(after[field], before[field], "{field} unchanged");
    }
    // The file's mtime mirrors last_accessed_at (what index scans read).
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    assert_eq!(mtime, UNIX_EPOCH + StdDuration::from_secs(1_768_120_200));
    assert!(
        files(dir.path())
            .iter()
            .all(|p| !p.to_string_lossy().contains(".tmp."))
    );
}

#[test]
fn t_wf_cch_09_version_mismatch_is_a_miss_and_deleted() {
    let (_dir, cache, page, path) = one_entry("");
    let current = fs::read_to_string(&path).unwrap();
    let v1_chunks = format!(
        r#"{{"version":1,"canonical_url":"{}","rendering_method":"http","chunks":[{{"text":"old"}}]}}"#,
        page.as_str()
    );
    for stale in [
        current.replace(r#""version":2"#, r#""version":1"#),
        current.replace(r#""version":2"#, r#""version":3"#),
        v1_chunks,
        r#"{"version":99}"#.to_owned(),
    ] {
        fs::write(&path, &stale).unwrap();
        let (hit, logs) = logs_of(|| cache.get(&page, HTTP, Variant::default(), T0));
        assert_eq!(hit, None, "{stale}");
        assert!(!path.exists(), "unsupported version is deleted: {stale}");
        assert!(logs.contains("cache_read_failed"), "{logs}");
        assert!(logs.contains("version"), "{logs}");
    }
    // The re-fetch's write then serves again.
    put_http(&cache, &page, "fresh", 0);
    assert_eq!(hit_markdown(&cache, &page, HTTP), "fresh");
}

#[test]
fn t_wf_cch_10_fallback_caches_under_browser_method_and_final_url() {
    // FR-WF-CCH-KEY-03, module half: the tool puts the browser result under
    // (browser final_url, browser); nothing is filed under http. The pipeline test
    // (with the browser or a stub renderer) asserts the tool makes exactly that put.
    let (dir, cache) = temp_cache("");
    let requested = url("https://example.com/spa");
    let browser_final = url("https://example.com/spa/home");
    cache
        .put(Fresh::new(
            &browser_final,
            BROWSER,
            &doc("rendered"),
            T0,
            T0,
        ))
        .unwrap();
    assert_eq!(cache.get(&requested, HTTP, Variant::default(), T0), None);
    assert_eq!(
        cache.get(&browser_final, HTTP, Variant::default(), T0),
        None
    );
    assert_eq!(hit_markdown(&cache, &browser_final, BROWSER), "rendered");
    let hex = CacheKey::new(&browser_final, BROWSER, Variant::default()).to_hex();
    assert_eq!(hex, sha256_hex("https://example.com/spa/home\nbrowser"));
    assert_eq!(files(dir.path()), vec![entry_file(&hex)]);
}

#[test]
fn t_wf_cch_11_oversized_entry_skips_write() {
    let (dir, cache) = temp_cache("max_cache_bytes = 1048576");
    let small = url("https://example.com/small");
    let page = url("https://example.com/huge");
    put_http(&cache, &small, "small", 0);
    put_http(&cache, &page, "old", 0);

    let huge = doc(&"x".repeat(1_048_576));
    let error = cache
        .put(Fresh::new(&page, HTTP, &huge, T0, T0))
        .unwrap_err();
    assert!(
        matches!(error, CacheWriteError::EntryTooLarge { size, max_bytes: 1_048_576 } if size > 1_048_576),
        "{error:?}"
    );
    // The caller logs "cache_write_failed: {error}" and adds the note.
    assert_eq!(
        format!("cache_write_failed: {error}"),
        "cache_write_failed: entry exceeds max_cache_bytes"
    );
    // Nothing of the huge entry is on disk; the superseded entry is gone, others stay.
    assert_eq!(cache.get(&page, HTTP, Variant::default(), T0), None);
    assert!(cache.get(&small, HTTP, Variant::default(), T0).is_some());
    assert_eq!(files(dir.path()).len(), 1);
}

#[test]
fn t_wf_cch_12_read_failure_is_a_miss_and_deleted() {
    let (_dir, cache) = temp_cache("");
    let page = url("https://example.com/");
    let other = url("https://example.com/other");
    put_http(&cache, &other, "other", 0);
    let foreign = fs::read(cache.entry_path(&other, HTTP)).unwrap();
    let path = cache.entry_path(&page, HTTP);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"{".to_vec(),
        vec![0xff, 0xfe, 0x00, 0x01],
        b"null".to_vec(),
        br#"{"version":2}"#.to_vec(),
        // A valid entry for another URL filed under this key is never served.
        foreign,
    ];
    for bytes in garbage {
        fs::write(&path, &bytes).unwrap();
        let (hit, logs) = logs_of(|| cache.get(&page, HTTP, Variant::default(), T0));
        assert_eq!(hit, None);
        assert!(!path.exists(), "unreadable entry deleted");
        assert!(logs.contains("cache_read_failed"), "{logs}");
    }
    // A directory where the entry should be is a miss too, never an error.
    fs::create_dir_all(&path).unwrap();
    assert_eq!(cache.get(&page, HTTP, Variant::default(), T0), None);
    fs::remove_dir(&path).unwrap();
    // Deleted entries leave the size accounting: the write that follows works.
    put_http(&cache, &page, "fresh", 0);
    assert!(cache.get(&page, HTTP, Variant::default(), T0).is_some());
}

#[test]
fn t_wf_cch_13_dir_creation_failure_disables_caching() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    fs::write(&blocker, "a file, not a directory").unwrap();
    let unusable = settings(&blocker.join("cache"), "");
    let (opened, logs) = logs_of(|| DiskCache::open(&unusable));
    assert!(opened.is_none());
    assert!(
        logs.contains("WARN") && logs.contains("caching is disabled"),
        "{logs}"
    );
}

#[test]
fn fr_wf_cch_enable_01_disabled_by_config() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[tools.webfetch]\ncache_dir = ''\n";
    let empty = webfetch::load_str(text, webfetch::LoadOptions::default())
        .unwrap()
        .settings
        .cache;
    assert!(DiskCache::open(&empty).is_none());
    assert!(DiskCache::open(&settings(dir.path(), "max_cache_entries = 0")).is_none());
    assert!(
        files(dir.path()).is_empty(),
        "a disabled cache touches nothing"
    );
}

#[test]
fn fr_wf_cch_enable_02_creates_missing_dirs_with_parents() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a").join("b").join("cache");
    let cache = open(&nested, "");
    assert!(nested.is_dir());
    assert_eq!(cache.dir(), nested);
    // Cleared by hand while running (FR-WF-17b): the next write recreates it.
    fs::remove_dir_all(&nested).unwrap();
    let page = url("https://example.com/");
    put_http(&cache, &page, "x", 0);
    assert!(cache.get(&page, HTTP, Variant::default(), T0).is_some());
}

#[test]
fn t_wf_det_01_same_url_same_cache_key() {
    let spellings = [
        "https://example.com/a/b",
        "HTTPS://EXAMPLE.COM:443/a/./c/../b#section",
        "https://example.com/a/b#other",
    ];
    let keys: Vec<_> = spellings
        .iter()
        .map(|s| CacheKey::new(&url(s), HTTP, Variant::default()))
        .collect();
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    assert_eq!(
        keys[0],
        CacheKey::new(&url(spellings[0]), HTTP, Variant::default()),
        "stable across calls"
    );
    assert_eq!(
        keys[0].to_hex(),
        sha256_hex("https://example.com/a/b\nhttp")
    );
    // Different query order is a different resource (FR-WF-NORM-05).
    assert_ne!(
        CacheKey::new(
            &url("https://example.com/?a=1&b=2"),
            HTTP,
            Variant::default()
        ),
        CacheKey::new(
            &url("https://example.com/?b=2&a=1"),
            HTTP,
            Variant::default()
        )
    );
}

#[test]
fn fr_wf_cch_key_02_lowercase_hex_of_64_chars() {
    let hex = CacheKey::new(&url("https://example.com/"), BROWSER, Variant::default()).to_hex();
    assert_eq!(hex.len(), 64);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    assert_eq!(CacheKey::from_hex(&hex).map(|k| k.to_hex()), Some(hex));
}

#[test]
fn fr_wf_16c_entry_format_v2_with_optional_fields_omitted() {
    let (_dir, cache) = temp_cache("cache_ttl_days = 7");
    let page = url("https://example.com/page");
    let at = datetime!(2026-01-10 12:00:00.999 UTC);
    cache
        .put(Fresh::new(
            &page,
            HTTP,
            &doc("# Page"),
            at,
            at + Duration::hours(2),
        ))
        .unwrap();
    let text = fs::read_to_string(cache.entry_path(&page, HTTP)).unwrap();
    assert_eq!(
        text,
        concat!(
            r#"{"version":2,"canonical_url":"https://example.com/page","rendering_method":"http","#,
            r#""fetched_at":"2026-01-10T12:00:00Z","expires_at":"2026-01-17T12:00:00Z","#,
            r##""last_accessed_at":"2026-01-10T14:00:00Z","extracted":{"markdown":"# Page"}}"##
        )
    );
    let titled = ExtractedDocument {
        markdown: "m".into(),
        title: Some("T".into()),
        language: Some("de".into()),
        page_type: None,
        page_starts: Vec::new(),
    };
    cache.put(Fresh::new(&page, HTTP, &titled, at, at)).unwrap();
    let stored = json(&cache.entry_path(&page, HTTP));
    assert_eq!(stored["extracted"]["title"], "T");
    assert_eq!(stored["extracted"]["language"], "de");
}

#[test]
fn fr_wf_16h_write_failure_is_reported_and_leaves_no_temp_file() {
    let (dir, cache) = temp_cache("");
    let page = url("https://example.com/");
    // Occupy the shard directory's name with a file: the write cannot happen.
    let shard = cache
        .entry_path(&page, HTTP)
        .parent()
        .unwrap()
        .to_path_buf();
    fs::write(&shard, "not a directory").unwrap();
    let error = cache
        .put(Fresh::new(&page, HTTP, &doc("x"), T0, T0))
        .unwrap_err();
    assert!(matches!(error, CacheWriteError::Write(_)), "{error:?}");
    assert!(
        error.to_string().starts_with("cannot write entry"),
        "{error}"
    );
    assert_eq!(
        files(dir.path()),
        vec![PathBuf::from(shard.file_name().unwrap())]
    );
    assert_eq!(cache.get(&page, HTTP, Variant::default(), T0), None);
}

// ---- Concurrency (FR-WF-16g): many handles, one directory -------------------------

const STORM_LIMIT: &str = "max_cache_entries = 6\nmax_cache_bytes = 1048576";

/// Reads, writes, overwrites and evicts the same few keys from one handle. Every
/// hit must be a document written for that very key.
fn storm(dir: &Path, seed: u64, rounds: u64) {
    let cache = open(dir, STORM_LIMIT);
    let pages: Vec<_> = (0..5)
        .map(|i| url(&format!("https://example.com/{i}")))
        .collect();
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    for round in 0..rounds {
        let page = &pages[usize::try_from(next() % 5).unwrap()];
        let method = if next() % 2 == 0 { HTTP } else { BROWSER };
        let now = T0 + Duration::seconds(i64::try_from(round).unwrap());
        match next() % 10 {
            0..=4 => {
                let size = usize::try_from(next() % 200_000).unwrap();
                let body = format!("{} {method}\n\n{}", page.as_str(), "y".repeat(size));
                cache
                    .put(Fresh::new(page, method, &doc(&body), now, now))
                    .expect("put");
            }
            5..=8 => {
                if let Some(hit) = cache.get(page, method, Variant::default(), now) {
                    let marker = format!("{} {method}\n\n", page.as_str());
                    assert!(
                        hit.document.markdown.starts_with(&marker),
                        "wrong entry served"
                    );
                }
            }
            _ => cache.refresh_index(),
        }
    }
}

/// Asserts the directory holds only valid v2 entries, each under its own key.
fn assert_only_valid_entries(dir: &Path) -> usize {
    let listed = files(dir);
    for relative in &listed {
        let name = relative.to_string_lossy();
        assert!(!name.contains(".tmp."), "temp file left behind: {name}");
        assert!(name.ends_with(".json"), "foreign file: {name}");
        let entry = json(&dir.join(relative));
        assert_eq!(entry["version"], 2, "{name}");
        let key_input = format!(
            "{}\n{}",
            entry["canonical_url"].as_str().unwrap(),
            entry["rendering_method"].as_str().unwrap()
        );
        let stem = relative.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            sha256_hex(&key_input),
            stem,
            "entry filed under its own key"
        );
        assert!(entry["extracted"]["markdown"].is_string());
    }
    listed.len()
}

/// After the storm, a fresh handle's first write rescans and restores the limits.
fn assert_limits_restored(dir: &Path) {
    let cache = open(dir, STORM_LIMIT);
    let page = url("https://example.com/after");
    cache
        .put(Fresh::new(
            &page,
            HTTP,
            &doc("after"),
            T0,
            T0 + Duration::days(1),
        ))
        .unwrap();
    let count = assert_only_valid_entries(dir);
    assert!(count <= 6, "{count} entries");
    let total = total_bytes(dir);
    assert!(total <= 1_048_576, "{total} bytes");
}

#[test]
fn fr_wf_16g_concurrent_handles_in_threads_leave_only_valid_entries() {
    let dir = tempfile::tempdir().unwrap();
    let workers: Vec<_> = (0..4)
        .map(|seed| {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || storm(&dir, seed, 150))
        })
        .collect();
    for worker in workers {
        join_within(worker, WAIT, "a storming thread to finish");
    }
    assert_only_valid_entries(dir.path());
    assert_limits_restored(dir.path());
}

/// The child-process half of the test below; a no-op unless that test starts it.
#[test]
#[ignore = "run as a child process by fr_wf_16g_concurrent_processes_*"]
fn storm_worker_process() {
    if let (Ok(dir), Ok(seed)) = (
        std::env::var("WEBFETCH_CACHE_STORM_DIR"),
        std::env::var("WEBFETCH_CACHE_STORM_SEED"),
    ) {
        storm(Path::new(&dir), seed.parse().unwrap(), 150);
    }
}

#[test]
fn fr_wf_16g_concurrent_processes_leave_only_valid_entries() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..3)
        .map(|seed| {
            std::process::Command::new(&exe)
                .args([
                    "cache::storm_worker_process",
                    "--exact",
                    "--ignored",
                    "--quiet",
                ])
                .env("WEBFETCH_CACHE_STORM_DIR", dir.path())
                .env("WEBFETCH_CACHE_STORM_SEED", (100 + seed).to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // This process storms too, alongside its children.
    storm(dir.path(), 7, 150);
    for mut child in children {
        let status = wait_child(&mut child, WAIT, "a storming worker process to finish");
        assert!(status.success(), "a worker process failed");
    }
    assert_only_valid_entries(dir.path());
    assert_limits_restored(dir.path());
}
