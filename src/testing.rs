//! Test doubles, for this crate's own tests, benches and fuzz targets only (built
//! with `cfg(test)` or the `internals` feature, never in an embedder's build):
//! the stub SSRF validator the SRD asks for (T-WF-INFRA-01), a clock that moves
//! only when told to (the robots.txt cache's TTL tests, FR-WF-08f) and a host's
//! executor (the tests of the Appendix E seam).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::SecuritySettings;
use crate::executor::{ToolCtx, ToolExecutor, ToolResult, format_error, within_timeout};
use crate::robots::cache::Clock;
use crate::ssrf::{IpPolicy, SsrfError, SsrfValidator, sort_addresses};

/// Test validator (T-WF-INFRA-01): a fixed name-to-addresses table instead of DNS,
/// with the real policy. A name not in the table fails like an NXDOMAIN.
#[derive(Debug, Clone)]
pub struct StubValidator {
    policy: IpPolicy,
    hosts: HashMap<String, Vec<IpAddr>>,
}

impl StubValidator {
    /// A stub with no names, applying the policy of `security`.
    pub fn new(security: &SecuritySettings) -> StubValidator {
        StubValidator {
            policy: IpPolicy::new(security),
            hosts: HashMap::new(),
        }
    }

    /// Makes `host` resolve to `ips`, in the given (unsorted) order.
    pub fn with_host(mut self, host: &str, ips: &[IpAddr]) -> StubValidator {
        self.hosts.insert(host.to_ascii_lowercase(), ips.to_vec());
        self
    }
}

impl SsrfValidator for StubValidator {
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError> {
        self.policy.check(ip)
    }

    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError> {
        let ips = self.hosts.get(host).ok_or_else(|| SsrfError::Dns {
            host: host.to_owned(),
            error: "no such host (stub resolver)".to_owned(),
        })?;
        self.policy.filter(sort_addresses(ips.clone()))
    }
}

/// A clock that only moves when told to (tests of FR-WF-08f).
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the current instant.
    pub fn new() -> ManualClock {
        ManualClock {
            start: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut offset = self.offset.lock().unwrap_or_else(|e| e.into_inner());
        *offset = offset.saturating_add(by);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let offset = *self.offset.lock().unwrap_or_else(|e| e.into_inner());
        self.start.checked_add(offset).unwrap_or(self.start)
    }
}

/// Runs a tool the way a host's executor does (SRD Appendix E): `execute` under
/// the tool's own timeout, a failure formatted by [`format_error`]. Not an entry
/// point of the crate (a host calls [`ToolExecutor::execute`]).
pub async fn run_tool(tool: &dyn ToolExecutor, args: Value, ctx: &mut ToolCtx) -> ToolResult {
    let name = tool.name();
    match within_timeout(tool, tool.execute(args, ctx)).await {
        Ok(content) => ToolResult::success(content),
        Err(error) => format_error(name, error),
    }
}
