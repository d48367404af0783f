//! Disk cache latency at 10, 1 000 and 10 000 entries (issue acceptance: a hit of a
//! 100 KiB document under 2 ms; writes must not read every entry).
//!
//! * `hit_100k`: `get` of a 100 KiB document, including the atomic rewrite of
//!   `last_accessed_at`. Re-chunking is the chunker's and is not included here.
//! * `overwrite_100k`: `put` of a 100 KiB document over its existing entry.
//! * `write_evict_1k`: `put` of a new 1 KiB entry into a full cache, which evicts
//!   the least recently used entry on every write.
//! * `cold_write_1k`: a new handle's first `put` of a new 1 KiB entry into the full
//!   cache (what a one-shot CLI process pays): lock and read the
//!   directory's ledger, evict the LRU entry from the snapshot, write. Averaged over
//!   many writes, so it includes the rescan that follows every n evictions.
//! * `rescan_write_1k`: the same write when the ledger is missing (a cache written
//!   by an older version, or a torn ledger): the metadata-only scan of the whole
//!   directory and the new LRU snapshot, then the write. This was the cost of every
//!   CLI process's first write before the ledger.
//!
//! The cache is filled with 1 KiB entries so 10 000 of them stay small on disk.

use std::cell::Cell;
use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use webfetch::CacheSettings;
use webfetch::CanonicalUrl;
use webfetch::RenderingMethod;
use webfetch::internals::cache::{DiskCache, Fresh, Variant};
use webfetch::internals::vocabulary::ExtractedDocument;

const SIZES: [usize; 3] = [10, 1_000, 10_000];
const T0: OffsetDateTime = datetime!(2026-01-10 12:00:00 UTC);
const HTTP: RenderingMethod = RenderingMethod::Http;

fn settings(dir: &Path, max_entries: usize) -> CacheSettings {
    let text = format!(
        "[tools.webfetch]\ncache_dir = '{}'\nmax_cache_entries = {max_entries}\n",
        dir.display()
    );
    webfetch::load_str(&text, webfetch::LoadOptions::default())
        .unwrap()
        .settings
        .cache
}

fn open(dir: &Path, max_entries: usize) -> DiskCache {
    DiskCache::open(&settings(dir, max_entries)).unwrap()
}

fn url(path: &str) -> CanonicalUrl {
    CanonicalUrl::parse(&format!("https://bench.example/{path}")).unwrap()
}

/// About `bytes` of Markdown shaped like an article.
fn markdown(bytes: usize) -> ExtractedDocument {
    let mut text = String::with_capacity(bytes + 200);
    let mut section = 0;
    while text.len() < bytes {
        section += 1;
        text.push_str(&format!("## Section {section}\n\n"));
        text.push_str(
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod \
             tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim \
             veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip.\n\n",
        );
    }
    text.truncate(bytes);
    ExtractedDocument {
        markdown: text,
        title: Some("Benchmark page".into()),
        language: Some("en".into()),
        page_type: None,
        page_starts: Vec::new(),
    }
}

/// A cache at its entry limit `n`: `n - 1` fillers of 1 KiB, then `last`.
fn filled(n: usize, last: &ExtractedDocument) -> (tempfile::TempDir, DiskCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path(), n);
    let filler = markdown(1024);
    for i in 1..n {
        let at = T0 + Duration::seconds(i64::try_from(i).unwrap());
        cache
            .put(Fresh::new(
                &url(&format!("filler/{i}")),
                HTTP,
                &filler,
                at,
                at,
            ))
            .unwrap();
    }
    let at = T0 + Duration::seconds(i64::try_from(n).unwrap());
    cache
        .put(Fresh::new(&url("target"), HTTP, last, at, at))
        .unwrap();
    // Let the kernel write the fill back first, or the first group measures the
    // writeback of thousands of fresh files instead of the cache.
    let _ = std::process::Command::new("sync").status();
    (dir, cache)
}

/// A clock that moves one second per call, so every hit really rewrites.
fn ticking(start: OffsetDateTime) -> impl FnMut() -> OffsetDateTime {
    let now = Cell::new(start);
    move || {
        let at = now.get() + Duration::seconds(1);
        now.set(at);
        at
    }
}

fn bench(c: &mut Criterion) {
    let big = markdown(100 * 1024);
    let small = markdown(1024);
    let target = url("target");

    let mut group = c.benchmark_group("cache");
    group.sample_size(20);
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.measurement_time(std::time::Duration::from_secs(3));
    for n in SIZES {
        let (_dir, cache) = filled(n, &big);
        let start = T0 + Duration::days(1);

        let mut now = ticking(start);
        group.bench_with_input(BenchmarkId::new("hit_100k", n), &n, |b, _| {
            b.iter(|| black_box(cache.get(&target, HTTP, Variant::default(), now())).unwrap())
        });

        let mut now = ticking(start + Duration::days(1));
        group.bench_with_input(BenchmarkId::new("overwrite_100k", n), &n, |b, _| {
            b.iter(|| {
                let at = now();
                cache.put(Fresh::new(&target, HTTP, &big, at, at)).unwrap()
            })
        });

        let mut now = ticking(start + Duration::days(2));
        // A key never written before, for the writes that add an entry.
        let fresh = Cell::new(0u64);
        let new_key = || {
            fresh.set(fresh.get() + 1);
            url(&format!("new/{}", fresh.get()))
        };
        group.bench_with_input(BenchmarkId::new("write_evict_1k", n), &n, |b, _| {
            b.iter(|| {
                let at = now();
                cache
                    .put(Fresh::new(&new_key(), HTTP, &small, at, at))
                    .unwrap()
            })
        });

        let cold = settings(cache.dir(), n);
        let mut now = ticking(start + Duration::days(3));
        group.bench_with_input(BenchmarkId::new("cold_write_1k", n), &n, |b, _| {
            b.iter(|| {
                let at = now();
                let handle = DiskCache::open(&cold).unwrap();
                handle
                    .put(Fresh::new(&new_key(), HTTP, &small, at, at))
                    .unwrap()
            })
        });

        let mut now = ticking(start + Duration::days(4));
        group.bench_with_input(BenchmarkId::new("rescan_write_1k", n), &n, |b, _| {
            b.iter_batched(
                || {
                    let _ = std::fs::remove_file(cache.dir().join(".webfetch-ledger"));
                },
                |()| {
                    let at = now();
                    let handle = DiskCache::open(&cold).unwrap();
                    handle
                        .put(Fresh::new(&new_key(), HTTP, &small, at, at))
                        .unwrap()
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
