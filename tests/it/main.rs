//! The integration tests, one binary: each area a module (named by the area of
//! the SRD it covers), one shared `support`. One binary links the crate and its
//! dependencies once instead of once per file, which is most of CI's build time.
//!
//! `http_memory` stays a binary of its own: it measures its process's peak memory.

mod support;

mod batch;
mod bot_auth;
mod browser;
mod browser_launch;
mod browser_pages;
mod browser_robots;
mod cache;
mod cache_trust;
mod cancel;
mod chunk;
mod cli;
mod config;
mod connect;
mod corpus;
mod corpus_cli;
mod dns;
mod extract;
mod faults;
mod fleet;
mod fleet_trust;
mod formats;
mod formats_hostile;
mod hostile;
mod http;
mod http_tls;
mod logs;
mod mcp;
mod output;
mod pdf_hostile;
mod pdf_limits;
mod pipeline;
mod render;
mod robots;
mod robustness;
mod serve;
mod ssrf;
mod walls;
mod wcxb;
