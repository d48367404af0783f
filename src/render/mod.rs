//! Rendering selection and browser mode (SRD 3.4.3 .. 3.4.6).
//!
//! [`select`] holds the pure rules that choose HTTP or the browser (Appendix B.3);
//! [`browser`] renders a page in headless Chromium with every request it makes
//! fetched by our own pinned client.

pub mod browser;
pub mod select;

pub use self::browser::{BrowserPage, RenderContext, render};
pub use self::select::{RenderPlan, is_js_heavy, plan, should_fall_back, spa_indicators};
