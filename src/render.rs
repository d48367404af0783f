//! The two renderers and the rules that choose between them (SRD 3.4.3 .. 3.4.6).
//!
//! [`select`] holds the pure rules that choose HTTP or the browser (Appendix B.3);
//! [`http`] fetches a document over the pinned client (HTTP mode); [`browser`]
//! renders a page in headless Chromium with every request it makes fetched by the
//! same client. Both run within the tool call's [`ResolvedHosts`](crate::resolved_hosts::ResolvedHosts).

pub(crate) mod browser;
pub(crate) mod http;
pub(crate) mod select;
pub(crate) mod wall;

pub(crate) use self::browser::{RenderContext, render};
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use self::http::{FetchedDocument, fetch_document};
pub(crate) use self::select::{RenderPlan, is_js_heavy, plan, should_fall_back, spa_indicators};
