//! The opt-in system proxy (FR-WF-10d, FR-WF-10d1).
//!
//! Environment proxies are ignored unless `use_system_proxy = true`. When they are
//! used, nothing about the target's validation changes: the target URL is still
//! authorized (port, SSRF, one resolution) exactly as without a proxy, and the
//! tunnel is an HTTP `CONNECT` to the *validated IP*:port, so the proxy never gets
//! a name it could resolve to somewhere else. TLS then runs end to end through the
//! tunnel against the URL's host name. The proxy host itself is exempt from SSRF
//! checks (10d1): the operator named it.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::canonical_url::{CanonicalUrl, TargetHost};

/// Upper bound on a proxy's reply to `CONNECT`; a proxy that says more is broken.
const MAX_CONNECT_REPLY: usize = 8 * 1024;

/// Proxies read from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, in
/// either case; the lowercase name wins when both are set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProxyConfig {
    http: Option<ProxyEndpoint>,
    https: Option<ProxyEndpoint>,
    no_proxy: Vec<NoProxyEntry>,
}

/// One proxy: where to send `CONNECT`, and the credentials from its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProxyEndpoint {
    /// An `http://` proxy.
    Http {
        /// Proxy host name or address (not SSRF-checked, FR-WF-10d1).
        host: String,
        /// Proxy port.
        port: u16,
        /// `Proxy-Authorization` value, from the proxy URL's userinfo.
        authorization: Option<String>,
    },
    /// A proxy URL this client cannot use (e.g. `socks5://`): every fetch that would
    /// go through it fails rather than silently going direct.
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum NoProxyEntry {
    All,
    Net(IpNet),
    Domain(String),
}

impl ProxyConfig {
    /// Reads the proxy variables through `env` (a seam so tests need not touch the
    /// process environment). `None` when no proxy variable is set.
    pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<ProxyConfig> {
        let var = |name: &str| {
            env(&name.to_ascii_lowercase())
                .or_else(|| env(name))
                .filter(|value| !value.trim().is_empty())
        };
        let config = ProxyConfig {
            http: var("HTTP_PROXY").map(|v| ProxyEndpoint::parse(&v)),
            https: var("HTTPS_PROXY").map(|v| ProxyEndpoint::parse(&v)),
            no_proxy: var("NO_PROXY")
                .map(|v| parse_no_proxy(&v))
                .unwrap_or_default(),
        };
        (config.http.is_some() || config.https.is_some()).then_some(config)
    }

    /// The proxy for `url`, if any: by scheme, unless `NO_PROXY` excludes the host.
    pub(crate) fn for_url(&self, url: &CanonicalUrl) -> Option<&ProxyEndpoint> {
        let endpoint = match url.scheme() {
            "https" => self.https.as_ref(),
            _ => self.http.as_ref(),
        }?;
        let host = url.host();
        let excluded = self.no_proxy.iter().any(|entry| match (entry, &host) {
            (NoProxyEntry::All, _) => true,
            (NoProxyEntry::Net(net), TargetHost::Ip(ip)) => net.contains(ip),
            (NoProxyEntry::Domain(domain), TargetHost::Domain(name)) => {
                name == domain
                    || name
                        .strip_suffix(domain.as_str())
                        .is_some_and(|prefix| prefix.ends_with('.'))
            }
            _ => false,
        });
        (!excluded).then_some(endpoint)
    }
}

impl ProxyEndpoint {
    fn parse(value: &str) -> ProxyEndpoint {
        let value = value.trim();
        let with_scheme = if value.contains("://") {
            value.to_owned()
        } else {
            format!("http://{value}")
        };
        let Ok(url) = url::Url::parse(&with_scheme) else {
            return ProxyEndpoint::Unsupported("unparsable proxy URL".to_owned());
        };
        if url.scheme() != "http" {
            return ProxyEndpoint::Unsupported(format!("proxy scheme `{}`", url.scheme()));
        }
        let Some(host) = url.host_str() else {
            return ProxyEndpoint::Unsupported("proxy URL without a host".to_owned());
        };
        let authorization = (!url.username().is_empty()).then(|| {
            let user = percent_decode(url.username());
            let password = percent_decode(url.password().unwrap_or(""));
            format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
        });
        ProxyEndpoint::Http {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port: url.port_or_known_default().unwrap_or(80),
            authorization,
        }
    }
}

fn parse_no_proxy(value: &str) -> Vec<NoProxyEntry> {
    value
        .split([',', ' '])
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            if entry == "*" {
                return NoProxyEntry::All;
            }
            if let Ok(net) = entry.parse::<IpNet>() {
                return NoProxyEntry::Net(net);
            }
            let bare = entry.trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = bare.parse::<IpAddr>() {
                return NoProxyEntry::Net(IpNet::from(ip));
            }
            let host = entry.rsplit_once(':').map_or(entry, |(host, _port)| host);
            let domain = host.trim_start_matches("*.").trim_start_matches('.');
            NoProxyEntry::Domain(domain.to_ascii_lowercase())
        })
        .collect()
}

/// Opens a tunnel through `endpoint` to `target` (the validated address and the URL
/// port). On failure returns the `details.error` text for the attempt.
pub(crate) async fn tunnel(
    endpoint: &ProxyEndpoint,
    target: SocketAddr,
) -> Result<TcpStream, String> {
    let (host, port, authorization) = match endpoint {
        ProxyEndpoint::Http {
            host,
            port,
            authorization,
        } => (host, *port, authorization),
        ProxyEndpoint::Unsupported(reason) => return Err(format!("unsupported_proxy: {reason}")),
    };
    let mut stream = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| {
            format!(
                "proxy_connect_failed: {}",
                super::io_error::io_error_token(&e)
            )
        })?;
    let mut request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(value) = authorization {
        request.push_str(&format!("Proxy-Authorization: {value}\r\n"));
    }
    request.push_str("\r\n");
    let io_failed = |e: std::io::Error| {
        format!(
            "proxy_connect_failed: {}",
            super::io_error::io_error_token(&e)
        )
    };
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(io_failed)?;
    // Byte by byte: reading past the blank line would swallow the server's first
    // bytes, and the reply is a few dozen bytes.
    let mut reply = Vec::with_capacity(256);
    while !reply.ends_with(b"\r\n\r\n") {
        if reply.len() >= MAX_CONNECT_REPLY {
            return Err("proxy_connect_failed: reply too long".to_owned());
        }
        let byte = stream.read_u8().await.map_err(io_failed)?;
        reply.push(byte);
    }
    match connect_status(&reply) {
        Some(status) if (200..300).contains(&status) => Ok(stream),
        Some(status) => Err(format!("proxy_connect_failed: status {status}")),
        None => Err("proxy_connect_failed: malformed reply".to_owned()),
    }
}

/// The status code of a `CONNECT` reply's status line.
fn connect_status(reply: &[u8]) -> Option<u16> {
    let line = reply.split(|b| *b == b'\n').next()?;
    let text = std::str::from_utf8(line).ok()?;
    let mut parts = text.split_whitespace();
    parts
        .next()
        .filter(|version| version.starts_with("HTTP/"))?;
    parts.next()?.parse().ok()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648), for `Proxy-Authorization: Basic`.
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (k, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn base64_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"user:p@ss"), "dXNlcjpwQHNz");
    }

    #[test]
    fn no_variables_means_no_proxy() {
        assert_eq!(ProxyConfig::from_env(&env(&[])), None);
        assert_eq!(ProxyConfig::from_env(&env(&[("HTTP_PROXY", " ")])), None);
    }

    #[test]
    fn scheme_selects_the_proxy_and_lowercase_wins() {
        let config = ProxyConfig::from_env(&env(&[
            ("HTTP_PROXY", "http://upper:1"),
            ("http_proxy", "lower:3128"),
            ("HTTPS_PROXY", "http://u%40x:p%3Aw@secure:8080"),
        ]))
        .unwrap();
        let http = CanonicalUrl::parse("http://a.example/").unwrap();
        let https = CanonicalUrl::parse("https://a.example/").unwrap();
        assert_eq!(
            config.for_url(&http),
            Some(&ProxyEndpoint::Http {
                host: "lower".to_owned(),
                port: 3128,
                authorization: None
            })
        );
        assert_eq!(
            config.for_url(&https),
            Some(&ProxyEndpoint::Http {
                host: "secure".to_owned(),
                port: 8080,
                authorization: Some(format!("Basic {}", base64(b"u@x:p:w")))
            })
        );
    }

    #[test]
    fn no_proxy_excludes_hosts_suffixes_and_nets() {
        let config = ProxyConfig::from_env(&env(&[
            ("HTTPS_PROXY", "http://proxy:3128"),
            (
                "NO_PROXY",
                "internal.example, .corp.test,10.0.0.0/8 ,[::1],*.wild.test",
            ),
        ]))
        .unwrap();
        let proxied = |url: &str| config.for_url(&CanonicalUrl::parse(url).unwrap()).is_some();
        assert!(!proxied("https://internal.example/"));
        assert!(!proxied("https://a.internal.example/"));
        assert!(proxied("https://notinternal.example/"));
        assert!(!proxied("https://x.corp.test/"));
        assert!(!proxied("https://10.1.2.3/"));
        assert!(!proxied("https://[::1]/"));
        assert!(!proxied("https://a.wild.test/"));
        assert!(proxied("https://public.example/"));
        let all =
            ProxyConfig::from_env(&env(&[("HTTPS_PROXY", "p:1"), ("no_proxy", "*")])).unwrap();
        assert!(
            all.for_url(&CanonicalUrl::parse("https://x.example/").unwrap())
                .is_none()
        );
    }

    #[test]
    fn unsupported_proxy_schemes_are_kept_as_failures() {
        let config = ProxyConfig::from_env(&env(&[("HTTPS_PROXY", "socks5://p:1080")])).unwrap();
        let url = CanonicalUrl::parse("https://a.example/").unwrap();
        assert!(matches!(
            config.for_url(&url),
            Some(ProxyEndpoint::Unsupported(_))
        ));
    }

    #[test]
    fn connect_reply_status() {
        assert_eq!(
            connect_status(b"HTTP/1.1 200 Connection established\r\n\r\n"),
            Some(200)
        );
        assert_eq!(connect_status(b"HTTP/1.0 407 Auth\r\n\r\n"), Some(407));
        assert_eq!(connect_status(b"SSH-2.0\r\n\r\n"), None);
    }
}
