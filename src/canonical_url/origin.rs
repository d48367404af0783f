//! The origin of a URL, `scheme://host[:port]` (RFC 6454): what the robots.txt
//! cache and politeness are kept per (FR-WF-08, 05f), and what a browser names in
//! its `Origin` header, which `webfetch serve` checks against
//! `[tools.webfetch.serve] allowed_origins`.
//!
//! Origins are compared as tuples: http or https, the host lowercase (an IPv6
//! address in brackets in its canonical text), and the effective port, the
//! scheme's default when none is written. The text form leaves the default port
//! out (SRD-READINGS 13).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use super::CanonicalUrl;

/// A web origin, `scheme://host[:port]`: of a canonical URL
/// ([`CanonicalUrl::origin`]), or parsed from text as an `Origin` header and
/// `[tools.webfetch.serve] allowed_origins` carry it ([`Origin::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    scheme: &'static str,
    host: String,
    port: u16,
}

/// A value that is not an [`Origin`]; the message names the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{value:?} is not an origin ({reason}): write scheme://host[:port], http or https, \
     with nothing after it"
)]
pub struct OriginError {
    value: String,
    reason: &'static str,
}

impl Origin {
    /// Parses a serialized origin: `http` or `https`, `://`, a host (a name, an
    /// IPv4 address or a bracketed IPv6 address) and an optional port, with no
    /// userinfo, path, query or fragment. `null` is not an origin.
    pub fn parse(text: &str) -> Result<Origin, OriginError> {
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
        Ok(Origin { scheme, host, port })
    }

    /// The origin of a canonical URL: its scheme, its host as the URL has it
    /// and its effective port.
    pub(super) fn of_url(url: &CanonicalUrl) -> Origin {
        Origin {
            scheme: if url.scheme() == "https" {
                "https"
            } else {
                "http"
            },
            host: url.host_str().to_owned(),
            port: url.port(),
        }
    }

    /// `http://ADDR:PORT`: the origin of a listen address itself.
    pub(crate) fn of_listener(addr: SocketAddr) -> Origin {
        Origin {
            scheme: "http",
            host: host_text(addr.ip()),
            port: addr.port(),
        }
    }

    /// `http://localhost:PORT`.
    pub(crate) fn localhost(port: u16) -> Origin {
        Origin {
            scheme: "http",
            host: "localhost".to_owned(),
            port,
        }
    }

    /// The scheme: `"http"` or `"https"`.
    pub fn scheme(&self) -> &str {
        self.scheme
    }

    /// The host (IPv6 in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The effective port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `{scheme}://{host}[:{port}]/robots.txt`, port omitted when default (FR-WF-08).
    pub fn robots_url(&self) -> CanonicalUrl {
        CanonicalUrl::parse(&format!("{self}/robots.txt"))
            .expect("an origin of a canonical URL is valid")
    }
}

impl fmt::Display for Origin {
    /// `scheme://host`, with `:port` only when not the default (SRD-READINGS 13).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(text: &str) -> Origin {
        Origin::parse(text).unwrap()
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
            let error = Origin::parse(text).unwrap_err();
            assert!(error.to_string().contains(&format!("{text:?}")), "{error}");
        }
    }

    #[test]
    fn a_urls_origin_is_the_one_its_text_parses_to() {
        for url in [
            "http://Example.com:8080/x?y",
            "https://example.com/x",
            "https://example.com:443/",
            "http://[::1]:8787/",
            "http://127.0.0.1/",
            "https://xn--bcher-kva.example/",
        ] {
            let of_url = CanonicalUrl::parse(url).unwrap().origin();
            assert_eq!(Origin::parse(&of_url.to_string()), Ok(of_url), "{url}");
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
            if let Ok(parsed) = Origin::parse(&text) {
                proptest::prop_assert_eq!(Origin::parse(&parsed.to_string()), Ok(parsed));
            }
        }
    }
}
