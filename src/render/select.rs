//! Rendering selection (SRD 3.4.6, Appendix B.3): which method fetches a URL, and
//! when an HTTP result falls back to the browser.
//!
//! Everything here is a pure rule over the request, the configuration and the raw
//! HTML; the pipeline (`tool.rs`) carries the decisions out.

use crate::canonical_url::CanonicalUrl;
use crate::config::{RenderingSettings, Settings};
use crate::vocabulary::RenderingMethod;

/// How a fetch is rendered (FR-WF-12, Appendix B.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum RenderPlan {
    /// HTTP only: the SPA fallback is disabled (FR-WF-12e).
    Http,
    /// Browser only, required: `force_browser=true` (FR-WF-12a). An unavailable
    /// browser is the `browser_unavailable` error (FR-WF-11a).
    Browser,
    /// Browser first because the host is in `js_heavy_domains` (FR-WF-12b). An
    /// unavailable browser gives the HTTP result with the
    /// `browser_unavailable_used_http` note (SRD-READINGS 19); any other browser
    /// error is returned as is (FR-WF-12f: no HTTP after a failed render).
    BrowserPreferred,
    /// HTTP first; [`should_fall_back`] decides whether the browser renders the
    /// page instead (FR-WF-12c). An unavailable browser keeps the HTTP result with
    /// the `browser_unavailable_used_http` note (FR-WF-12d).
    HttpThenMaybeBrowser,
}

impl RenderPlan {
    /// The method the plan tries first, whose cache entry a call reads first.
    pub(crate) fn first_method(self) -> RenderingMethod {
        match self {
            RenderPlan::Browser | RenderPlan::BrowserPreferred => RenderingMethod::Browser,
            RenderPlan::Http | RenderPlan::HttpThenMaybeBrowser => RenderingMethod::Http,
        }
    }

    /// The other method whose result the plan may return, so whose cache entry
    /// may answer the call too: entries are filed under the method actually used
    /// (CCH-KEY-03). A js-heavy host served over HTTP because the browser was
    /// unavailable, or an SPA shell over HTTP that fell back to the browser.
    pub(crate) fn other_method(self) -> Option<RenderingMethod> {
        match self {
            RenderPlan::BrowserPreferred => Some(RenderingMethod::Http),
            RenderPlan::HttpThenMaybeBrowser => Some(RenderingMethod::Browser),
            RenderPlan::Browser | RenderPlan::Http => None,
        }
    }

    /// Whether an unavailable browser (`browser_unavailable`) degrades to the HTTP
    /// result with the `browser_unavailable_used_http` note instead of failing.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn falls_back_to_http_when_unavailable(self) -> bool {
        matches!(
            self,
            RenderPlan::BrowserPreferred | RenderPlan::HttpThenMaybeBrowser
        )
    }
}

/// Appendix B.3: `force_browser`, then `js_heavy_domains`, then HTTP first with the
/// SPA fallback when it is enabled. `browser.enabled = false` does not change the
/// plan: the render then reports `browser_unavailable` and the plan says whether
/// that is an error or a note (FR-WF-11a, 12d).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn plan(force_browser: bool, url: &CanonicalUrl, settings: &Settings) -> RenderPlan {
    if force_browser {
        RenderPlan::Browser
    } else if is_js_heavy(url.host_str(), &settings.rendering.js_heavy_domains) {
        RenderPlan::BrowserPreferred
    } else if settings.rendering.spa_fallback_enabled {
        RenderPlan::HttpThenMaybeBrowser
    } else {
        RenderPlan::Http
    }
}

/// FR-WF-RENDER-JS-01: `host` (canonical: lowercase, IDNA ASCII) is in the
/// normalised `js_heavy_domains`. An entry starting with `.` matches strict
/// subdomains only (`.example.com` matches `a.example.com`, not `example.com`);
/// any other entry matches the host exactly, with no implicit subdomains.
pub(crate) fn is_js_heavy(host: &str, js_heavy_domains: &[String]) -> bool {
    js_heavy_domains
        .iter()
        .any(|entry| match entry.strip_prefix('.') {
            Some(parent) => host
                .strip_suffix(parent)
                .is_some_and(|label| label.len() > 1 && label.ends_with('.')),
            None => host == entry,
        })
}

/// The SPA markers of FR-WF-12c step 2, matched as ASCII-case-insensitive
/// substrings of the raw decoded HTML.
pub(crate) const SPA_INDICATORS: [&str; 6] = [
    "<script type=\"module\">",
    "id=\"__next\"",
    "id=\"app\"",
    "id=\"root\"",
    "window.__NUXT__",
    "window.__INITIAL_STATE__",
];

/// FR-WF-12c step 2: the raw decoded HTML (before boilerplate removal) contains one
/// of [`SPA_INDICATORS`], case-insensitively. Linear in the input (the needles are
/// at most 24 bytes), no allocation.
pub(crate) fn spa_indicators(raw_html: &str) -> bool {
    let haystack = raw_html.as_bytes();
    SPA_INDICATORS
        .iter()
        .any(|needle| contains_ignore_ascii_case(haystack, needle.as_bytes()))
}

fn contains_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

/// FR-WF-12c-UNIT: the length `min_extracted_chars` is compared with: Unicode
/// scalar values of the whitespace-normalised Markdown, before chunking.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn extracted_chars(markdown: &str) -> usize {
    markdown.chars().count()
}

/// FR-WF-12c/12e: after a successful HTTP extraction, fall back to the browser when
/// the fallback is enabled, the status was 200, the Markdown has fewer than
/// `min_extracted_chars` chars ([`extracted_chars`]) and the raw decoded HTML shows
/// an SPA marker. HTTP-mode errors never reach this rule (FR-WF-12f): the pipeline
/// returns them. Whether the browser is available is the render's answer, not this
/// rule's (FR-WF-12d).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn should_fall_back(
    extracted_chars: usize,
    raw_html: &str,
    status_200: bool,
    rendering: &RenderingSettings,
) -> bool {
    rendering.spa_fallback_enabled
        && status_200
        && extracted_chars < rendering.min_extracted_chars as usize
        && spa_indicators(raw_html)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LoadOptions, load_str};

    fn settings(toml: &str) -> Settings {
        load_str(toml, LoadOptions::default())
            .expect("test config loads")
            .settings
    }

    #[test]
    fn t_wf_ren_01_js_heavy_exact_vs_suffix() {
        let s = settings(
            r#"[tools.webfetch.rendering]
               js_heavy_domains = ["App.Example.COM", ".spa.test", "bücher.de", "[::1]"]"#,
        );
        let domains = &s.rendering.js_heavy_domains;
        let table = [
            // Exact entries: the host itself only, after normalisation.
            ("app.example.com", true),
            ("example.com", false),
            ("x.app.example.com", false),
            ("app.example.com.evil.test", false),
            // Suffix entries: strict subdomains only.
            ("a.spa.test", true),
            ("a.b.spa.test", true),
            ("spa.test", false),
            ("evilspa.test", false),
            (".spa.test", false),
            // IDNA: the entry was normalised to ASCII like the URL host.
            ("xn--bcher-kva.de", true),
            ("[::1]", true),
        ];
        for (host, expected) in table {
            assert_eq!(is_js_heavy(host, domains), expected, "{host}");
        }
    }

    #[test]
    fn t_wf_ren_01_plan_follows_appendix_b3() {
        let s = settings(
            r#"[tools.webfetch.rendering]
               js_heavy_domains = [".spa.test"]"#,
        );
        let url = |u: &str| CanonicalUrl::parse(u).unwrap();
        assert_eq!(plan(true, &url("http://x.test/"), &s), RenderPlan::Browser);
        assert_eq!(
            plan(false, &url("http://a.spa.test/"), &s),
            RenderPlan::BrowserPreferred
        );
        assert_eq!(
            plan(false, &url("http://x.test/"), &s),
            RenderPlan::HttpThenMaybeBrowser
        );
        let off = settings("[tools.webfetch.rendering]\nspa_fallback_enabled = false");
        assert_eq!(plan(false, &url("http://x.test/"), &off), RenderPlan::Http);
        // Forcing wins over everything, and only the forced plan makes an
        // unavailable browser an error.
        assert_eq!(
            plan(true, &url("http://a.spa.test/"), &off),
            RenderPlan::Browser
        );
        assert!(!RenderPlan::Browser.falls_back_to_http_when_unavailable());
        assert!(RenderPlan::BrowserPreferred.falls_back_to_http_when_unavailable());
        assert!(RenderPlan::HttpThenMaybeBrowser.falls_back_to_http_when_unavailable());
    }

    #[test]
    fn spa_indicators_are_case_insensitive_substrings() {
        for html in [
            r#"<div id="root"></div>"#,
            r#"<DIV ID="ROOT"></DIV>"#,
            r#"<div id="__next"></div>"#,
            r#"<div id="app">"#,
            r#"<SCRIPT TYPE="module">import x</script>"#,
            "<script>window.__nuxt__={}</script>",
            "<script>WINDOW.__INITIAL_STATE__ = {}</script>",
        ] {
            assert!(spa_indicators(html), "{html}");
        }
        for html in [
            "",
            "<p>id=root without quotes</p>",
            r#"<div id="application"></div>"#,
            r#"<script type="module" src="x.js">"#,
            "<div id='root'></div>",
            "window.__NUX",
        ] {
            assert!(!spa_indicators(html), "{html}");
        }
    }

    #[test]
    fn fr_wf_12c_unit_counts_scalar_values_not_bytes() {
        assert_eq!(extracted_chars("héllo"), 5);
        assert_eq!(extracted_chars("日本語"), 3);
        assert_eq!(extracted_chars("🎉"), 1);
    }

    #[test]
    fn fr_wf_12c_fallback_needs_every_condition() {
        let s = settings("[tools.webfetch.rendering]\nmin_extracted_chars = 10");
        let r = &s.rendering;
        let spa = r#"<div id="root"></div>"#;
        assert!(should_fall_back(9, spa, true, r));
        // Threshold is strict: 10 chars is enough content.
        assert!(!should_fall_back(10, spa, true, r));
        assert!(!should_fall_back(0, spa, false, r));
        assert!(!should_fall_back(0, "<p>plain</p>", true, r));
        let off = settings("[tools.webfetch.rendering]\nspa_fallback_enabled = false");
        assert!(!should_fall_back(0, spa, true, &off.rendering));
        // Threshold 0 never falls back: no count is below zero.
        let zero = settings("[tools.webfetch.rendering]\nmin_extracted_chars = 0");
        assert!(!should_fall_back(0, spa, true, &zero.rendering));
    }
}
