//! Rendering selection and browser mode (SRD 3.4.3 .. 3.4.6).

/// FR-WF-12c's SPA indicators, case-insensitive substrings of the raw decoded HTML.
const SPA_INDICATORS: [&str; 6] = [
    "<script type=\"module\">",
    "id=\"__next\"",
    "id=\"app\"",
    "id=\"root\"",
    "window.__nuxt__",
    "window.__initial_state__",
];

/// Whether the raw decoded HTML (before any cleaning) carries an SPA indicator
/// (FR-WF-12c step 2).
pub fn has_spa_indicators(raw_html: &str) -> bool {
    let lower = raw_html.to_ascii_lowercase();
    SPA_INDICATORS.iter().any(|needle| lower.contains(needle))
}
