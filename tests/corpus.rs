//! Real pages: the article-extraction benchmark corpus (181 news pages with their
//! gold article text, `../shared/corpus/article-extraction`, see its README).
//!
//! Every page must extract without panic and with non-empty Markdown. The test
//! also prints the benchmark's metric (4-token shingles of `\w+` tokens, per-page
//! tp/fp/fn normalised, precision and recall averaged over pages, F1 the harmonic
//! mean of the averages) and the slowest page; figures are reported, not asserted.
//! Run `cargo test --release --test corpus -- --nocapture` to see them.
//!
//! Skips with a message when the corpus is absent (set `WEBFETCH_CORPUS_DIR` to
//! point elsewhere).

use std::collections::HashMap;
use std::io::Read as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use url::Url;
use webfetch::content::charset::decode;
use webfetch::extract::extract_html;

fn corpus_dir() -> PathBuf {
    match std::env::var_os("WEBFETCH_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/article-extraction")
        }
    }
}

/// `\w+` tokens (Unicode letters and digits and `_`), as Python's `re` finds them.
fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Multiset of 4-token shingles (a text shorter than 4 tokens is one shingle).
fn shingles(text: &str) -> HashMap<Vec<&str>, usize> {
    let toks = tokens(text);
    let mut out = HashMap::new();
    let count = toks.len().saturating_sub(3).max(1);
    for i in 0..count {
        let shingle: Vec<&str> = toks.iter().skip(i).take(4).copied().collect();
        if !shingle.is_empty() {
            *out.entry(shingle).or_insert(0) += 1;
        }
    }
    out
}

/// Normalised (tp, fp, fn) of one page.
fn score(gold: &str, predicted: &str) -> (f64, f64, f64) {
    let g = shingles(gold);
    let p = shingles(predicted);
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (k, &gc) in &g {
        let pc = p.get(k).copied().unwrap_or(0);
        tp += gc.min(pc);
        fn_ += gc.saturating_sub(pc);
    }
    for (k, &pc) in &p {
        fp += pc.saturating_sub(g.get(k).copied().unwrap_or(0));
    }
    let sum = (tp + fp + fn_) as f64;
    if sum == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    (tp as f64 / sum, fp as f64 / sum, fn_ as f64 / sum)
}

/// The Markdown as reading text: link and image destinations removed, so URLs do
/// not count as extracted words (the gold bodies are plain text).
fn text_view(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(i) = rest.find("](") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let mut depth = 1usize;
        let mut end = after.len();
        for (j, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                '\n' => {
                    end = j;
                    break;
                }
                _ => {}
            }
        }
        out.push(' ');
        rest = &after[end.min(after.len())..];
    }
    out.push_str(rest);
    out
}

struct Totals {
    pages: usize,
    precision: f64,
    recall: f64,
}

impl Totals {
    fn add(&mut self, (tp, fp, fn_): (f64, f64, f64)) {
        self.pages += 1;
        self.precision += if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
        self.recall += if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    }

    fn report(&self, label: &str) {
        let p = self.precision / self.pages as f64;
        let r = self.recall / self.pages as f64;
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        println!(
            "{label}: P {p:.3}  R {r:.3}  F1 {f1:.3}  ({} pages)",
            self.pages
        );
    }
}

#[test]
fn corpus_pages_extract_without_panic_and_non_empty() {
    let dir = corpus_dir();
    let Ok(truth) = std::fs::read_to_string(dir.join("ground-truth.json")) else {
        println!(
            "corpus not found at {}: skipping (set WEBFETCH_CORPUS_DIR)",
            dir.display()
        );
        return;
    };
    let truth: serde_json::Value = serde_json::from_str(&truth).expect("ground-truth.json");
    let truth = truth.as_object().expect("object");
    let mut ids: Vec<&String> = truth.keys().collect();
    ids.sort();
    let mut raw = Totals {
        pages: 0,
        precision: 0.0,
        recall: 0.0,
    };
    let mut text = Totals {
        pages: 0,
        precision: 0.0,
        recall: 0.0,
    };
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, String::new(), 0usize);
    let mut total_bytes = 0usize;
    let mut total_time = Duration::ZERO;
    for id in ids {
        let entry = &truth[id.as_str()];
        let gold = entry["articleBody"].as_str().unwrap_or_default();
        let page_url = Url::parse(entry["url"].as_str().unwrap_or("https://example.com/"))
            .unwrap_or_else(|_| Url::parse("https://example.com/").expect("url"));
        let path = dir.join("html").join(format!("{id}.html.gz"));
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("page"))
            .read_to_end(&mut bytes)
            .expect("gunzip");
        let started = Instant::now();
        let decoded = decode(&bytes, None, true);
        let result = extract_html(&decoded.text, &page_url);
        let took = started.elapsed();
        total_bytes += bytes.len();
        total_time += took;
        if took > slowest.0 {
            slowest = (took, id.clone(), bytes.len());
        }
        match result {
            Ok(doc) if !doc.markdown.trim().is_empty() => {
                raw.add(score(gold, &doc.markdown));
                text.add(score(gold, &text_view(&doc.markdown)));
            }
            Ok(_) => failures.push(format!("{id}: empty Markdown")),
            Err(err) => failures.push(format!("{id}: {err}")),
        }
    }
    raw.report("corpus, Markdown as is");
    text.report("corpus, link targets removed");
    println!(
        "{} MB in {:.2} s ({:.1} MB/s incl. decode); slowest page {} ({} KB): {:.1} ms",
        total_bytes as f64 / 1e6,
        total_time.as_secs_f64(),
        total_bytes as f64 / 1e6 / total_time.as_secs_f64(),
        slowest.1,
        slowest.2 / 1024,
        slowest.0.as_secs_f64() * 1e3
    );
    assert!(
        failures.is_empty(),
        "pages failed:\n{}",
        failures.join("\n")
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
