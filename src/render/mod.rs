//! Rendering selection and browser mode (SRD 3.4.3 .. 3.4.6).
//!
//! [`select`] holds the pure rules that choose HTTP or the browser (Appendix B.3);
//! [`browser`] renders a page in headless Chromium with every request it makes
//! fetched by our own pinned client.

pub mod browser;
pub mod select;

pub use self::browser::{BrowserPage, RenderContext, render};
pub use self::select::{RenderPlan, is_js_heavy, plan, should_fall_back, spa_indicators};

/// Whether the raw decoded HTML (before any cleaning) carries an SPA indicator
/// (FR-WF-12c step 2); the pipeline's name for [`spa_indicators`].
pub fn has_spa_indicators(raw_html: &str) -> bool {
    spa_indicators(raw_html)
}
