//! The article-extraction benchmark's metric, shared by `tests/corpus.rs` and the
//! `quality` bench: 4-token shingles of `\w+` tokens, per-page tp/fp/fn normalised,
//! precision and recall averaged over pages, F1 the harmonic mean of the averages
//! (the benchmark's `evaluate.py`).

use std::collections::HashMap;

/// `\w+` tokens (Unicode letters and digits and `_`), as Python's `re` finds them.
pub(crate) fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Multiset of 4-token shingles (a text shorter than 4 tokens is one shingle).
pub(crate) fn shingles(text: &str) -> HashMap<Vec<&str>, usize> {
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
pub(crate) fn score(gold: &str, predicted: &str) -> (f64, f64, f64) {
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

/// Per-page precision and recall summed over pages.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Totals {
    /// Pages scored.
    pub pages: usize,
    precision: f64,
    recall: f64,
}

impl Totals {
    /// Adds one page's normalised (tp, fp, fn).
    pub(crate) fn add(&mut self, (tp, fp, fn_): (f64, f64, f64)) {
        self.pages += 1;
        self.precision += if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
        self.recall += if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    }

    /// Mean precision over pages.
    pub(crate) fn precision(&self) -> f64 {
        self.precision / self.pages.max(1) as f64
    }

    /// Mean recall over pages.
    pub(crate) fn recall(&self) -> f64 {
        self.recall / self.pages.max(1) as f64
    }

    /// The harmonic mean of the two means.
    pub(crate) fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        }
    }
}

/// `P 0.759  R 0.992  F1 0.860  (181 pages)`.
impl std::fmt::Display for Totals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "P {:.3}  R {:.3}  F1 {:.3}  ({} pages)",
            self.precision(),
            self.recall(),
            self.f1(),
            self.pages
        )
    }
}

/// The corpus's gold article bodies and original URLs, by page id; `None` when
/// the corpus is not there.
pub(crate) fn ground_truth(dir: &std::path::Path) -> Option<HashMap<String, (String, String)>> {
    let text = std::fs::read_to_string(dir.join("ground-truth.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(
        value
            .as_object()?
            .iter()
            .map(|(id, entry)| {
                let body = entry["articleBody"].as_str().unwrap_or_default().to_owned();
                let url = entry["url"].as_str().unwrap_or_default().to_owned();
                (id.clone(), (body, url))
            })
            .collect(),
    )
}
