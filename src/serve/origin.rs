//! Cross-site callers (issue 28, item 2): a web page the user visits must not be
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

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use http::HeaderMap;
use http::header::{HeaderName, ORIGIN};

/// `Sec-Fetch-Site` (Fetch Metadata), which `http` has no constant for.
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// A web origin, `scheme://host[:port]` (RFC 6454), as `Origin` carries it and as
/// `[tools.webfetch.serve] allowed_origins` lists it (issue 28): http or https,
/// scheme and host lowercase, an IPv6 host in brackets in its canonical text,
/// and the effective port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WebOrigin {
    scheme: &'static str,
    host: String,
    port: u16,
}

/// A value that is not a [`WebOrigin`]; the message names the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{value:?} is not an origin ({reason}): write scheme://host[:port], http or https, \
     with nothing after it"
)]
pub struct OriginError {
    value: String,
    reason: &'static str,
}

impl WebOrigin {
    /// Parses a serialized origin (issue 28): `http` or `https`, `://`, a host (a
    /// name, an IPv4 address or a bracketed IPv6 address) and an optional port,
    /// with no userinfo, path, query or fragment. `null` is not an origin.
    pub fn parse(text: &str) -> Result<WebOrigin, OriginError> {
        let fail = |reason| OriginError {
            value: text.to_owned(),
            reason,
        };
        let (scheme, authority) = text.split_once("://").ok_or(fail("no scheme://"))?;
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            "http"
        } else if scheme.eq_ignore_ascii_case("https") {
            "https"
        } else {
            return Err(fail("the scheme is not http or https"));
        };
        let (host, port) = split_authority(authority).map_err(fail)?;
        let port = match port {
            None => default_port(scheme),
            Some(digits) => parse_port(digits).ok_or(fail("the port is not 1..=65535"))?,
        };
        Ok(WebOrigin { scheme, host, port })
    }

    /// `http://ADDR:PORT`: the origin of a listen address itself.
    fn of_listener(addr: SocketAddr) -> WebOrigin {
        WebOrigin {
            scheme: "http",
            host: host_text(addr.ip()),
            port: addr.port(),
        }
    }
}

impl fmt::Display for WebOrigin {
    /// `scheme://host`, with `:port` unless it is the scheme's default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if self.port != default_port(self.scheme) {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// The host (lowercase; IPv6 bracketed and canonical) and the port digits of an
/// origin's authority.
fn split_authority(authority: &str) -> Result<(String, Option<&str>), &'static str> {
    let (host, rest) = match authority.strip_prefix('[') {
        Some(inner) => {
            let (address, rest) = inner.split_once(']').ok_or("an unclosed [")?;
            let ip: Ipv6Addr = address.parse().map_err(|_| "not an IPv6 address")?;
            (host_text(IpAddr::V6(ip)), rest)
        }
        None => {
            let end = authority.find(':').unwrap_or(authority.len());
            let (name, rest) = authority.split_at(end);
            if name.is_empty() {
                return Err("no host");
            }
            if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
            {
                return Err("the host has a character an origin's host can not have");
            }
            (name.to_ascii_lowercase(), rest)
        }
    };
    match rest {
        "" => Ok((host, None)),
        _ => match rest.strip_prefix(':') {
            Some(digits) => Ok((host, Some(digits))),
            None => Err("something follows the host"),
        },
    }
}

/// A port of one to five digits, 1..=65535.
fn parse_port(digits: &str) -> Option<u16> {
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|port| *port != 0)
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// An address as an origin's host: IPv6 in brackets.
fn host_text(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// Whether a `Host` or origin host names loopback: `localhost` (any case), an
/// IPv4 loopback address or `[::1]`. The one rule of the loopback `Host` check
/// (DNS rebinding, issue 16) and of a loopback listener's own origins.
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

/// Which browser callers a listener admits (issue 28, item 2): see the module
/// documentation.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    /// The bound address: its port, and its IP for a non-loopback listener.
    bound: SocketAddr,
    /// `[tools.webfetch.serve] allowed_origins`.
    allowed: Vec<WebOrigin>,
}

impl OriginPolicy {
    /// The policy of a listener bound to `bound` with the configured extra origins.
    pub(crate) fn new(bound: SocketAddr, allowed: Vec<WebOrigin>) -> OriginPolicy {
        OriginPolicy { bound, allowed }
    }

    /// Whether `origin` is one of the listener's own origins, exactly: plain
    /// http on the bound port at the bound address, or at `localhost` for a
    /// listener on `127.0.0.1` or `::1`.
    fn is_own(&self, origin: &WebOrigin) -> bool {
        if *origin == WebOrigin::of_listener(self.bound) {
            return true;
        }
        let localhost = WebOrigin {
            scheme: "http",
            host: "localhost".to_owned(),
            port: self.bound.port(),
        };
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
            .and_then(|text| WebOrigin::parse(text).ok())
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

    fn origin(text: &str) -> WebOrigin {
        WebOrigin::parse(text).unwrap()
    }

    #[test]
    fn origins_parse_to_lowercase_tuples_with_the_effective_port() {
        let cases: &[(&str, &str)] = &[
            ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
            ("HTTP://LocalHost:8787", "http://localhost:8787"),
            ("https://agents.example", "https://agents.example"),
            ("https://agents.example:443", "https://agents.example"),
            ("http://agents.example:80", "http://agents.example"),
            ("https://agents.example:8443", "https://agents.example:8443"),
            ("http://[::1]:8787", "http://[::1]:8787"),
            ("http://[0:0:0:0:0:0:0:1]:8787", "http://[::1]:8787"),
            ("http://[FE80::1]", "http://[fe80::1]"),
            (
                "https://xn--bcher-kva.example",
                "https://xn--bcher-kva.example",
            ),
        ];
        for (text, shown) in cases {
            assert_eq!(origin(text).to_string(), *shown, "{text}");
        }
        assert_eq!(origin("https://a.example:443"), origin("HTTPS://A.example"));
        assert_ne!(origin("http://a.example"), origin("https://a.example"));
        assert_ne!(origin("http://a.example:8080"), origin("http://a.example"));
    }

    #[test]
    fn what_is_not_an_origin_is_refused_naming_the_value() {
        for text in [
            "null",
            "",
            "agents.example",
            "ftp://agents.example",
            "chrome-extension://abc",
            "https://",
            "https://agents.example/",
            "https://agents.example/path",
            "https://agents.example?q",
            "https://agents.example#f",
            "https://user@agents.example",
            "https://agents.example:",
            "https://agents.example:0",
            "https://agents.example:65536",
            "https://agents.example:80x",
            "https://agents.example:+80",
            "https://[::1",
            "https://[nope]:80",
            "https://[::1]x",
            "https://agents example",
            "https://agents.example ",
            "https://b\u{fc}cher.example",
        ] {
            let error = WebOrigin::parse(text).unwrap_err();
            assert!(error.to_string().contains(&format!("{text:?}")), "{error}");
        }
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

    proptest::proptest! {
        /// Any text: a parse or an error, never a panic; a parsed origin
        /// re-parses to itself from its display.
        #[test]
        fn parsing_never_panics_and_round_trips(
            text in proptest::prop_oneof![
                "\\PC{0,40}",
                "(http|HTTPS|ftp)://(\\[[0-9a-fA-F:.]{0,12}\\]|[a-zA-Z0-9.\\-]{0,10})(:[0-9]{0,6})?/?",
            ],
        ) {
            if let Ok(parsed) = WebOrigin::parse(&text) {
                proptest::prop_assert_eq!(WebOrigin::parse(&parsed.to_string()), Ok(parsed));
            }
        }
    }
}
