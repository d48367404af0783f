//! What telling a bot wall costs beside extraction: `wall::detect` on the first
//! 64 KiB of each corpus page (as a 200 response with no wall header, the case
//! that reads the body) against auto-mode extraction of the same page, in the
//! thread's CPU time, best of `WALLS_BENCH_ROUNDS` rounds (default 5). Run with
//! `cargo bench --bench walls`; it prints the total of each and their ratio.
//! With `WEBFETCH_WCXB_DIR` (WCXB's dev split: `html/*.html.gz`), it also
//! counts the dev pages taken for walls: every one is a real page, so each is a
//! false positive.

#[path = "support/clock.rs"]
mod clock;
#[path = "support/pages.rs"]
mod pages;

use std::hint::black_box;

use http::HeaderMap;
use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;
use webfetch::internals::render::wall::{HEAD_BYTES, detect};

use clock::timed;

fn main() {
    let pages: Vec<Vec<u8>> = pages::corpus()
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
    if pages.is_empty() {
        return;
    }
    let url = Url::parse("https://example.com/article").expect("url");
    let headers = HeaderMap::new();
    let rounds: usize = std::env::var("WALLS_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let (mut best_detect, mut best_extract) = (f64::MAX, f64::MAX);
    let mut walls = 0;
    for _ in 0..rounds {
        let (found, took) = timed(|| {
            pages
                .iter()
                .filter(|page| {
                    black_box(detect(200, &headers, &page[..page.len().min(HEAD_BYTES)])).is_some()
                })
                .count()
        });
        walls = found;
        best_detect = best_detect.min(took.as_secs_f64());
        let ((), took) = timed(|| {
            for page in &pages {
                let text = decode(page, None, true).text;
                black_box(extract_html(&text, &url, ExtractionMode::Auto).ok());
            }
        });
        best_extract = best_extract.min(took.as_secs_f64());
    }
    println!(
        "{} corpus pages: wall detection {:.2} ms, auto extraction {:.1} ms: detection is {:.3}% of extraction ({walls} pages taken for walls)",
        pages.len(),
        best_detect * 1e3,
        best_extract * 1e3,
        100.0 * best_detect / best_extract
    );
    if let Some(dir) = std::env::var_os("WEBFETCH_WCXB_DIR") {
        let html = std::path::Path::new(&dir).join("html");
        let mut paths: Vec<_> = std::fs::read_dir(&html)
            .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_default();
        paths.sort();
        let taken: Vec<String> = paths
            .iter()
            .filter(|path| {
                let mut bytes = Vec::new();
                let read = std::fs::File::open(path).and_then(|file| {
                    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut bytes)
                });
                read.is_ok()
                    && detect(200, &headers, &bytes[..bytes.len().min(HEAD_BYTES)]).is_some()
            })
            .map(|path| path.display().to_string())
            .collect();
        println!(
            "{} WCXB dev pages: {} taken for walls {taken:?}",
            paths.len(),
            taken.len()
        );
    }
}
