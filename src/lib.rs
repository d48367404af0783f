//! # webfetch
//!
//! The `web_fetch` tool of the WebFetch SRD v2.4: an LLM agent hands it a URL and
//! gets back clean, token-bounded Markdown chunks as strict JSON, without ever
//! reaching a private network, a cloud metadata endpoint, a page robots.txt forbids,
//! or more bytes than it can take.
//!
//! The pipeline follows SRD Appendix B, one module per stage. Parsers, extraction,
//! chunking and fitting are pure functions over bytes and strings; only `http`,
//! the browser renderer and `cache` touch the outside world.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod budget;
pub mod cache;
pub mod chunk;
pub mod config;
pub mod content;
pub mod document;
pub mod error;
pub mod executor;
pub mod extract;
pub mod http;
pub mod mcp;
pub mod notes;
pub mod offline;
pub mod output;
pub mod page;
pub mod pass;
pub mod render;
pub mod robots;
pub mod serve;
pub mod ssrf;
pub mod tokens;
pub mod tool;
pub mod url;

pub use error::{ErrorCode, FetchError};
