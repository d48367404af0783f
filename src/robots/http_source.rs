//! robots.txt over the shared HTTP client, and the robots check of every redirect hop
//! of a document fetch.
//!
//! The client does the per-hop work of a document fetch for robots.txt too: URL
//! validation, ports, SSRF, pinned connects, the configured `User-Agent`, the
//! decompressed byte cap (FR-WF-ROBOTS-FETCH-01, UA-02, SIZE-01a). This module adds
//! what is robots-specific: the origin scope on each hop ([`ScopeHook`],
//! ROBOTS-REDIR-02), truncation instead of refusal at `max_robots_bytes` with the
//! warning of ROBOTS-SIZE-01, and the mapping of the client's result to a
//! [`FetchOutcome`]. [`RobotsHopCheck`] is the [`HopHook`] a document fetch passes
//! so that the requested URL and each redirect target are checked against their own
//! origin's robots.txt (FR-WF-08, 07e).

use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::checker::{RobotsChecker, RobotsRequest, RobotsSource};
use super::policy::{FetchOutcome, check_scope};
use crate::budget::Budget;
use crate::canonical_url::{CanonicalUrl, Origin};
use crate::error::{ErrorCode, FetchError};
use crate::notes::Notes;
use crate::progress;
use crate::resolved_hosts::ResolvedHosts;
use crate::transport::{GetOptions, HopHook, HttpClient, OverLimit};

/// The robots origin scope (FR-WF-ROBOTS-REDIR-02) as a redirect hook: a hop that
/// leaves it stops the retrieval with `robots_unavailable` /
/// `robots_cross_origin_redirect` before its port, SSRF or DNS checks, so the target
/// is never resolved or contacted (SRD-READINGS 27).
#[derive(Debug)]
pub(crate) struct ScopeHook<'a> {
    origin: &'a Origin,
}

impl<'a> ScopeHook<'a> {
    /// The scope of `origin`'s robots.txt.
    pub(crate) fn new(origin: &'a Origin) -> ScopeHook<'a> {
        ScopeHook { origin }
    }
}

impl HopHook for ScopeHook<'_> {
    /// The scope is judged on the `Location` URL before the hop's port, SSRF and
    /// DNS checks (SRD-READINGS 27).
    fn check_target(&self, from: &CanonicalUrl, to: &CanonicalUrl) -> Result<(), FetchError> {
        check_scope(self.origin, from, to)
    }

    fn before_hop<'a>(
        &'a self,
        _from: Option<&'a CanonicalUrl>,
        _to: &'a CanonicalUrl,
    ) -> BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async { Ok(()) })
    }
}

/// robots.txt retrievals that belong to a tool call: the origin's host is
/// resolved once for the robots.txt and the document alike (FR-WF-DNS-01 step 3).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WithinCall<'a> {
    client: &'a HttpClient,
    hosts: &'a ResolvedHosts,
}

impl<'a> WithinCall<'a> {
    /// Retrievals over `client` with the call's resolved `hosts`.
    pub(crate) fn new(client: &'a HttpClient, hosts: &'a ResolvedHosts) -> WithinCall<'a> {
        WithinCall { client, hosts }
    }
}

impl RobotsSource for WithinCall<'_> {
    fn fetch_robots<'a>(&'a self, request: RobotsRequest<'a>) -> BoxFuture<'a, FetchOutcome> {
        Box::pin(fetch_robots(self.client, Some(self.hosts), request))
    }
}

/// A retrieval on its own, resolving hosts for itself.
impl RobotsSource for HttpClient {
    fn fetch_robots<'a>(&'a self, request: RobotsRequest<'a>) -> BoxFuture<'a, FetchOutcome> {
        Box::pin(fetch_robots(self, None, request))
    }
}

/// `{origin}/robots.txt` through the client under the robots scope and byte cap.
async fn fetch_robots(
    client: &HttpClient,
    hosts: Option<&ResolvedHosts>,
    request: RobotsRequest<'_>,
) -> FetchOutcome {
    let url = request.origin.robots_url();
    let hook = ScopeHook::new(request.origin);
    let options = GetOptions {
        budget: Budget::new(request.deadline, request.timeout_ms),
        max_body_bytes: request.max_bytes,
        over_limit: OverLimit::Truncate,
        hook: Some(&hook),
        hosts,
        headers: Vec::new(),
        method: http::Method::GET,
        pdf_max_body_bytes: None,
        polite: false,
        refusal_head_bytes: 0,
    };
    // A waiting client hears of the document, not of its robots.txt.
    match progress::quiet(client.get(&url, &options)).await {
        Ok(response) if response.status == 200 => {
            let mut body = response.body;
            let mut truncated = response.truncated;
            // The client caps while streaming; never parse past the cap even
            // if it hands over more.
            let max = usize::try_from(request.max_bytes).unwrap_or(usize::MAX);
            if body.len() > max {
                body.truncate(max);
                truncated = true;
            }
            if truncated {
                // ROBOTS-SIZE-01 step 3; a silent limit, so no note.
                tracing::warn!(
                    origin = %request.origin,
                    "robots.txt truncated at {} bytes",
                    request.max_bytes
                );
            }
            FetchOutcome::Body { body, truncated }
        }
        Ok(response) => FetchOutcome::Status(response.status),
        Err(error) if error.code == ErrorCode::Timeout => FetchOutcome::TimedOut,
        Err(error) => FetchOutcome::Failed(error),
    }
}

/// Runs the robots.txt check on the requested URL and every redirect target of a
/// document fetch (FR-WF-08, 07e step 3, B.2), as the client's [`HopHook`]. Each
/// check has its own budget of `timeout_seconds` from the moment the URL is
/// checked (FR-WF-ROBOTS-TIMEOUT-01, SRD-READINGS 26); the HTTP client does not
/// count the time a hook takes against the document's budget. One check serves a
/// whole tool call: a URL it allowed once is allowed again without a second
/// lookup, so the HTTP render, the browser's pre-launch admission and its top
/// document agree and add their notes once. Notes a check adds
/// (`robots_unavailable_fail_open`) are collected for the response; read them with
/// [`RobotsHopCheck::into_notes`].
#[derive(Debug)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RobotsHopCheck<'a> {
    checker: &'a RobotsChecker,
    source: WithinCall<'a>,
    state: Mutex<Checked>,
}

/// What the checks of one call found so far.
#[derive(Debug, Default)]
struct Checked {
    allowed: Vec<CanonicalUrl>,
    notes: Notes,
}

impl<'a> RobotsHopCheck<'a> {
    /// A hook checking URLs with `checker`, fetching robots.txt over `client`
    /// with the call's resolved `hosts`.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(
        checker: &'a RobotsChecker,
        client: &'a HttpClient,
        hosts: &'a ResolvedHosts,
    ) -> RobotsHopCheck<'a> {
        RobotsHopCheck {
            checker,
            source: WithinCall::new(client, hosts),
            state: Mutex::new(Checked::default()),
        }
    }

    /// The notes added by the checks so far.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn into_notes(self) -> Notes {
        self.state
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .notes
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Checked> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl HopHook for RobotsHopCheck<'_> {
    fn before_hop<'a>(
        &'a self,
        _from: Option<&'a CanonicalUrl>,
        to: &'a CanonicalUrl,
    ) -> BoxFuture<'a, Result<(), FetchError>> {
        Box::pin(async move {
            if self.state().allowed.contains(to) {
                return Ok(());
            }
            let mut notes = Notes::new();
            let deadline = Instant::now() + self.source.client.settings().timeout();
            let verdict = self
                .checker
                .check(&self.source, to, deadline, &mut notes)
                .await;
            let mut state = self.state();
            state.notes.extend(&notes);
            if verdict.is_ok() {
                state.allowed.push(to.clone());
            }
            verdict
        })
    }
}
