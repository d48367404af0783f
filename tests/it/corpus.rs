//! Real pages: the article-extraction benchmark corpus (181 news pages with their
//! gold article text, a copy of scrapinghub/article-extraction-benchmark's data kept
//! beside the repository; `WEBFETCH_CORPUS_DIR` points elsewhere).
//!
//! Every page must extract without panic and with non-empty Markdown in every mode
//! (SRD, article and auto).
//! The benchmark's metric (4-token shingles of `\w+` tokens, per-page tp/fp/fn
//! normalised, precision and recall averaged over pages, F1 the harmonic mean of
//! the averages; `benches/support/quality.rs`) is printed for both modes, and
//! article mode is held above a floor set from its measured figures (F1 0.972 with
//! link targets dropped, 1,306 cl100k tokens per page against the gold text's
//! 1,093), so a regression fails. Nothing is timed here: `cargo bench --bench
//! quality` measures speed. `cargo test --release --test it corpus -- --nocapture`
//! shows the figures.
//!
//! Skips with a message when the corpus is absent.

#[path = "../../benches/support/quality.rs"]
mod quality;
#[path = "../../benches/support/text_view.rs"]
pub(crate) mod text_view;

use std::io::Read as _;
use std::path::PathBuf;

use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;
use webfetch::{Cl100k, TokenCounter};

use quality::{Totals, score};
use text_view::text_view;

/// Article mode's F1 with link targets dropped: measured 0.972.
const ARTICLE_F1_FLOOR: f64 = 0.965;
/// Auto mode's F1 with link targets dropped: measured 0.970 (1,317
/// tokens per page).
const AUTO_F1_FLOOR: f64 = 0.965;
/// Article mode's mean cl100k tokens per page: measured 1,306; the target is
/// 1.2 times the gold text's 1,093.
const ARTICLE_MEAN_TOKENS_CEILING: f64 = 1_312.0;

fn corpus_dir() -> PathBuf {
    match std::env::var_os("WEBFETCH_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/article-extraction")
        }
    }
}

struct ModeRun {
    text: Totals,
    raw: Totals,
    tokens: usize,
}

#[test]
fn corpus_pages_extract_in_every_mode_and_article_and_auto_modes_hold_their_floors() {
    let dir = corpus_dir();
    let Some(truth) = quality::ground_truth(&dir) else {
        println!(
            "corpus not found at {}: skipping (set WEBFETCH_CORPUS_DIR)",
            dir.display()
        );
        return;
    };
    let mut ids: Vec<&String> = truth.keys().collect();
    ids.sort();
    let mut failures = Vec::new();
    let mut runs = [
        ExtractionMode::Srd,
        ExtractionMode::Article,
        ExtractionMode::Auto,
    ]
    .map(|mode| {
        (
            mode,
            ModeRun {
                text: Totals::default(),
                raw: Totals::default(),
                tokens: 0,
            },
        )
    });
    for id in ids {
        let (gold, url) = &truth[id];
        let page_url =
            Url::parse(url).unwrap_or_else(|_| Url::parse("https://example.com/").expect("url"));
        let path = dir.join("html").join(format!("{id}.html.gz"));
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("page"))
            .read_to_end(&mut bytes)
            .expect("gunzip");
        let decoded = decode(&bytes, None, true);
        for (mode, run) in &mut runs {
            match extract_html(&decoded.text, &page_url, *mode) {
                Ok(extraction) if !extraction.document.markdown.trim().is_empty() => {
                    let markdown = &extraction.document.markdown;
                    run.raw.add(score(gold, markdown));
                    run.text.add(score(gold, &text_view(markdown)));
                    run.tokens += Cl100k.count_str(markdown);
                }
                Ok(_) => failures.push(format!("{id} ({mode}): empty Markdown")),
                Err(err) => failures.push(format!("{id} ({mode}): {err}")),
            }
        }
    }
    for (mode, run) in &runs {
        println!(
            "{mode}: link targets dropped {}; as printed {}; mean tokens {:.0}",
            run.text,
            run.raw,
            run.tokens as f64 / run.text.pages.max(1) as f64
        );
    }
    assert!(
        failures.is_empty(),
        "pages failed:\n{}",
        failures.join("\n")
    );
    let article = &runs[1].1;
    assert!(
        article.text.f1() >= ARTICLE_F1_FLOOR,
        "article mode F1 {:.3} fell below {ARTICLE_F1_FLOOR}",
        article.text.f1()
    );
    let auto = &runs[2].1;
    assert!(
        auto.text.f1() >= AUTO_F1_FLOOR,
        "auto mode F1 {:.3} fell below {AUTO_F1_FLOOR}",
        auto.text.f1()
    );
    let mean_tokens = article.tokens as f64 / article.text.pages.max(1) as f64;
    assert!(
        mean_tokens <= ARTICLE_MEAN_TOKENS_CEILING,
        "article mode mean tokens {mean_tokens:.0} rose above {ARTICLE_MEAN_TOKENS_CEILING}"
    );
}

#[test]
fn metric_matches_the_benchmark_definition() {
    let (tp, fp, fn_) = score("a b c d e", "a b c d x");
    // Gold shingles {abcd, bcde}, predicted {abcd, bcdx}: 1 tp, 1 fp, 1 fn.
    assert!((tp - 1.0 / 3.0).abs() < 1e-9 && (fp - tp).abs() < 1e-9 && (fn_ - tp).abs() < 1e-9);
    assert_eq!(
        text_view("see [x](https://a.b/(c)) and ![i](u)."),
        "see [x  and ![i ."
    );
}
