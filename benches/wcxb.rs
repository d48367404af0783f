//! Extraction quality per page type over WCXB's dev split: every
//! extraction mode in one run, with the benchmark's metric (word F1, precision and
//! recall per page, macro-averaged; snippet rates), on what the model reads (the
//! Markdown with link and image targets dropped), beside mean words per page over
//! the gold text's, mean cl100k tokens per page, pages with no text where the gold
//! has some, and extraction time (decode included) on one core: the thread's CPU
//! time, so other processes' load does not count.
//!
//! `cargo bench --bench wcxb`. The split is read from `WEBFETCH_WCXB_DIR`, else
//! `wcxb-dev` beside `WEBFETCH_CORPUS_DIR`. Environment:
//! `WCXB_MODES=srd,article,auto` (the default: all three);
//! `WCXB_TYPE=forum` scores one page type only;
//! `WCXB_WORST=N` lists the N worst pages of the last mode per type;
//! `WCXB_DUMP=DIR` writes each page's Markdown per mode there;
//! `WCXB_ORACLE=1` reads each page in auto mode as its gold type (the readings
//! measured apart from the classifier), `WCXB_ORACLE=service` (any page type) as
//! that type;
//! `WCXB_FEATURES=FILE` writes the classifier's decision and features per page
//! there and measures nothing;
//! `WCXB_BLOCKS=FILE` writes the block filter's rows (page, gold type, auto's
//! type, block text, features) for the pages auto reads whole or as threads, for
//! `scripts/train_blocks.py`, and measures nothing;
//! `WCXB_TSV=FILE` writes one line per page and mode (id, type, mode, P, R, F1,
//! with, without, words, gold words, detected page type, extraction time in
//! microseconds);
//! `WCXB_REPEAT=N` times each page's extraction N times per mode and counts the
//! fastest (less noise from a shared machine; N times as long).
//!
//! Each page is read in every mode back to back, so drift in the machine's load
//! during the run weighs on every mode alike.

#[path = "support/clock.rs"]
mod clock;
#[path = "support/text_view.rs"]
mod text_view;
#[path = "support/wcxb.rs"]
mod wcxb;

use std::io::Write as _;
use std::time::Duration;

use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;
use webfetch::{Cl100k, TokenCounter};

use text_view::text_view;
use wcxb::{PageScore, Sums, TYPES};

/// The best figure the benchmark publishes per type (its README; `listing` is
/// MinerU-HTML's, the rest rs-trafilatura 0.2.2's), and overall.
const BEST_PUBLISHED: [(&str, f64); 8] = [
    ("article", 0.932),
    ("forum", 0.808),
    ("product", 0.641),
    ("collection", 0.716),
    ("listing", 0.710),
    ("documentation", 0.932),
    ("service", 0.844),
    ("all", 0.859),
];

struct Run {
    mode: ExtractionMode,
    by_type: Vec<Sums>,
    all: Sums,
    time: Duration,
    per_page: Vec<(f64, usize)>,
}

fn main() {
    let dir = wcxb::dir();
    let Some(mut pages) = wcxb::pages(&dir) else {
        eprintln!(
            "WCXB dev split not found at {}: nothing to measure",
            dir.display()
        );
        return;
    };
    if let Ok(only) = std::env::var("WCXB_TYPE") {
        pages.retain(|p| p.page_type == only);
    }
    let modes: Vec<ExtractionMode> = std::env::var("WCXB_MODES")
        .unwrap_or_else(|_| "srd,article,auto".to_owned())
        .split(',')
        .filter_map(|m| m.trim().parse().ok())
        .collect();
    let html: Vec<Vec<u8>> = pages
        .iter()
        .map(|p| wcxb::html(&dir, &p.id).unwrap_or_default())
        .collect();
    let bytes: usize = html.iter().map(Vec::len).sum();
    let dump = std::env::var_os("WCXB_DUMP").map(std::path::PathBuf::from);
    let mut tsv = std::env::var_os("WCXB_TSV")
        .and_then(|path| std::fs::File::create(path).ok())
        .map(std::io::BufWriter::new);
    println!(
        "WCXB dev split: {} pages, {:.1} MB of HTML",
        pages.len(),
        bytes as f64 / 1e6
    );
    let fallback = Url::parse("https://example.com/").expect("url");
    let oracle = std::env::var_os("WCXB_ORACLE").is_some();
    let forced = std::env::var("WCXB_ORACLE")
        .ok()
        .filter(|t| t.parse::<webfetch::PageType>().is_ok());
    if let Some(path) = std::env::var_os("WCXB_FEATURES") {
        // The classifier's features and decision per page, beside the gold type.
        let mut out = String::new();
        for (page, body) in pages.iter().zip(&html) {
            let url = page_url(page, &fallback);
            let decoded = decode(body, None, true);
            let described =
                webfetch::internals::extract::auto::classify::describe(&decoded.text, &url);
            out.push_str(&format!("{}\t{}\t{described}\n", page.id, page.page_type));
        }
        let _ = std::fs::write(path, out);
        return;
    }
    if let Some(path) = std::env::var_os("WCXB_BLOCKS") {
        write_blocks(&pages, &html, &fallback, &path);
        return;
    }
    // Pages outer, modes inner: each page is read in every mode back to back, so
    // a shared machine's drift in load weighs on every mode alike.
    let mut runs: Vec<Run> = modes
        .iter()
        .map(|&mode| Run {
            mode,
            by_type: vec![Sums::default(); TYPES.len()],
            all: Sums::default(),
            time: Duration::ZERO,
            per_page: Vec::new(),
        })
        .collect();
    let repeat: usize = std::env::var("WCXB_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
        .max(1);
    for (index, (page, body)) in pages.iter().zip(&html).enumerate() {
        let url = page_url(page, &fallback);
        for run in &mut runs {
            let mode = run.mode;
            let forced_type = match (mode, oracle) {
                // The gold type's reading: each type's extraction apart from the
                // classifier (`WCXB_ORACLE=1`).
                (ExtractionMode::Auto, true) => Some(
                    match (forced.as_deref(), page.page_type.as_str()) {
                        (Some(forced), _) => forced,
                        (None, "collection") => "listing",
                        (None, other) => other,
                    }
                    .parse()
                    .unwrap_or(webfetch::PageType::Article),
                ),
                _ => None,
            };
            let (result, time) = (0..repeat)
                .map(|_| clock::timed(|| extract(body, &url, mode, forced_type)))
                .min_by_key(|(_, time)| *time)
                .expect("at least one run");
            run.time += time;
            let (markdown, detected) = match result {
                Ok(extraction) => (
                    extraction.document.markdown,
                    extraction.document.page_type.map_or("", |t| t.as_str()),
                ),
                Err(_) => (String::new(), ""),
            };
            let text = text_view(&markdown);
            let score: PageScore = wcxb::score_page(page, &text, Cl100k.count_str(&markdown));
            if let Some(t) = TYPES.iter().position(|t| *t == page.page_type) {
                run.by_type[t].add(&score);
            }
            run.all.add(&score);
            run.per_page.push((score.f1, index));
            if let Some(dump) = &dump {
                let _ = std::fs::create_dir_all(dump);
                let _ = std::fs::write(dump.join(format!("{}.{mode}.md", page.id)), &markdown);
            }
            if let Some(tsv) = &mut tsv {
                let _ = writeln!(
                    tsv,
                    "{}\t{}\t{mode}\t{:.4}\t{:.4}\t{:.4}\t{:.3}\t{:.3}\t{}\t{}\t{detected}\t{}",
                    page.id,
                    page.page_type,
                    score.precision,
                    score.recall,
                    score.f1,
                    score.with,
                    score.without,
                    score.words,
                    score.gold_words,
                    time.as_micros(),
                );
            }
        }
    }
    print_tables(&runs, bytes);
    let worst: usize = std::env::var("WCXB_WORST")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if let Some(last) = runs.last()
        && worst > 0
    {
        for t in TYPES {
            let mut ranked: Vec<&(f64, usize)> = last
                .per_page
                .iter()
                .filter(|(_, i)| pages[*i].page_type == t)
                .collect();
            ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
            let list: Vec<String> = ranked
                .iter()
                .take(worst)
                .map(|(f1, i)| format!("{} {f1:.2}", pages[*i].id))
                .collect();
            if !list.is_empty() {
                println!("worst {t} ({}): {}", last.mode, list.join(", "));
            }
        }
    }
}

/// One extraction of a page's bytes (decode included) in `mode`; in auto mode
/// as `forced_type` when there is one.
fn extract(
    body: &[u8],
    url: &Url,
    mode: ExtractionMode,
    forced_type: Option<webfetch::PageType>,
) -> Result<webfetch::internals::extract::Extraction, webfetch::FetchError> {
    let decoded = decode(body, None, true);
    match forced_type {
        Some(page_type) => {
            webfetch::internals::extract::auto::extract_as(&decoded.text, url, page_type).map(
                |document| webfetch::internals::extract::Extraction {
                    document,
                    article_fell_back: false,
                },
            )
        }
        None => extract_html(&decoded.text, url, mode),
    }
}

fn print_tables(runs: &[Run], bytes: usize) {
    println!();
    print!("| page type | pages |");
    for run in runs {
        print!(" {} F1 (P / R) |", run.mode);
    }
    println!(" best published |");
    println!("|{}", " --- |".repeat(runs.len() + 3));
    let rows = TYPES.iter().enumerate().map(|(t, name)| (*name, t));
    for (name, t) in rows.map(|(n, t)| (n, Some(t))).chain([("all", None)]) {
        let pages = runs.first().map_or(0, |r| sums(r, t).pages);
        if pages == 0 {
            continue;
        }
        print!("| {name} | {pages} |");
        for run in runs {
            let s = sums(run, t);
            print!(
                " {:.3} ({:.3} / {:.3}) |",
                s.f1(),
                s.precision(),
                s.recall()
            );
        }
        let best = BEST_PUBLISHED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, f)| *f);
        println!(" {best:.3} |");
    }
    println!();
    println!(
        "| mode | with | without | with (plain) | without (plain) | words / gold | mean tokens | no text (gold has some) | time | MB/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for run in runs {
        let s = &run.all;
        println!(
            "| {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.2}x | {:.0} | {} | {:.0} ms | {:.1} |",
            run.mode,
            s.with() * 100.0,
            s.without() * 100.0,
            s.with_plain() * 100.0,
            s.without_plain() * 100.0,
            s.length_ratio(),
            s.mean(s.tokens as f64),
            s.failures,
            run.time.as_secs_f64() * 1e3,
            bytes as f64 / 1e6 / run.time.as_secs_f64().max(1e-9),
        );
    }
    println!();
    print!("| page type |");
    for run in runs {
        print!(" {} tokens / page | {} words / gold |", run.mode, run.mode);
    }
    println!();
    println!("|{}", " --- |".repeat(runs.len() * 2 + 1));
    for (t, name) in TYPES.iter().enumerate() {
        if runs.first().is_none_or(|r| r.by_type[t].pages == 0) {
            continue;
        }
        print!("| {name} |");
        for run in runs {
            let s = &run.by_type[t];
            print!(
                " {:.0} | {:.2}x |",
                s.mean(s.tokens as f64),
                s.length_ratio()
            );
        }
        println!();
    }
    if let Some(srd) = runs.iter().find(|r| r.mode == ExtractionMode::Srd) {
        for run in runs.iter().filter(|r| r.mode != ExtractionMode::Srd) {
            println!(
                "{} / srd time: {:.2}x",
                run.mode,
                run.time.as_secs_f64() / srd.time.as_secs_f64().max(1e-9)
            );
        }
    }
}

fn sums(run: &Run, t: Option<usize>) -> Sums {
    match t {
        Some(t) => run.by_type[t],
        None => run.all,
    }
}

/// The block filter's training rows: one line per leaf block of each page auto
/// mode reads whole or as a thread (id, gold type, auto's type, text, `index:value` features),
/// whether a page classified as an article reads as a thread decided with the
/// filter off, so that the rows do not depend on the model they train.
fn write_blocks(pages: &[wcxb::Page], html: &[Vec<u8>], fallback: &Url, path: &std::ffi::OsStr) {
    let Ok(file) = std::fs::File::create(path) else {
        eprintln!("cannot write {}", path.to_string_lossy());
        return;
    };
    let mut out = std::io::BufWriter::new(file);
    for (page, body) in pages.iter().zip(html) {
        let url = page_url(page, fallback);
        let decoded = decode(body, None, true);
        let (page_type, rows) = webfetch::internals::extract::auto::block_rows(&decoded.text, &url);
        for (text, row) in rows {
            let features: Vec<String> = row.iter().map(|(i, x)| format!("{i}:{x}")).collect();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{text}\t{}",
                page.id,
                page.page_type,
                page_type.as_str(),
                features.join(" ")
            );
        }
    }
}

/// The page's URL, or `fallback` for the few the benchmark has none for.
fn page_url(page: &wcxb::Page, fallback: &Url) -> Url {
    page.url
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .unwrap_or_else(|| fallback.clone())
}
