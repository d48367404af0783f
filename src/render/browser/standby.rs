//! A warm standby for long-lived hosts: the next Chromium is launched
//! while the host is idle, on a fresh profile, and used for exactly one render.
//!
//! Launching Chromium is most of a short render's cost. A host that renders more
//! than once (the MCP server, `serve`, an embedding agent) keeps at most one spare:
//! after a render has its DOM, the used Chromium is torn down and another one
//! launched and parked in the background, off the call's path; the next render
//! takes it instead of launching its own (and waits for that launch if it is still
//! under way, rather than starting a second). A spare has loaded nothing before it
//! is taken, and it is shut down after its one render like any other, so
//! BROWSER-ISO-01 (a fresh profile per call, nothing shared between calls) holds;
//! the used profile is deleted a moment after the call returns instead of before.
//! A spare whose browser went away is discarded, never used; dropping the last
//! handle kills the parked Chromium and deletes its profile, and the watchdog does
//! both if the process dies without unwinding. The CLI makes one call per process
//! and keeps cold launches.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::time::Instant;

use super::LAUNCH_BUDGET;
use super::launch::{Chromium, LaunchSpec};
use super::session::{self, PreparedPage};

/// A parked Chromium, with its blank page prepared when that worked.
type Parked = (SpareSpec, Chromium, Option<PreparedPage>);

/// What a launch depends on; a spare serves only a render that would have
/// launched the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpareSpec {
    pub(crate) executable: PathBuf,
    pub(crate) user_agent: String,
    pub(crate) profile_root: Option<PathBuf>,
    pub(crate) command_timeout: Duration,
    pub(crate) allow_no_sandbox: bool,
}

impl SpareSpec {
    /// The launch of this spec, due `LAUNCH_BUDGET` from `started`.
    pub(crate) fn launch_spec(&self, started: Instant) -> LaunchSpec<'_> {
        LaunchSpec {
            executable: &self.executable,
            user_agent: &self.user_agent,
            profile_root: self.profile_root.as_deref(),
            deadline: started + LAUNCH_BUDGET,
            command_timeout: self.command_timeout,
            allow_no_sandbox: self.allow_no_sandbox,
        }
    }
}

/// The standby of one tool (shared by its clones): at most one parked Chromium.
#[derive(Clone, Default)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Standby {
    /// The parked Chromium. A background launch holds the lock until it has
    /// parked its Chromium, so a render that arrives meanwhile waits for that
    /// launch (already under way) instead of starting a second one.
    spare: Arc<Mutex<Option<Parked>>>,
}

impl std::fmt::Debug for Standby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standby").finish_non_exhaustive()
    }
}

impl Standby {
    /// An empty standby: the first render launches cold, then parks the next one.
    pub(crate) fn new() -> Standby {
        Standby::default()
    }

    /// The parked Chromium if it was launched for `spec` and is still alive,
    /// waiting for a launch under way.
    pub(crate) async fn take(&self, spec: &SpareSpec) -> Option<(Chromium, Option<PreparedPage>)> {
        let (parked_for, chromium, page) = self.spare.lock().await.take()?;
        if parked_for != *spec || *chromium.connection_closed.borrow() {
            // Dropping it kills it and deletes its profile.
            return None;
        }
        Some((chromium, page))
    }

    /// Shuts the parked Chromium down (after a launch under way has finished)
    /// and waits until it and its profile are gone: a host calls this before it
    /// exits, so nothing of the standby outlives it even for a moment.
    pub(crate) async fn shutdown(&self) {
        let parked = self.spare.lock().await.take();
        if let Some((_, chromium, _)) = parked {
            chromium.shutdown().await;
        }
    }

    /// The empty slot, held until [`Reserved::fill`] parks a Chromium in it, or
    /// `None` when one is parked already. A render that arrives meanwhile waits
    /// for that launch instead of starting a second one.
    pub(crate) async fn reserve(&self) -> Option<Reserved> {
        let slot = Arc::clone(&self.spare).lock_owned().await;
        slot.is_none().then_some(Reserved { slot })
    }
}

/// The standby's empty slot, reserved for the next Chromium.
pub(crate) struct Reserved {
    slot: OwnedMutexGuard<Option<Parked>>,
}

impl Reserved {
    /// Launches a Chromium for `spec`, prepares its blank page and parks both. A
    /// failed launch parks nothing: the next render launches cold and says why.
    /// A page that could not be prepared in time is left to the render, which
    /// prepares its own and reports what goes wrong.
    pub(crate) async fn fill(mut self, spec: SpareSpec) {
        let started = Instant::now();
        match Chromium::launch(&spec.launch_spec(started)).await {
            Ok(chromium) => {
                let page = tokio::time::timeout_at(
                    started + LAUNCH_BUDGET,
                    session::prepare(&chromium.browser),
                )
                .await
                .ok()
                .and_then(Result::ok);
                tracing::debug!(target: "webfetch::browser", event = "browser_standby_parked", page_prepared = page.is_some(), "a Chromium is parked for the next render");
                *self.slot = Some((spec, chromium, page));
            }
            Err(error) => {
                tracing::debug!(target: "webfetch::browser", event = "browser_standby_failed", code = %error.code, "{}", error.message);
            }
        }
    }
}
