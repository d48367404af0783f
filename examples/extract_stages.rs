//! Where extraction time goes: stage timings, loops to profile one stage, the
//! linearity checks, and Markdown dumps to compare two builds.
//!
//! ```text
//! cargo run --release --example extract_stages -- stages [FILE]     # decode/parse/survey/convert/whitespace/drop
//! cargo run --release --example extract_stages -- parse N [FILE]    # N parses (for `perf record`)
//! cargo run --release --example extract_stages -- convert N [FILE]  # N conversions of one parse
//! cargo run --release --example extract_stages -- linearity         # corpus pages concatenated vs one by one
//! cargo run --release --example extract_stages -- markdown OUT FILE...  # OUT/<name>.md per file
//! cargo run --release --example extract_stages -- once PAGE MIB     # one extraction, for callgrind
//! cargo run --release --example extract_stages -- page PAGE MIB     # that page, on stdout
//! cargo run --release --example extract_stages -- rate FILE...      # MB/s over the files (CPU time)
//! ```
//!
//! `once` builds a page of the size series of `benches/extract.rs` (`dense`,
//! `mixed` or `repeated`, of MIB MiB) and extracts it once in [`extraction`]:
//! `benches/instructions.sh` counts that function's instructions under callgrind,
//! a measure of linearity that neither load nor the allocator's policy moves.
//! `rate` is what `benches/extract_peer.sh` prints beside trafilatura's rate on the
//! same files.
//!
//! Without FILE the dense 5 MiB page of `benches/extract.rs` is used. Timings go
//! to stderr.

#[path = "../benches/support/clock.rs"]
mod clock;
#[path = "../benches/support/pages.rs"]
mod pages;
#[path = "../benches/support/sized.rs"]
mod sized;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::{dom, extract_html, markdown, normalize_whitespace, root};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = Url::parse("https://example.com/article").expect("static URL");
    let input = |i: usize| match args.get(i) {
        Some(path) => std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}")),
        None => sized::dense(5 << 20),
    };
    let count = |i: usize| args.get(i).and_then(|n| n.parse().ok()).unwrap_or(10);
    match args.first().map(String::as_str) {
        Some("stages") => stages(&input(1), &url),
        Some("parse") => {
            let text = decode(&input(2), None, true).text;
            for _ in 0..count(1) {
                black_box(dom::parse(&text, dom::Scripting::On));
            }
        }
        Some("convert") => {
            let text = decode(&input(2), None, true).text;
            let doc = dom::parse(&text, dom::Scripting::On);
            let survey = root::survey(&doc);
            let root = root::select_root(&doc, &survey).expect("a non-empty root");
            for _ in 0..count(1) {
                black_box(normalize_whitespace(&markdown::convert(root, &url)));
            }
        }
        Some("linearity") => linearity(&url),
        Some("once") if args.len() == 3 => {
            let mib: usize = args[2].parse().expect("MIB: a whole number");
            let page = series_page(&args[1], mib << 20);
            let nodes = dom::parse(&decode(&page, None, true).text, dom::Scripting::On)
                .tree
                .nodes()
                .count();
            eprintln!("{} {mib} MiB: {} bytes, {nodes} nodes", args[1], page.len());
            black_box(extraction(black_box(&page), &url));
        }
        Some("page") if args.len() == 3 => {
            let mib: usize = args[2].parse().expect("MIB: a whole number");
            std::io::Write::write_all(&mut std::io::stdout(), &series_page(&args[1], mib << 20))
                .expect("stdout");
        }
        Some("rate") if args.len() >= 2 => rate(&args[1..], &url),
        Some("markdown") if args.len() >= 2 => {
            for path in &args[2..] {
                let markdown = extract(&std::fs::read(path).expect("read"), &url);
                let name = Path::new(path).file_name().expect("a file name");
                let out = Path::new(&args[1]).join(format!("{}.md", name.to_string_lossy()));
                std::fs::write(out, markdown).expect("write");
            }
        }
        _ => eprintln!("usage: see the doc comment of examples/extract_stages.rs"),
    }
}

/// The Markdown, or the error, of one page.
fn extract(bytes: &[u8], url: &Url) -> String {
    match extract_html(&decode(bytes, None, true).text, url, ExtractionMode::Srd) {
        Ok(extraction) => extraction.document.markdown,
        Err(e) => format!("ERROR {e:?}"),
    }
}

/// One page of the size series of `benches/extract.rs`.
fn series_page(name: &str, size: usize) -> Vec<u8> {
    if name == "dense" {
        return sized::dense(size);
    }
    let corpus: Vec<Vec<u8>> = pages::corpus().into_iter().map(|(_, b)| b).collect();
    assert!(!corpus.is_empty(), "the series' real pages need the corpus");
    match name {
        "mixed" => sized::mixed(&corpus, size),
        "repeated" => sized::repeated(&corpus, size),
        _ => panic!("PAGE: dense, mixed or repeated"),
    }
}

/// Decode and extract, the work the extraction bench times; never inlined, so
/// callgrind can count it alone (`--toggle-collect`).
#[inline(never)]
fn extraction(bytes: &[u8], url: &Url) -> usize {
    extract(bytes, url).len()
}

/// MB of HTML per second of this thread's CPU time, in each extraction mode,
/// extracting every file in turn (decode included), best of five rounds: the
/// figures `benches/extract_peer.sh` prints beside trafilatura's.
fn rate(paths: &[String], url: &Url) {
    let files: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    for mode in [ExtractionMode::Srd, ExtractionMode::Article] {
        let best = (0..5)
            .map(|_| {
                let ((), time) = clock::timed(|| {
                    for file in &files {
                        let text = decode(black_box(file), None, true).text;
                        let markdown = extract_html(&text, url, mode).map(|e| e.document.markdown);
                        black_box(markdown.ok());
                    }
                });
                time
            })
            .min()
            .unwrap_or_default();
        println!(
            "webfetch {}: {:.1} MB/s over {} files, {bytes} bytes",
            mode.as_str(),
            bytes as f64 / 1e6 / best.as_secs_f64().max(1e-9),
            files.len()
        );
    }
}

/// Five runs of each stage, one line per run.
fn stages(bytes: &[u8], url: &Url) {
    for _ in 0..5 {
        let mut times: Vec<(&str, Duration)> = Vec::new();
        let mut lap = Instant::now();
        let mut split = |name, times: &mut Vec<_>| {
            times.push((name, lap.elapsed()));
            lap = Instant::now();
        };
        let decoded = decode(bytes, None, true);
        split("decode", &mut times);
        let doc = dom::parse(&decoded.text, dom::Scripting::On);
        split("parse", &mut times);
        let survey = root::survey(&doc);
        let Some(root) = root::select_root(&doc, &survey) else {
            eprintln!("no extractable content");
            return;
        };
        split("survey", &mut times);
        let converted = markdown::convert(root, url);
        split("convert", &mut times);
        let markdown = normalize_whitespace(&converted);
        split("ws", &mut times);
        let nodes = doc.tree.nodes().count();
        drop(doc);
        split("drop", &mut times);
        let total: Duration = times.iter().map(|(_, t)| *t).sum();
        let line: Vec<String> = times.iter().map(|(n, t)| format!("{n} {t:?}")).collect();
        eprintln!(
            "{} bytes, {nodes} nodes, {} bytes of Markdown: {} total {total:?}",
            bytes.len(),
            markdown.len(),
            line.join(" ")
        );
    }
}

/// Best of five, in milliseconds.
fn best_ms(bytes: &[u8], url: &Url) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(extract(bytes, url));
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

/// Corpus pages one after another up to 1, 2, 4 and 5 MiB: the concatenation
/// should take the sum of its pages' times (no cost grows faster than the input),
/// and the slowest pages per byte with their tag density.
fn linearity(url: &Url) {
    let corpus = pages::corpus();
    let single: Vec<f64> = corpus.iter().map(|(_, p)| best_ms(p, url)).collect();
    let mut rates: Vec<(f64, &Path, usize, f64)> = corpus
        .iter()
        .zip(&single)
        .map(|((path, page), ms)| {
            let tags = page.iter().filter(|&&b| b == b'<').count().max(1);
            let rate = page.len() as f64 / ms / 1e3;
            (
                rate,
                path.as_path(),
                page.len(),
                page.len() as f64 / tags as f64,
            )
        })
        .collect();
    rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (rate, path, len, density) in rates.iter().take(5) {
        eprintln!(
            "slow page: {rate:.1} MB/s, {len} bytes, a tag every {density:.0} bytes: {}",
            path.display()
        );
    }
    for mib in [1usize, 2, 4, 5] {
        let (mut page, mut sum, mut n) = (Vec::new(), 0.0, 0);
        for ((_, bytes), ms) in corpus.iter().zip(&single) {
            if page.len() + bytes.len() > mib << 20 {
                break;
            }
            page.extend_from_slice(bytes);
            sum += ms;
            n += 1;
        }
        eprintln!(
            "{mib} MiB ({n} pages): concatenated {:.1} ms, sum of the pages {sum:.1} ms",
            best_ms(&page, url)
        );
    }
    let bodies: Vec<Vec<u8>> = corpus.into_iter().map(|(_, page)| page).collect();
    for mib in [1usize, 2, 4, 8] {
        let page = sized::repeated(&bodies, mib << 20);
        let mixed = sized::mixed(&bodies, mib << 20);
        let dense = sized::dense(mib << 20);
        eprintln!(
            "{mib} MiB: median page repeated {:.1} ms, pages mixed {:.1} ms, dense {:.1} ms",
            best_ms(&page, url),
            best_ms(&mixed, url),
            best_ms(&dense, url)
        );
    }
}
