//! SSRF policy (SRD 3.2.2 to 3.2.4): which addresses and ports may be reached, how a
//! host is resolved, and in which order its addresses are tried.
//!
//! The policy decides, the client enforces: [`IpPolicy`] and [`check_port`] are pure
//! rules; [`SsrfValidator`] is the resolution seam of FR-WF-06b, with a system
//! resolver for production and a static one for tests (T-WF-INFRA-01). Both apply
//! the same [`IpPolicy`]; a stub replaces DNS, never the policy.

use std::net::{IpAddr, ToSocketAddrs};

use ipnet::IpNet;

use crate::canonical_url::{CanonicalUrl, TargetHost};
use crate::config::{BlockToggles, SecuritySettings};
use crate::error::FetchError;

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
pub(crate) struct IpPolicy {
    builtin: Vec<(IpNet, Family)>,
    additional: Vec<IpNet>,
}

impl IpPolicy {
    /// The policy of a security configuration.
    pub(crate) fn new(security: &SecuritySettings) -> IpPolicy {
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
    pub(crate) fn check(&self, ip: IpAddr) -> Result<(), SsrfError> {
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
    pub(crate) fn filter(&self, sorted: Vec<IpAddr>) -> Result<Vec<IpAddr>, SsrfError> {
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
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn sort_addresses(mut ips: Vec<IpAddr>) -> Vec<IpAddr> {
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
pub(crate) fn check_port(port: u16, allowed_ports: &[u16]) -> Result<(), FetchError> {
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

/// The pre-connection checks of Appendix F.2 for one URL: port before DNS for a name,
/// SSRF before port for an IP literal (FR-WF-05e1, 06-LITERAL). Returns the allowed
/// addresses in attempt order, not yet cut to `max_dns_attempts`.
///
/// This is synchronous (it may call the system resolver); async callers run it on a
/// blocking thread under their time budget.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn authorize(
    url: &CanonicalUrl,
    security: &SecuritySettings,
    validator: &dyn SsrfValidator,
) -> Result<Vec<IpAddr>, FetchError> {
    check_offline(url, security, validator)?;
    match url.host() {
        TargetHost::Ip(ip) => Ok(vec![ip]),
        TargetHost::Domain(name) => Ok(validator.resolve_and_validate(&name)?),
    }
}

/// The checks of [`authorize`] that need no network, in its order: for an IP
/// literal (the parser's canonical form, so `0x7f.1` or `[::ffff:a9fe:a9fe]`
/// are judged as the address they are; an IPv4-mapped IPv6 address by its IPv4
/// address), the address policy, then the port; for a name, the port. The
/// scheme, userinfo, zone ids and non-canonical numeric hosts are refused
/// earlier, by [`CanonicalUrl::parse`]. The pipeline runs this before any cache
/// look-up, so no entry (planted, or written under other settings) is served
/// for a URL a fetch would refuse before sending a packet, and the error is
/// the fetch's own.
pub(crate) fn check_offline(
    url: &CanonicalUrl,
    security: &SecuritySettings,
    validator: &dyn SsrfValidator,
) -> Result<(), FetchError> {
    if let TargetHost::Ip(ip) = url.host() {
        validator.validate_ip(ip)?;
    }
    check_port(url.port(), &security.allowed_ports)
}

#[cfg(test)]
mod tests {
    //! FR-WF-05 range edges. The expected table below is copied
    //! from the SRD's text, not from [`IPV4_BLOCKED`]/[`IPV6_BLOCKED`], so that a typo
    //! in the code's table shows up as a failed edge.

    use super::*;
    use crate::config;

    const LOOPBACK: &str = "block_loopback";
    const PRIVATE: &str = "block_private_ips";
    const LINK_LOCAL: &str = "block_link_local";
    const RESERVED: &str = "block_reserved";

    /// One FR-WF-05 row: CIDR, toggle, first and last address, the address just below
    /// the first and just above the last (`None` at the end of the address space).
    type Row = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
    );

    /// FR-WF-05, IPv4 table (SRD 3.2.2), every row.
    const SRD_V4: [Row; 14] = [
        (
            "127.0.0.0/8",
            LOOPBACK,
            "127.0.0.0",
            "127.255.255.255",
            Some("126.255.255.255"),
            Some("128.0.0.0"),
        ),
        (
            "10.0.0.0/8",
            PRIVATE,
            "10.0.0.0",
            "10.255.255.255",
            Some("9.255.255.255"),
            Some("11.0.0.0"),
        ),
        (
            "172.16.0.0/12",
            PRIVATE,
            "172.16.0.0",
            "172.31.255.255",
            Some("172.15.255.255"),
            Some("172.32.0.0"),
        ),
        (
            "192.168.0.0/16",
            PRIVATE,
            "192.168.0.0",
            "192.168.255.255",
            Some("192.167.255.255"),
            Some("192.169.0.0"),
        ),
        (
            "169.254.0.0/16",
            LINK_LOCAL,
            "169.254.0.0",
            "169.254.255.255",
            Some("169.253.255.255"),
            Some("169.255.0.0"),
        ),
        (
            "0.0.0.0/8",
            RESERVED,
            "0.0.0.0",
            "0.255.255.255",
            None,
            Some("1.0.0.0"),
        ),
        (
            "100.64.0.0/10",
            RESERVED,
            "100.64.0.0",
            "100.127.255.255",
            Some("100.63.255.255"),
            Some("100.128.0.0"),
        ),
        (
            "192.0.0.0/24",
            RESERVED,
            "192.0.0.0",
            "192.0.0.255",
            Some("191.255.255.255"),
            Some("192.0.1.0"),
        ),
        (
            "192.0.2.0/24",
            RESERVED,
            "192.0.2.0",
            "192.0.2.255",
            Some("192.0.1.255"),
            Some("192.0.3.0"),
        ),
        (
            "198.51.100.0/24",
            RESERVED,
            "198.51.100.0",
            "198.51.100.255",
            Some("198.51.99.255"),
            Some("198.51.101.0"),
        ),
        (
            "203.0.113.0/24",
            RESERVED,
            "203.0.113.0",
            "203.0.113.255",
            Some("203.0.112.255"),
            Some("203.0.114.0"),
        ),
        (
            "224.0.0.0/4",
            RESERVED,
            "224.0.0.0",
            "239.255.255.255",
            Some("223.255.255.255"),
            // The neighbour above is 240.0.0.0/4, also block_reserved.
            Some("240.0.0.0"),
        ),
        (
            "240.0.0.0/4",
            RESERVED,
            "240.0.0.0",
            // Also the broadcast row below: the SRD's two rows overlap here.
            "255.255.255.255",
            // The neighbour below is 224.0.0.0/4.
            Some("239.255.255.255"),
            None,
        ),
        (
            "255.255.255.255/32",
            RESERVED,
            "255.255.255.255",
            "255.255.255.255",
            // Inside 240.0.0.0/4, so blocked by that row, not this one.
            Some("255.255.255.254"),
            None,
        ),
    ];

    /// FR-WF-05, IPv6 table, every row but `::ffff:0:0/96` (judged by its IPv4
    /// address, FR-WF-05a; see [`SRD_MAPPED`]).
    const SRD_V6: [Row; 6] = [
        (
            "::1/128",
            LOOPBACK,
            "::1",
            "::1",
            // `::` is the unspecified row; `::2` is IPv4-compatible, not listed.
            Some("::"),
            Some("::2"),
        ),
        ("::/128", RESERVED, "::", "::", None, Some("::1")),
        (
            "fc00::/7",
            PRIVATE,
            "fc00::",
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Some("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            Some("fe00::"),
        ),
        (
            "fe80::/10",
            LINK_LOCAL,
            "fe80::",
            "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Some("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            // Deprecated site-local fec0::/10 is not in the SRD.
            Some("fec0::"),
        ),
        (
            "ff00::/8",
            RESERVED,
            "ff00::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Some("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            None,
        ),
        (
            "2001:db8::/32",
            RESERVED,
            "2001:db8::",
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            Some("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"),
            Some("2001:db9::"),
        ),
    ];

    /// `::ffff:0:0/96`: first, last, just below, just above.
    const SRD_MAPPED: (&str, &str, &str, &str) = (
        "::ffff:0.0.0.0",
        "::ffff:255.255.255.255",
        "::fffe:ffff:ffff",
        "::1:0:0:0",
    );

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn all_rows() -> impl Iterator<Item = &'static Row> {
        SRD_V4.iter().chain(SRD_V6.iter())
    }

    /// The SRD rows (CIDR, toggle) an address falls in, judging an IPv4-mapped IPv6
    /// address by its IPv4 address.
    fn srd_rows_containing(addr: IpAddr) -> Vec<(&'static str, &'static str)> {
        let judged = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            IpAddr::V4(_) => addr,
        };
        all_rows()
            .filter(|row| row.0.parse::<IpNet>().unwrap().contains(&judged))
            .map(|row| (row.0, row.1))
            .collect()
    }

    fn policy_with(toml: &str) -> IpPolicy {
        let loaded = config::load_str(toml, config::LoadOptions::default())
            .unwrap_or_else(|e| panic!("{toml}: {e}"));
        IpPolicy::new(&loaded.settings.security)
    }

    fn policy_without(toggle: &str) -> IpPolicy {
        policy_with(&format!(
            "[tools.webfetch.security]\n{toggle} = false\nallow_insecure_overrides = true\n"
        ))
    }

    /// Checks one address: blocked by one of the SRD rows it is in whose toggle is
    /// on (with that row's CIDR and toggle, and the address as given), or allowed
    /// when there is none. Returns the (CIDR, toggle) of a block.
    fn assert_decision(
        policy: &IpPolicy,
        addr: IpAddr,
        off: Option<&str>,
    ) -> Option<(String, &'static str)> {
        let expected: Vec<_> = srd_rows_containing(addr)
            .into_iter()
            .filter(|(_, toggle)| Some(*toggle) != off)
            .collect();
        match policy.check(addr) {
            Ok(()) => {
                assert!(
                    expected.is_empty(),
                    "{addr} allowed (off: {off:?}); the SRD blocks it by {expected:?}"
                );
                None
            }
            Err(SsrfError::Blocked {
                ip: reported,
                cidr,
                toggle,
            }) => {
                assert_eq!(reported, addr, "blocked_ip is the address as given");
                assert!(
                    expected.iter().any(|(c, t)| *c == cidr && *t == toggle),
                    "{addr} blocked by {cidr} ({toggle}) (off: {off:?}); the SRD says {expected:?}"
                );
                Some((cidr, toggle))
            }
            Err(other) => panic!("{addr}: {other}"),
        }
    }

    /// Edge probes of every row, each in its own form and, for IPv4, its
    /// IPv4-mapped form: (row CIDR, probe, whether the probe is inside the row).
    fn edge_probes() -> Vec<(&'static str, IpAddr, bool)> {
        let mut probes = Vec::new();
        for &(cidr, _, first, last, below, above) in all_rows() {
            for (text, inside) in [
                (Some(first), true),
                (Some(last), true),
                (below, false),
                (above, false),
            ] {
                let Some(text) = text else { continue };
                let addr = ip(text);
                probes.push((cidr, addr, inside));
                if let IpAddr::V4(v4) = addr {
                    probes.push((cidr, IpAddr::V6(v4.to_ipv6_mapped()), inside));
                }
            }
        }
        probes
    }

    #[test]
    fn fr_wf_05_expected_edges_are_the_rows_own_edges() {
        // Guards the hand-written table above: first/last are the CIDR's network
        // and broadcast addresses, below/above are their neighbours.
        for &(cidr, _, first, last, below, above) in all_rows() {
            let net: IpNet = cidr.parse().unwrap();
            assert_eq!(net.network(), ip(first), "{cidr} first");
            assert_eq!(net.broadcast(), ip(last), "{cidr} last");
            let value = |addr: IpAddr| match addr {
                IpAddr::V4(v4) => u128::from(u32::from(v4)),
                IpAddr::V6(v6) => u128::from(v6),
            };
            let max = match net {
                IpNet::V4(_) => u128::from(u32::MAX),
                IpNet::V6(_) => u128::MAX,
            };
            match below {
                Some(b) => assert_eq!(value(ip(b)) + 1, value(ip(first)), "{cidr} below"),
                None => assert_eq!(value(ip(first)), 0, "{cidr} has no address below"),
            }
            match above {
                Some(a) => assert_eq!(value(ip(a)), value(ip(last)) + 1, "{cidr} above"),
                None => assert_eq!(value(ip(last)), max, "{cidr} has no address above"),
            }
        }
    }

    #[test]
    fn fr_wf_05h_code_table_is_exactly_the_srd_table() {
        let mut code: Vec<(String, &str)> = IPV4_BLOCKED
            .iter()
            .chain(IPV6_BLOCKED.iter())
            .map(|(cidr, family)| (cidr.parse::<IpNet>().unwrap().to_string(), family.toggle()))
            .collect();
        let mut srd: Vec<(String, &str)> =
            all_rows().map(|row| (row.0.to_owned(), row.1)).collect();
        code.sort();
        srd.sort();
        assert_eq!(code, srd);
    }

    #[test]
    fn fr_wf_05_every_range_blocked_at_both_edges_and_not_beyond() {
        let policy = IpPolicy::new(&SecuritySettings::default());
        for (cidr, addr, inside) in edge_probes() {
            let decision = assert_decision(&policy, addr, None);
            if inside {
                let (got, _) = decision.unwrap_or_else(|| panic!("{addr}: edge of {cidr} allowed"));
                // Only 255.255.255.255 is in two rows (240.0.0.0/4 and the /32).
                if srd_rows_containing(addr).len() == 1 {
                    assert_eq!(got, cidr, "{addr}");
                }
            } else if let Some((got, _)) = decision {
                assert_ne!(got, cidr, "{addr} is outside {cidr}");
            }
        }
    }

    #[test]
    fn fr_wf_05a_mapped_range_edges_judged_by_ipv4() {
        let policy = IpPolicy::new(&SecuritySettings::default());
        let (first, last, below, above) = SRD_MAPPED;
        let blocked = |text: &str| match policy.check(ip(text)) {
            Err(SsrfError::Blocked { cidr, toggle, .. }) => (cidr, toggle),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(blocked(first), ("0.0.0.0/8".to_owned(), RESERVED));
        assert_eq!(blocked(last).1, RESERVED);
        for (text, cidr, toggle) in [
            ("::ffff:127.0.0.1", "127.0.0.0/8", LOOPBACK),
            ("::ffff:172.31.255.255", "172.16.0.0/12", PRIVATE),
            ("::ffff:169.254.169.254", "169.254.0.0/16", LINK_LOCAL),
            ("::ffff:100.127.255.255", "100.64.0.0/10", RESERVED),
        ] {
            assert_eq!(blocked(text), (cidr.to_owned(), toggle), "{text}");
        }
        for text in [below, above, "::ffff:93.184.216.34", "::ffff:172.32.0.0"] {
            assert_eq!(policy.check(ip(text)), Ok(()), "{text}");
        }
    }

    #[test]
    fn fr_wf_05h_unlisted_ranges_allowed_by_default() {
        let policy = IpPolicy::new(&SecuritySettings::default());
        for text in [
            // Benchmarking 198.18.0.0/15.
            "198.18.0.0",
            "198.18.0.1",
            "198.19.255.255",
            // NAT64 64:ff9b::/96 and 64:ff9b:1::/48, even around a blocked IPv4.
            "64:ff9b::1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::1",
            // 6to4 2002::/16.
            "2002::1",
            "2002:7f00:1::1",
            "192.88.99.1",
            // Teredo 2001::/32.
            "2001::1",
            "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
            // IPv4-compatible ::/96 (not ::ffff:0:0/96).
            "::1.2.3.4",
            "::127.0.0.1",
            "::10.0.0.1",
            "::2",
            // Site-local and discard-only, not in the SRD either.
            "fec0::1",
            "100::1",
            // Public.
            "93.184.216.34",
            "1.1.1.1",
            "2606:2800:220:1::1",
            "2001:4860:4860::8888",
        ] {
            let addr = ip(text);
            assert!(srd_rows_containing(addr).is_empty(), "{text} is in the SRD");
            assert_eq!(policy.check(addr), Ok(()), "{text}");
        }
    }

    #[test]
    fn fr_wf_05b_each_toggle_off_unblocks_only_its_ranges() {
        for toggle in [LOOPBACK, PRIVATE, LINK_LOCAL, RESERVED] {
            let policy = policy_without(toggle);
            for (cidr, addr, _) in edge_probes() {
                if let Some((_, got)) = assert_decision(&policy, addr, Some(toggle)) {
                    assert_ne!(got, toggle, "{addr} ({cidr}) with {toggle} = false");
                }
            }
        }
    }

    #[test]
    fn fr_wf_05b_block_reserved_off_allows_reserved_keeps_loopback() {
        let error = config::load_str(
            "[tools.webfetch.security]\nblock_reserved = false\n",
            config::LoadOptions::default(),
        )
        .expect_err("block_reserved = false needs allow_insecure_overrides");
        assert!(
            error.to_string().contains("block_reserved=false"),
            "{error}"
        );
        let policy = policy_without(RESERVED);
        for text in [
            "0.0.0.0",
            "100.64.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.255",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "::ffff:192.0.2.1",
            "::",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert_eq!(policy.check(ip(text)), Ok(()), "{text}");
        }
        for (text, cidr, toggle) in [
            ("127.0.0.1", "127.0.0.0/8", LOOPBACK),
            ("::1", "::1/128", LOOPBACK),
            ("::ffff:127.0.0.1", "127.0.0.0/8", LOOPBACK),
            ("10.0.0.1", "10.0.0.0/8", PRIVATE),
            ("fd00::1", "fc00::/7", PRIVATE),
            ("169.254.169.254", "169.254.0.0/16", LINK_LOCAL),
            ("fe80::1", "fe80::/10", LINK_LOCAL),
        ] {
            assert_eq!(
                policy.check(ip(text)),
                Err(SsrfError::Blocked {
                    ip: ip(text),
                    cidr: cidr.to_owned(),
                    toggle,
                }),
                "{text}"
            );
        }
    }
}
