//! A warm standby for long-lived hosts (issue 15): the next Chromium is launched
//! while the host is idle, on a fresh profile, and used for exactly one render.
//!
//! Launching Chromium is most of a short render's cost. A host that renders more
//! than once (the MCP server, `serve`, an embedding agent) keeps at most one spare:
//! after a render starts, another Chromium is launched in the background and
//! parked; the next render takes it instead of launching its own. A spare has
//! loaded nothing before it is taken, and it is shut down after its one render like
//! any other, so BROWSER-ISO-01 (a fresh profile per call, nothing shared between
//! calls) holds. A spare whose browser went away is discarded, never used; dropping
//! the last handle kills the parked Chromium and deletes its profile. The CLI makes
//! one call per process and keeps cold launches.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;
use tracing::Instrument;

use super::LAUNCH_BUDGET;
use super::launch::{Chromium, LaunchSpec};

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
pub struct Standby {
    /// The parked Chromium. A background launch holds the lock until it has
    /// parked its Chromium, so a render that arrives meanwhile waits for that
    /// launch (already under way) instead of starting a second one.
    spare: Arc<Mutex<Option<(SpareSpec, Chromium)>>>,
}

impl std::fmt::Debug for Standby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standby").finish_non_exhaustive()
    }
}

impl Standby {
    /// An empty standby: the first render launches cold, then parks the next one.
    pub fn new() -> Standby {
        Standby::default()
    }

    /// The parked Chromium if it was launched for `spec` and is still alive,
    /// waiting for a launch under way.
    pub(crate) async fn take(&self, spec: &SpareSpec) -> Option<Chromium> {
        let (parked_for, chromium) = self.spare.lock().await.take()?;
        if parked_for != *spec || *chromium.connection_closed.borrow() {
            // Dropping it kills it and deletes its profile.
            return None;
        }
        Some(chromium)
    }

    /// Launches a spare for `spec` in the background unless one is parked. A
    /// failed launch parks nothing: the next render launches cold and says why.
    pub(crate) async fn refill(&self, spec: SpareSpec) {
        let mut slot = Arc::clone(&self.spare).lock_owned().await;
        if slot.is_some() {
            return;
        }
        let task = async move {
            match Chromium::launch(&spec.launch_spec(Instant::now())).await {
                Ok(chromium) => {
                    tracing::debug!(target: "webfetch::browser", event = "browser_standby_parked", "a Chromium is parked for the next render");
                    *slot = Some((spec, chromium));
                }
                Err(error) => {
                    tracing::debug!(target: "webfetch::browser", event = "browser_standby_failed", code = %error.code, "{}", error.message);
                }
            }
        };
        // Not part of the call that triggered it.
        tokio::spawn(task.instrument(tracing::Span::none()));
    }
}
