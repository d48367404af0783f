//! SSRF policy (SRD 3.2.2 to 3.2.4): which addresses and ports may be reached, how a
//! host is resolved, and in which order its addresses are tried.
//!
//! The policy decides, the client enforces: [`IpPolicy`] and [`check_port`] are pure
//! rules; [`SsrfValidator`] is the resolution seam of FR-WF-06b, with a system
//! resolver for production and a static one for tests (T-WF-INFRA-01). Both apply
//! the same [`IpPolicy`]; a stub replaces DNS, never the policy.

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};

use ipnet::IpNet;

use std::sync::Arc;

use tokio::time::Instant;

use crate::config::{BlockToggles, SecuritySettings, Settings};
use crate::error::{FetchError, TimeoutPhase};
use crate::url::{CanonicalUrl, TargetHost};

/// Why an address was refused or a name could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsrfError {
    /// The address is in a blocked range (FR-WF-05).
    #[error("{ip} is in blocked range {cidr} ({toggle})")]
    Blocked {
        /// The address as resolved (an IPv4-mapped IPv6 address stays mapped).
        ip: IpAddr,
        /// The range that matched (for a mapped address, the IPv4 range).
        cidr: String,
        /// The config name that controls the range.
        toggle: &'static str,
    },
    /// Resolution failed or returned nothing (FR-WF-06c).
    #[error("DNS resolution of {host} failed: {error}")]
    Dns {
        /// The name.
        host: String,
        /// What the resolver said.
        error: String,
    },
}

impl From<SsrfError> for FetchError {
    fn from(error: SsrfError) -> FetchError {
        match error {
            SsrfError::Blocked { ip, cidr, toggle } => FetchError::ssrf_blocked(ip, &cidr, toggle),
            SsrfError::Dns { host, error } => FetchError::dns_failed(&host, error),
        }
    }
}

/// The range families of FR-WF-05, each under its config toggle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Loopback,
    Private,
    LinkLocal,
    Reserved,
}

impl Family {
    fn toggle(self) -> &'static str {
        match self {
            Family::Loopback => "block_loopback",
            Family::Private => "block_private_ips",
            Family::LinkLocal => "block_link_local",
            Family::Reserved => "block_reserved",
        }
    }

    fn enabled(self, toggles: &BlockToggles) -> bool {
        match self {
            Family::Loopback => toggles.loopback,
            Family::Private => toggles.private_ips,
            Family::LinkLocal => toggles.link_local,
            Family::Reserved => toggles.reserved,
        }
    }
}

/// FR-WF-05's IPv4 table, exactly (FR-WF-05h).
const IPV4_BLOCKED: [(&str, Family); 14] = [
    ("127.0.0.0/8", Family::Loopback),
    ("10.0.0.0/8", Family::Private),
    ("172.16.0.0/12", Family::Private),
    ("192.168.0.0/16", Family::Private),
    ("169.254.0.0/16", Family::LinkLocal),
    ("0.0.0.0/8", Family::Reserved),
    ("100.64.0.0/10", Family::Reserved),
    ("192.0.0.0/24", Family::Reserved),
    ("192.0.2.0/24", Family::Reserved),
    ("198.51.100.0/24", Family::Reserved),
    ("203.0.113.0/24", Family::Reserved),
    ("224.0.0.0/4", Family::Reserved),
    ("240.0.0.0/4", Family::Reserved),
    ("255.255.255.255/32", Family::Reserved),
];

/// FR-WF-05's IPv6 table, exactly; `::ffff:0:0/96` is handled by mapping to IPv4
/// (FR-WF-05a).
const IPV6_BLOCKED: [(&str, Family); 6] = [
    ("::1/128", Family::Loopback),
    ("::/128", Family::Reserved),
    ("fc00::/7", Family::Private),
    ("fe80::/10", Family::LinkLocal),
    ("ff00::/8", Family::Reserved),
    ("2001:db8::/32", Family::Reserved),
];

/// The address rules: built-in ranges under their toggles plus the always-blocked
/// `additional_blocked_cidrs` (FR-WF-05g).
#[derive(Debug, Clone)]
pub struct IpPolicy {
    builtin: Vec<(IpNet, Family)>,
    additional: Vec<IpNet>,
}

impl IpPolicy {
    /// The policy of a security configuration.
    pub fn new(security: &SecuritySettings) -> IpPolicy {
        let builtin = IPV4_BLOCKED
            .iter()
            .chain(IPV6_BLOCKED.iter())
            .filter(|(_, family)| family.enabled(&security.block))
            .map(|(cidr, family)| (cidr.parse().expect("built-in CIDRs are valid"), *family))
            .collect();
        IpPolicy {
            builtin,
            additional: security.additional_blocked_cidrs.clone(),
        }
    }

    /// Checks one address. An IPv4-mapped IPv6 address is judged by its IPv4 address
    /// (FR-WF-05a); an additional CIDR matches either form of the address.
    pub fn check(&self, ip: IpAddr) -> Result<(), SsrfError> {
        let mapped_v4 = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        let judged = mapped_v4.unwrap_or(ip);
        if let Some((net, family)) = self.builtin.iter().find(|(net, _)| net.contains(&judged)) {
            return Err(SsrfError::Blocked {
                ip,
                cidr: net.to_string(),
                toggle: family.toggle(),
            });
        }
        let forms = [Some(ip), mapped_v4, as_mapped_v6(ip)];
        for net in &self.additional {
            if forms.iter().flatten().any(|form| net.contains(form)) {
                return Err(SsrfError::Blocked {
                    ip,
                    cidr: net.to_string(),
                    toggle: "additional_blocked_cidrs",
                });
            }
        }
        Ok(())
    }

    /// FR-WF-05a1: keeps the allowed addresses of a sorted answer; when none is
    /// allowed, the error names the first blocked address in sort order.
    pub fn filter(&self, sorted: Vec<IpAddr>) -> Result<Vec<IpAddr>, SsrfError> {
        let mut first_blocked = None;
        let allowed: Vec<IpAddr> = sorted
            .into_iter()
            .filter(|ip| match self.check(*ip) {
                Ok(()) => true,
                Err(error) => {
                    first_blocked.get_or_insert(error);
                    false
                }
            })
            .collect();
        match (allowed.is_empty(), first_blocked) {
            (true, Some(error)) => Err(error),
            _ => Ok(allowed),
        }
    }
}

fn as_mapped_v6(ip: IpAddr) -> Option<IpAddr> {
    match ip {
        IpAddr::V4(v4) => Some(IpAddr::V6(v4.to_ipv6_mapped())),
        IpAddr::V6(_) => None,
    }
}

/// Sorts addresses as FR-WF-DNS-01 requires: IPv6 first by 16-byte value, then IPv4
/// by 4-byte value; duplicates removed.
pub fn sort_addresses(mut ips: Vec<IpAddr>) -> Vec<IpAddr> {
    ips.sort_by_key(|ip| match ip {
        IpAddr::V6(v6) => (0u8, v6.octets()),
        IpAddr::V4(v4) => {
            let mut key = [0u8; 16];
            key[..4].copy_from_slice(&v4.octets());
            (1u8, key)
        }
    });
    ips.dedup();
    ips
}

/// The port allowlist (FR-WF-05c..05e, PORT-01).
pub fn check_port(port: u16, allowed_ports: &[u16]) -> Result<(), FetchError> {
    if allowed_ports.contains(&port) {
        Ok(())
    } else {
        Err(FetchError::port_blocked(port, allowed_ports))
    }
}

/// The resolution seam of FR-WF-06b. `resolve_and_validate` returns the allowed
/// addresses in FR-WF-DNS-01 order (blocked ones discarded, FR-WF-05a1).
pub trait SsrfValidator: Send + Sync {
    /// Checks one address against the policy.
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError>;
    /// Resolves a name once and returns its allowed addresses, sorted.
    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError>;
}

/// Production validator: the system resolver (getaddrinfo) and the configured policy.
#[derive(Debug, Clone)]
pub struct SystemValidator {
    policy: IpPolicy,
}

impl SystemValidator {
    /// A validator for a security configuration.
    pub fn new(security: &SecuritySettings) -> SystemValidator {
        SystemValidator {
            policy: IpPolicy::new(security),
        }
    }
}

impl SsrfValidator for SystemValidator {
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError> {
        self.policy.check(ip)
    }

    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError> {
        let dns_error = |error: String| SsrfError::Dns {
            host: host.to_owned(),
            error,
        };
        let ips: Vec<IpAddr> = (host, 0u16)
            .to_socket_addrs()
            .map_err(|e| dns_error(e.to_string()))?
            .map(|addr| addr.ip())
            .collect();
        if ips.is_empty() {
            return Err(dns_error("no addresses".to_owned()));
        }
        self.policy.filter(sort_addresses(ips))
    }
}

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

/// The pre-connection checks of Appendix F.2 for one URL: port before DNS for a name,
/// SSRF before port for an IP literal (FR-WF-05e1, 06-LITERAL). Returns the allowed
/// addresses in attempt order, not yet cut to `max_dns_attempts`.
///
/// This is synchronous (it may call the system resolver); async callers run it on a
/// blocking thread under their time budget.
pub fn authorize(
    url: &CanonicalUrl,
    security: &SecuritySettings,
    validator: &dyn SsrfValidator,
) -> Result<Vec<IpAddr>, FetchError> {
    match url.host() {
        TargetHost::Ip(ip) => {
            validator.validate_ip(ip)?;
            check_port(url.port(), &security.allowed_ports)?;
            Ok(vec![ip])
        }
        TargetHost::Domain(name) => {
            check_port(url.port(), &security.allowed_ports)?;
            Ok(validator.resolve_and_validate(&name)?)
        }
    }
}

/// [`authorize`] on a blocking thread (it may call the system resolver), bounded by
/// `deadline`: running out is `timeout` with `timeout_ms` and `phase`.
pub async fn authorize_within(
    url: &CanonicalUrl,
    settings: &Arc<Settings>,
    validator: &Arc<dyn SsrfValidator>,
    deadline: Instant,
    timeout_ms: u64,
    phase: TimeoutPhase,
) -> Result<Vec<IpAddr>, FetchError> {
    let settings = Arc::clone(settings);
    let validator = Arc::clone(validator);
    let target = url.clone();
    let work = tokio::task::spawn_blocking(move || {
        authorize(&target, &settings.security, validator.as_ref())
    });
    match tokio::time::timeout_at(deadline, work).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(FetchError::internal(format!(
            "resolver task failed: {join}"
        ))),
        Err(_) => Err(FetchError::timeout(timeout_ms, phase)),
    }
}
