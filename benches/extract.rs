//! Extraction speed: decode + parse + clean + Markdown, in MB of HTML per second on
//! one core, over the article-extraction corpus, and a size series of 1, 2, 4 and 8
//! MiB (linearity) for three pages: a content-dense synthetic
//! article (a tag every 14 bytes, the worst case for the HTML tokenizer), real
//! corpus pages concatenated (the same mix of pages at every size), and the median
//! corpus page repeated. Run with `cargo bench --bench extract`.
//!
//! After the criterion groups, a summary runs every page of every size in turn,
//! round after round (so load from other processes on a shared machine falls on
//! all of them alike) and prints, per size, the cost per byte, the dense page's cost per byte
//! over each real page's, and each page's cost per byte over its own at 1 MiB
//! (1.00 is linear). `EXTRACT_BENCH_ROUNDS` sets the rounds (default 5); the best
//! round counts. The clock is the thread's CPU time where the system has one (load
//! from other processes then barely moves the figures), else wall time. Every run
//! starts from the same memory state, that of a one-shot CLI call: the allocator
//! holds no free memory, so each page the run touches is faulted in fresh, and
//! the summary prints those page faults per KiB of input beside the cost (on a
//! VM a fresh page costs microseconds).
//! `EXTRACT_BENCH_SUMMARY=only` skips the criterion groups.

#[path = "support/clock.rs"]
mod clock;
#[path = "support/pages.rs"]
mod pages;
#[path = "support/sized.rs"]
mod sized;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;

use clock::thread_cpu_ns;

/// The sizes of the series, in MiB.
const SIZES: [usize; 4] = [1, 2, 4, 8];

fn run(bytes: &[u8], url: &Url) -> usize {
    let decoded = decode(bytes, None, true);
    extract_html(&decoded.text, url, ExtractionMode::Srd).map_or(0, |e| e.document.markdown.len())
}

fn url() -> Url {
    Url::parse("https://example.com/article").expect("url")
}

fn corpus() -> Vec<Vec<u8>> {
    pages::corpus()
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect()
}

/// Named pages: (name, bytes).
type Pages = Vec<(&'static str, Vec<u8>)>;

/// The pages of one size.
fn series(corpus: &[Vec<u8>], mib: usize) -> Pages {
    let mut pages = vec![("dense", sized::dense(mib << 20))];
    if !corpus.is_empty() {
        pages.push(("real_mixed", sized::mixed(corpus, mib << 20)));
        pages.push(("real_repeated", sized::repeated(corpus, mib << 20)));
    }
    pages
}

fn bench(c: &mut Criterion) {
    let url = url();
    let corpus = corpus();
    if !corpus.is_empty() {
        let total: usize = corpus.iter().map(Vec::len).sum();
        let mut group = c.benchmark_group("extract_corpus");
        group.sample_size(10);
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("181_pages", |b| {
            b.iter(|| {
                corpus
                    .iter()
                    .map(|p| run(black_box(p), &url))
                    .sum::<usize>()
            })
        });
        group.finish();
    }
    let mut group = c.benchmark_group("extract_size");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for mib in SIZES {
        for (name, page) in series(&corpus, mib) {
            group.throughput(Throughput::Bytes(page.len() as u64));
            group.bench_function(format!("{name}_{mib}MiB"), |b| {
                b.iter(|| run(black_box(&page), &url))
            });
        }
    }
    group.finish();
}

/// Makes glibc serve every allocation over 128 KiB with fresh pages, as a one-shot
/// CLI process gets them. By default glibc raises that threshold each time such a
/// block is freed (up to 32 MiB), so a bench repeating one size reuses warm memory
/// below 32 MiB and faults fresh pages in above it: the 8 MiB dense page then
/// looked 15% dearer per byte than the 1 MiB one, an artefact of the allocator,
/// not of extraction.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    // SAFETY: mallopt only sets a tuning parameter of the allocator.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fixed_mmap_threshold() {}

/// Hands every free page of the heap back to the system, so that the next run
/// faults its small allocations in fresh too. Without it, a run found as much
/// free heap as the page before it had left: the real pages of 1 and 2 MiB ran
/// after the dense page's larger heap and took no fault at all, those of 4 and 8
/// MiB did, and the series looked 1.2x superlinear.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

/// Page faults this thread has taken so far, where the system counts them.
#[cfg(target_os = "linux")]
fn page_faults() -> i64 {
    // SAFETY: `usage` is a valid, writable rusage for the call's duration.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    usage.ru_minflt
}

#[cfg(not(target_os = "linux"))]
fn page_faults() -> i64 {
    0
}

/// What one extraction of a page cost, per byte of the page.
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// Thread CPU time where the system reports it, else wall time.
    ns_per_byte: f64,
    /// Page faults per KiB: fresh memory touched.
    faults_per_kib: f64,
}

/// One extraction of `page`, from a heap with no free memory.
fn cost_per_byte(page: &[u8], url: &Url) -> Cost {
    release_free_memory();
    let faults = page_faults();
    let ((), time) = clock::timed(|| {
        black_box(run(black_box(page), url));
    });
    let ns = time.as_nanos();
    let len = page.len().max(1) as f64;
    Cost {
        ns_per_byte: ns as f64 / len,
        faults_per_kib: (page_faults() - faults) as f64 * 1024.0 / len,
    }
}

/// The interleaved summary (see the module docs), on stderr.
fn summary() {
    fixed_mmap_threshold();
    let url = url();
    let corpus = corpus();
    let rounds: usize = std::env::var("EXTRACT_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    // Every round runs every page of every size, so a slow spell of the machine
    // falls on all sizes alike and the best round of each shows through it.
    let all: Vec<(usize, Pages)> = SIZES
        .iter()
        .map(|&mib| (mib, series(&corpus, mib)))
        .collect();
    let none = Cost {
        ns_per_byte: f64::MAX,
        faults_per_kib: 0.0,
    };
    let mut best: Vec<Vec<Cost>> = all.iter().map(|(_, p)| vec![none; p.len()]).collect();
    for _ in 0..rounds {
        for ((_, pages), best) in all.iter().zip(&mut best) {
            for ((_, page), best) in pages.iter().zip(best.iter_mut()) {
                let cost = cost_per_byte(page, &url);
                if cost.ns_per_byte < best.ns_per_byte {
                    *best = cost;
                }
            }
        }
    }
    let rows: Vec<(usize, Vec<(&str, Cost)>)> = all
        .iter()
        .zip(best)
        .map(|((mib, pages), best)| (*mib, pages.iter().map(|(n, _)| *n).zip(best).collect()))
        .collect();
    let clock = if thread_cpu_ns().is_some() {
        "thread CPU time"
    } else {
        "wall time"
    };
    eprintln!(
        "\nextract size series, best of {rounds} interleaved rounds, {clock} \
         (ns/byte, MiB/s, page faults per KiB):"
    );
    for (mib, costs) in &rows {
        let line: Vec<String> = costs
            .iter()
            .map(|(name, cost)| {
                format!(
                    "{name} {:.2} ns/B ({:.0} MiB/s, {:.2} faults/KiB)",
                    cost.ns_per_byte,
                    1e9 / cost.ns_per_byte / 1048576.0,
                    cost.faults_per_kib
                )
            })
            .collect();
        let dense = costs[0].1.ns_per_byte;
        let ratios: Vec<String> = costs[1..]
            .iter()
            .map(|(name, cost)| format!("dense/{name} {:.2}", dense / cost.ns_per_byte))
            .collect();
        eprintln!("  {mib} MiB: {}; {}", line.join(", "), ratios.join(", "));
    }
    if let Some((_, first)) = rows.first() {
        for (i, (name, base)) in first.iter().enumerate() {
            let growth: Vec<String> = rows
                .iter()
                .map(|(mib, costs)| {
                    format!("{mib} MiB {:.2}", costs[i].1.ns_per_byte / base.ns_per_byte)
                })
                .collect();
            eprintln!("  {name} per byte vs 1 MiB: {}", growth.join(", "));
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    // `EXTRACT_BENCH_SUMMARY=only` runs the summary alone (a quick comparison).
    if std::env::var("EXTRACT_BENCH_SUMMARY").as_deref() == Ok("only") {
        summary();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench -- <filter>` and `--list`/`--test` runs skip the summary.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filtered = args.iter().any(|a| !a.starts_with('-'));
    let listing = args.iter().any(|a| a == "--list" || a == "--test");
    if !filtered && !listing {
        summary();
    }
}
