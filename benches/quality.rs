//! Extraction quality over the article-extraction corpus (181 real news pages with
//! gold article text), every mode (srd, article, auto) side by side in one run: the benchmark's metric
//! with link targets dropped and as printed, mean cl100k tokens per page (gold text:
//! 1,093), and extraction time (decode included) on one core: the thread's CPU
//! time, each page read in every mode back to back, so drift in a shared
//! machine's load weighs on every mode alike.
//!
//! `cargo bench --bench quality`. Environment:
//! `QUALITY_WORST=N` lists the N worst pages of article mode by F1;
//! `QUALITY_DUMP=DIR` writes each page's Markdown per mode there;
//! `QUALITY_CLI=PATH` also pipes every page through `PATH extract --extraction MODE`
//! (the `webfetch` binary: what a user saving pages runs) and scores the chunks it
//! prints, joined; `QUALITY_SHOW=FILE,FILE` prints the article-mode Markdown of those HTML files
//! and measures nothing.

#[path = "support/clock.rs"]
mod clock;
#[path = "support/pages.rs"]
mod pages;
#[path = "support/quality.rs"]
mod quality;
#[path = "support/text_view.rs"]
mod text_view;

use std::time::Duration;

use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;
use webfetch::{Cl100k, TokenCounter};

use quality::{Totals, score};
use text_view::text_view;

struct Run {
    text: Totals,
    raw: Totals,
    tokens: usize,
    time: Duration,
    fallbacks: usize,
    per_page: Vec<(f64, String)>,
}

fn main() {
    if let Ok(files) = std::env::var("QUALITY_SHOW") {
        let url = Url::parse("https://example.com/page").unwrap();
        for file in files.split(',') {
            let html = std::fs::read_to_string(file).unwrap_or_default();
            let shown = extract_html(&html, &url, ExtractionMode::Article);
            match shown {
                Ok(e) => println!(
                    "== {file} (fell back: {})\n{}",
                    e.article_fell_back, e.document.markdown
                ),
                Err(error) => println!("== {file}: {error}"),
            }
        }
        return;
    }
    let dir = pages::corpus_dir();
    let Some(truth) = quality::ground_truth(&dir) else {
        eprintln!("corpus not found at {}: nothing to measure", dir.display());
        return;
    };
    let corpus = pages::corpus();
    let bytes: usize = corpus.iter().map(|(_, page)| page.len()).sum();
    let dump = std::env::var_os("QUALITY_DUMP").map(std::path::PathBuf::from);
    let gold_tokens: usize = truth.values().map(|(body, _)| Cl100k.count_str(body)).sum();
    println!(
        "{} pages, {:.1} MB; gold text: mean {:.0} tokens",
        corpus.len(),
        bytes as f64 / 1e6,
        gold_tokens as f64 / truth.len().max(1) as f64
    );
    let mut runs: Vec<(ExtractionMode, Run)> = [
        ExtractionMode::Srd,
        ExtractionMode::Article,
        ExtractionMode::Auto,
    ]
    .into_iter()
    .map(|mode| {
        let run = Run {
            text: Totals::default(),
            raw: Totals::default(),
            tokens: 0,
            time: Duration::ZERO,
            fallbacks: 0,
            per_page: Vec::new(),
        };
        (mode, run)
    })
    .collect();
    for (id, page, gold, url) in with_gold(&corpus, &truth) {
        let url = Url::parse(url).unwrap_or_else(|_| Url::parse("https://example.com/").unwrap());
        for (mode, run) in &mut runs {
            let mode = *mode;
            let (result, time) = clock::timed(|| {
                let decoded = decode(page, None, true);
                extract_html(&decoded.text, &url, mode)
            });
            run.time += time;
            let markdown = match result {
                Ok(extraction) => {
                    run.fallbacks += usize::from(extraction.article_fell_back);
                    extraction.document.markdown
                }
                Err(_) => String::new(),
            };
            run.tokens += Cl100k.count_str(&markdown);
            let page_score = score(gold, &text_view(&markdown));
            run.text.add(page_score);
            run.raw.add(score(gold, &markdown));
            let (tp, fp, fn_) = page_score;
            let f1 = if tp > 0.0 {
                2.0 * tp / (2.0 * tp + fp + fn_)
            } else {
                0.0
            };
            run.per_page.push((f1, id.to_owned()));
            if let Some(dump) = &dump {
                let _ = std::fs::create_dir_all(dump);
                let _ = std::fs::write(dump.join(format!("{id}.{mode}.md")), &markdown);
            }
        }
    }
    println!(
        "| mode | F1 (link targets dropped) | P | R | F1 as printed | mean tokens | time | MiB/s | fallbacks |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (mode, run) in &runs {
        println!(
            "| {mode} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} ms | {:.1} | {} |",
            run.text.f1(),
            run.text.precision(),
            run.text.recall(),
            run.raw.f1(),
            run.tokens as f64 / run.text.pages.max(1) as f64,
            run.time.as_secs_f64() * 1e3,
            bytes as f64 / (1024.0 * 1024.0) / run.time.as_secs_f64(),
            run.fallbacks,
        );
    }
    if let Some(binary) = std::env::var_os("QUALITY_CLI") {
        for mode in [
            ExtractionMode::Srd,
            ExtractionMode::Article,
            ExtractionMode::Auto,
        ] {
            let (totals, tokens) = through_cli(&binary, &corpus, &truth, mode);
            println!(
                "| {mode}, through `webfetch extract` | {:.3} | {:.3} | {:.3} | | {:.0} (chunk token counts) | | | |",
                totals.f1(),
                totals.precision(),
                totals.recall(),
                tokens as f64 / totals.pages.max(1) as f64,
            );
        }
    }
    if let [(_, srd), (_, article), (_, auto)] = &runs[..] {
        println!(
            "auto / srd time: {:.2}x",
            auto.time.as_secs_f64() / srd.time.as_secs_f64()
        );
        println!(
            "article / srd time: {:.2}x",
            article.time.as_secs_f64() / srd.time.as_secs_f64()
        );
        let worst: usize = std::env::var("QUALITY_WORST")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let mut pages: Vec<_> = article.per_page.iter().zip(&srd.per_page).collect();
        pages.sort_by(|a, b| a.0.0.total_cmp(&b.0.0));
        for ((f1, id), (srd_f1, _)) in pages.into_iter().take(worst) {
            println!("  {id}: article F1 {f1:.3}, srd F1 {srd_f1:.3}");
        }
    }
}

/// Scores the corpus as `webfetch extract` prints it: each page on stdin, its URL
/// as the base, the chunks' texts joined by blank lines.
fn through_cli(
    binary: &std::ffi::OsStr,
    corpus: &[(std::path::PathBuf, Vec<u8>)],
    truth: &std::collections::HashMap<String, (String, String)>,
    mode: ExtractionMode,
) -> (Totals, usize) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    let mut totals = Totals::default();
    let mut tokens = 0usize;
    for (_, page, gold, url) in with_gold(corpus, truth) {
        let Ok(mut child) = Command::new(binary)
            .args([
                "extract",
                "-",
                "--base-url",
                url,
                "--extraction",
                mode.as_str(),
            ])
            .args(["--max-chunk-tokens", "2048"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            eprintln!("cannot run {}", binary.to_string_lossy());
            break;
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(page);
        }
        let output = child
            .wait_with_output()
            .map(|o| o.stdout)
            .unwrap_or_default();
        let response: serde_json::Value = serde_json::from_slice(&output).unwrap_or_default();
        let chunks = response["chunks"].as_array().cloned().unwrap_or_default();
        let text: Vec<&str> = chunks.iter().filter_map(|c| c["text"].as_str()).collect();
        tokens += chunks
            .iter()
            .filter_map(|c| c["token_count"].as_u64())
            .sum::<u64>() as usize;
        totals.add(score(gold, &text_view(&text.join("\n\n"))));
    }
    (totals, tokens)
}

/// The corpus pages that have gold text: (id, page, gold article body, original URL).
fn with_gold<'a>(
    corpus: &'a [(std::path::PathBuf, Vec<u8>)],
    truth: &'a std::collections::HashMap<String, (String, String)>,
) -> impl Iterator<Item = (&'a str, &'a [u8], &'a str, &'a str)> {
    corpus.iter().filter_map(|(path, page)| {
        let id = path.file_name()?.to_str()?.strip_suffix(".html.gz")?;
        let (gold, url) = truth.get(id)?;
        Some((id, page.as_slice(), gold.as_str(), url.as_str()))
    })
}
