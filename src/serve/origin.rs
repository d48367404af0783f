//! Cross-site callers: a web page the user visits must not be
//! able to drive `webfetch serve`, with or without a token.
//!
//! A browser names the page behind a request in `Origin` (every CORS request, every
//! non-GET) and says how it relates to the target in `Sec-Fetch-Site` (every
//! request, `<img src>` included, which carries no `Origin`). [`OriginPolicy`]
//! refuses a request
//!
//! - whose `Origin` is present and is neither one of the listener's own origins nor
//!   in `[tools.webfetch.serve] allowed_origins` (`null` and anything that is not
//!   an origin included), or
//! - that has no allowed `Origin` and says any `Sec-Fetch-Site` but `none` (the
//!   user typed it) or `same-origin`.
//!
//! An allowed `Origin` wins over `Sec-Fetch-Site`: the allowlist is the operator
//! saying that page may call, and a page on another site always sends
//! `cross-site`. Without an `Origin`, `same-site` is refused too: a page on
//! another loopback port is "same site" to a browser (sites ignore ports), and
//! would otherwise drive blind calls. A request with neither header passes:
//! agents and `curl` are not browsers.
//!
//! The listener's own origins are exactly `http://ADDR:PORT` for the bound
//! address and port and, for the loopback addresses `127.0.0.1` and `::1`,
//! `http://localhost:PORT`: no other loopback address (`127.0.0.2` is another
//! listener's), no other port. Origins are compared as RFC 6454 tuples: scheme
//! and host ASCII-lowercased, the default port of the scheme when none is
//! written.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use http::HeaderMap;
use http::header::{HeaderName, ORIGIN};

use crate::canonical_url::Origin;

/// `Sec-Fetch-Site` (Fetch Metadata), which `http` has no constant for.
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// Whether a `Host` or origin host names loopback: `localhost` (any case), an
/// IPv4 loopback address or `[::1]`. The one rule of the loopback `Host` check
/// (DNS rebinding) and of a loopback listener's own origins.
pub(crate) fn names_loopback(host: &str) -> bool {
    let name = host.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Why a request was refused as cross-site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CrossSite {
    /// `Origin` is present and not allowed.
    Origin,
    /// No allowed `Origin`, and a `Sec-Fetch-Site` other than `none` or
    /// `same-origin`.
    FetchSite,
}

/// Which browser callers a listener admits: see the module
/// documentation.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    /// The bound address: its port, and its IP for a non-loopback listener.
    bound: SocketAddr,
    /// `[tools.webfetch.serve] allowed_origins`.
    allowed: Vec<Origin>,
}

impl OriginPolicy {
    /// The policy of a listener bound to `bound` with the configured extra origins.
    pub(crate) fn new(bound: SocketAddr, allowed: Vec<Origin>) -> OriginPolicy {
        OriginPolicy { bound, allowed }
    }

    /// Whether `origin` is one of the listener's own origins, exactly: plain
    /// http on the bound port at the bound address, or at `localhost` for a
    /// listener on `127.0.0.1` or `::1`.
    fn is_own(&self, origin: &Origin) -> bool {
        if *origin == Origin::of_listener(self.bound) {
            return true;
        }
        let localhost = Origin::localhost(self.bound.port());
        let named_by_localhost = match self.bound.ip() {
            IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
            IpAddr::V6(v6) => v6 == Ipv6Addr::LOCALHOST,
        };
        named_by_localhost && *origin == localhost
    }

    /// Whether one `Origin` header value is admitted: it parses as an origin and
    /// is the listener's own or allowlisted. `null` and bytes that are not text
    /// are not.
    pub(crate) fn admits(&self, value: &[u8]) -> bool {
        std::str::from_utf8(value)
            .ok()
            .and_then(|text| Origin::parse(text).ok())
            .is_some_and(|origin| self.is_own(&origin) || self.allowed.contains(&origin))
    }

    /// The refusal of a request with these headers, if it is cross-site. Every
    /// `Origin` value must be admitted; an admitted one makes `Sec-Fetch-Site`
    /// moot; without one, any `Sec-Fetch-Site` but `none` or `same-origin`
    /// refuses.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), CrossSite> {
        let mut origins = headers.get_all(ORIGIN).iter().peekable();
        if origins.peek().is_some() {
            return if origins.all(|value| self.admits(value.as_bytes())) {
                Ok(())
            } else {
                Err(CrossSite::Origin)
            };
        }
        let cross_site = headers.get_all(SEC_FETCH_SITE).iter().any(|value| {
            let value = value.as_bytes().trim_ascii();
            !(value.eq_ignore_ascii_case(b"none") || value.eq_ignore_ascii_case(b"same-origin"))
        });
        if cross_site {
            Err(CrossSite::FetchSite)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn origin(text: &str) -> Origin {
        Origin::parse(text).unwrap()
    }

    /// A request's headers as (name, value) pairs.
    type Headers = &'static [(&'static str, &'static str)];

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn loopback_policy() -> OriginPolicy {
        OriginPolicy::new(
            "127.0.0.1:8787".parse().unwrap(),
            vec![origin("https://agents.example")],
        )
    }

    #[test]
    fn a_loopback_listener_admits_its_own_origins_exactly_and_the_allowlist() {
        let policy = loopback_policy();
        let table: &[(&str, bool)] = &[
            ("http://127.0.0.1:8787", true),
            ("http://localhost:8787", true),
            ("http://LOCALHOST:8787", true),
            ("http://[::1]:8787", false),
            ("http://127.0.0.2:8787", false),
            ("http://127.1.2.3:8787", false),
            ("https://agents.example", true),
            ("https://agents.example:443", true),
            ("http://127.0.0.1:8788", false),
            ("http://127.0.0.1", false),
            ("https://127.0.0.1:8787", false),
            ("http://evil.example:8787", false),
            ("http://localhost.evil.example:8787", false),
            ("http://agents.example", false),
            ("https://agents.example:8443", false),
            ("http://10.0.0.1:8787", false),
            ("null", false),
            ("http://127.0.0.1:8787/", false),
            ("", false),
        ];
        for (value, admitted) in table {
            assert_eq!(policy.admits(value.as_bytes()), *admitted, "{value}");
        }
        assert!(!policy.admits(b"http://127.0.0.1:8787\xff"));
    }

    #[test]
    fn a_public_listener_admits_its_own_address_and_the_allowlist_only() {
        let v4 = OriginPolicy::new("192.0.2.7:8787".parse().unwrap(), Vec::new());
        assert!(v4.admits(b"http://192.0.2.7:8787"));
        assert!(!v4.admits(b"http://127.0.0.1:8787"));
        assert!(!v4.admits(b"http://localhost:8787"));
        assert!(!v4.admits(b"https://192.0.2.7:8787"));
        assert!(!v4.admits(b"http://192.0.2.8:8787"));
        let v6 = OriginPolicy::new(
            "[2001:db8::7]:8787".parse().unwrap(),
            vec![origin("https://agents.example")],
        );
        assert!(v6.admits(b"http://[2001:DB8:0::7]:8787"));
        assert!(!v6.admits(b"http://localhost:8787"));
        let v6_loopback = OriginPolicy::new("[::1]:8787".parse().unwrap(), Vec::new());
        assert!(v6_loopback.admits(b"http://[::1]:8787"));
        assert!(v6_loopback.admits(b"http://localhost:8787"));
        assert!(!v6_loopback.admits(b"http://127.0.0.1:8787"));
        let other_loopback = OriginPolicy::new("127.0.0.5:8787".parse().unwrap(), Vec::new());
        assert!(other_loopback.admits(b"http://127.0.0.5:8787"));
        assert!(!other_loopback.admits(b"http://localhost:8787"));
        assert!(v6.admits(b"https://agents.example"));
        assert!(!v6.admits(b"http://[::1]:8787"));
    }

    #[test]
    fn cross_site_requests_are_refused_by_origin_or_fetch_metadata() {
        let policy = loopback_policy();
        let table: &[(Headers, Result<(), CrossSite>)] = &[
            (&[], Ok(())),
            (&[("origin", "http://localhost:8787")], Ok(())),
            (&[("origin", "https://agents.example")], Ok(())),
            (&[("sec-fetch-site", "none")], Ok(())),
            (&[("sec-fetch-site", "same-origin")], Ok(())),
            (
                &[("sec-fetch-site", "same-site")],
                Err(CrossSite::FetchSite),
            ),
            (&[("sec-fetch-site", " Same-Origin ")], Ok(())),
            (
                &[("sec-fetch-site", "anything-else")],
                Err(CrossSite::FetchSite),
            ),
            (
                &[("origin", "https://evil.example")],
                Err(CrossSite::Origin),
            ),
            (&[("origin", "null")], Err(CrossSite::Origin)),
            (
                &[("sec-fetch-site", "cross-site")],
                Err(CrossSite::FetchSite),
            ),
            (
                &[("sec-fetch-site", "Cross-Site")],
                Err(CrossSite::FetchSite),
            ),
            (
                &[
                    ("origin", "https://evil.example"),
                    ("sec-fetch-site", "same-site"),
                ],
                Err(CrossSite::Origin),
            ),
            (
                &[
                    ("origin", "https://evil.example"),
                    ("sec-fetch-site", "none"),
                ],
                Err(CrossSite::Origin),
            ),
            // An allowed page on another site always says cross-site.
            (
                &[
                    ("origin", "https://agents.example"),
                    ("sec-fetch-site", "cross-site"),
                ],
                Ok(()),
            ),
            // Every Origin must be admitted.
            (
                &[
                    ("origin", "http://localhost:8787"),
                    ("origin", "https://evil.example"),
                ],
                Err(CrossSite::Origin),
            ),
            (
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("sec-fetch-site", "cross-site"),
                ],
                Err(CrossSite::FetchSite),
            ),
        ];
        for (pairs, expected) in table {
            assert_eq!(policy.check(&headers(pairs)), *expected, "{pairs:?}");
        }
    }

    #[test]
    fn the_loopback_names_are_those_of_the_host_check() {
        for name in [
            "localhost",
            "LocalHost",
            "127.0.0.1",
            "127.9.9.9",
            "[::1]",
            "::1",
        ] {
            assert!(names_loopback(name), "{name}");
        }
        for name in ["evil.example", "10.0.0.1", "[::2]", "localhost.example", ""] {
            assert!(!names_loopback(name), "{name}");
        }
    }
}
