//! WCXB (the Web Content eXtraction Benchmark, Murrough Foley, 2026, CC-BY-4.0):
//! its dev split's ground truth and its metric, shared by the `wcxb` bench and
//! `tests/it/wcxb.rs`.
//!
//! The metric is the benchmark's own (`evaluate.py`): for each page, the lowercased
//! `\w+` tokens of the prediction and of the gold text as bags of words; overlap is
//! the sum of the smaller counts; precision, recall and F1 per page, each averaged
//! over pages. An empty prediction scores 0, and an empty gold with an empty
//! prediction scores 1. The snippet rates are the share of `with` (or `without`)
//! snippets found as case-insensitive substrings of the prediction, averaged over
//! pages (a page with no snippets of a kind counts 1 for that kind, as the
//! benchmark counts it).
//!
//! The snippet rates are also given on [`plain_view`]: our Markdown with its
//! syntax taken out, as the plain text the benchmark's other extractors print.
//! A substring test reads `[link text`, `**bold**` and a table's pipes as other
//! words, so the Markdown a model reads well scores fewer snippets than the
//! same words in plain text.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The seven page types, in the benchmark's order.
pub(crate) const TYPES: [&str; 7] = [
    "article",
    "forum",
    "product",
    "collection",
    "listing",
    "documentation",
    "service",
];

/// One page of the split.
pub(crate) struct Page {
    /// The file stem (`0001`).
    pub id: String,
    /// The page's URL; `None` for the few the benchmark has none for.
    pub url: Option<String>,
    /// One of [`TYPES`].
    pub page_type: String,
    /// The gold main content, plain text.
    pub gold: String,
    /// Snippets a correct extraction contains.
    pub with: Vec<String>,
    /// Boilerplate snippets a correct extraction leaves out.
    pub without: Vec<String>,
}

/// The dev split's directory: `WEBFETCH_WCXB_DIR`, else `wcxb-dev` beside the
/// article corpus (`WEBFETCH_CORPUS_DIR`'s parent), else `../shared/corpus/wcxb-dev`.
pub(crate) fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEBFETCH_WCXB_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(corpus) = std::env::var_os("WEBFETCH_CORPUS_DIR") {
        let corpus = PathBuf::from(corpus);
        if let Some(parent) = corpus.parent() {
            return parent.join("wcxb-dev");
        }
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/wcxb-dev")
}

/// The pages of the split, sorted by id; `None` when the ground truth is absent.
pub(crate) fn pages(dir: &Path) -> Option<Vec<Page>> {
    let text = std::fs::read_to_string(dir.join("ground-truth.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut pages: Vec<Page> = value
        .as_object()?
        .iter()
        .map(|(id, entry)| Page {
            id: id.clone(),
            url: entry["url"].as_str().map(str::to_owned),
            page_type: entry["page_type"].as_str().unwrap_or("article").to_owned(),
            gold: entry["main_content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            with: strings(&entry["with"]),
            without: strings(&entry["without"]),
        })
        .collect();
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    Some(pages)
}

/// The page's HTML bytes (`html/<id>.html.gz`, decompressed).
pub(crate) fn html(dir: &Path, id: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(dir.join("html").join(format!("{id}.html.gz"))).ok()?,
    )
    .read_to_end(&mut bytes)
    .ok()?;
    Some(bytes)
}

/// Lowercased `\w+` tokens (Unicode letters, digits and `_`, as Python's `re`).
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Per-page (precision, recall, F1) by the benchmark's word metric.
pub(crate) fn word_f1(predicted: &str, gold: &str) -> (f64, f64, f64) {
    let predicted = words(predicted);
    let gold = words(gold);
    if gold.is_empty() {
        return if predicted.is_empty() {
            (1.0, 1.0, 1.0)
        } else {
            (0.0, 0.0, 0.0)
        };
    }
    if predicted.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for w in &gold {
        *counts.entry(w).or_insert(0) += 1;
    }
    let mut overlap = 0usize;
    for w in &predicted {
        if let Some(c) = counts.get_mut(w.as_str())
            && *c > 0
        {
            *c -= 1;
            overlap += 1;
        }
    }
    let p = overlap as f64 / predicted.len() as f64;
    let r = overlap as f64 / gold.len() as f64;
    let f1 = if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    (p, r, f1)
}

/// The share of `snippets` found in `text`, case-insensitively; 1 when there are
/// none (the benchmark's `snippet_check`).
pub(crate) fn snippet_rate(text: &str, snippets: &[String]) -> f64 {
    if snippets.is_empty() {
        return 1.0;
    }
    let lower = text.to_lowercase();
    let found = snippets
        .iter()
        .filter(|s| lower.contains(&s.to_lowercase()))
        .count();
    found as f64 / snippets.len() as f64
}

/// The reading text (link targets already dropped) as plain text, as a
/// renderer shows it: Markdown's backslash escapes undone, its emphasis and code
/// markers and link brackets taken out (`[Statista](…), the` reads
/// `Statista, the`), heading hashes, table pipes and quote markers made spaces,
/// whitespace collapsed (a snippet may run across a line break).
pub(crate) fn plain_view(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| n.is_ascii_punctuation()) => {
                out.extend(chars.next());
            }
            '[' | ']' | '*' | '`' => {}
            '#' | '|' | '>' => out.push(' '),
            '_' if !out.ends_with(char::is_alphanumeric)
                || !chars.peek().is_some_and(|n| n.is_alphanumeric()) => {}
            c => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sums over pages of one group (a type, or all).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sums {
    pub pages: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub with: f64,
    pub without: f64,
    pub with_plain: f64,
    pub without_plain: f64,
    pub words: usize,
    pub gold_words: usize,
    pub tokens: usize,
    pub failures: usize,
}

impl Sums {
    /// Adds one page.
    pub(crate) fn add(&mut self, score: &PageScore) {
        self.pages += 1;
        self.precision += score.precision;
        self.recall += score.recall;
        self.f1 += score.f1;
        self.with += score.with;
        self.without += score.without;
        self.with_plain += score.with_plain;
        self.without_plain += score.without_plain;
        self.words += score.words;
        self.gold_words += score.gold_words;
        self.tokens += score.tokens;
        self.failures += usize::from(score.failed);
    }

    /// A sum's mean over the pages.
    pub(crate) fn mean(&self, x: f64) -> f64 {
        x / self.pages.max(1) as f64
    }

    pub(crate) fn f1(&self) -> f64 {
        self.mean(self.f1)
    }
    pub(crate) fn precision(&self) -> f64 {
        self.mean(self.precision)
    }
    pub(crate) fn recall(&self) -> f64 {
        self.mean(self.recall)
    }
    pub(crate) fn with(&self) -> f64 {
        self.mean(self.with)
    }
    pub(crate) fn without(&self) -> f64 {
        self.mean(self.without)
    }
    pub(crate) fn with_plain(&self) -> f64 {
        self.mean(self.with_plain)
    }
    pub(crate) fn without_plain(&self) -> f64 {
        self.mean(self.without_plain)
    }
    /// Mean words per page over the gold text's.
    pub(crate) fn length_ratio(&self) -> f64 {
        self.words as f64 / self.gold_words.max(1) as f64
    }
}

/// One page's figures.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PageScore {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub with: f64,
    pub without: f64,
    /// The snippet rates on [`plain_view`].
    pub with_plain: f64,
    pub without_plain: f64,
    pub words: usize,
    pub gold_words: usize,
    pub tokens: usize,
    /// No text where the gold has some (an error, or empty Markdown).
    pub failed: bool,
}

/// Scores `text` (what the model reads: link and image targets already dropped)
/// against `page`; `tokens` is the Markdown's cl100k count.
pub(crate) fn score_page(page: &Page, text: &str, tokens: usize) -> PageScore {
    let (precision, recall, f1) = word_f1(text, &page.gold);
    let gold_words = words(&page.gold).len();
    let words = words(text).len();
    PageScore {
        precision,
        recall,
        f1,
        with: snippet_rate(text, &page.with),
        without: snippet_rate(text, &page.without),
        with_plain: snippet_rate(&plain_view(text), &page.with),
        without_plain: snippet_rate(&plain_view(text), &page.without),
        words,
        gold_words,
        tokens,
        failed: words == 0 && gold_words > 0,
    }
}
