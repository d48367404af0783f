//! Pinned connections (FR-WF-06a, FR-WF-DNS-01, FR-WF-DNS-02, FR-WF-BSSR-TLS-01).
//!
//! The caller hands over the addresses `ssrf::authorize` allowed, already in the
//! FR-WF-DNS-01 order. This module connects to those addresses and nothing else:
//! it never resolves a name for the target, so a rebinding DNS answer can not
//! redirect a connection. At most `max_dns_attempts` addresses are tried; a TCP or
//! TLS failure moves on to the next one, and when every attempt failed the error is
//! the first attempt's, with `details.attempted_ips` listing all of them.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::proxy::{self, ProxyEndpoint};
use super::tls::{self, HandshakeFailure};
use crate::budget::Budget;
use crate::error::{FetchError, TimeoutPhase};
use crate::url::CanonicalUrl;

/// A byte stream hyper can speak HTTP over: plain TCP, a proxy tunnel or TLS.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// An established connection to one validated address.
pub(crate) struct Connected {
    /// The transport.
    pub(crate) io: Box<dyn Io>,
    /// ALPN chose HTTP/2.
    pub(crate) h2: bool,
}

/// Why one attempt failed; the first one becomes the fetch's error.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AttemptError {
    /// TCP connect, proxy tunnel or transport failure: `network` with this text.
    Network(String),
    /// The TLS layer rejected the peer: `network` / `tls_validation_failed`.
    Tls(String),
}

impl AttemptError {
    fn into_fetch_error(self) -> FetchError {
        match self {
            AttemptError::Network(error) => FetchError::network(error),
            AttemptError::Tls(reason) => FetchError::tls_validation_failed(reason),
        }
    }
}

/// What a connection needs besides the addresses.
pub(crate) struct Dialer<'a> {
    /// TLS client (for `https` URLs).
    pub(crate) tls: &'a Arc<rustls::ClientConfig>,
    /// The proxy to tunnel through, when `use_system_proxy` selected one.
    pub(crate) proxy: Option<&'a ProxyEndpoint>,
    /// `max_dns_attempts` (FR-WF-DNS-02).
    pub(crate) max_attempts: u32,
}

impl Dialer<'_> {
    /// Connects to the first address of `addresses` (in order, at most
    /// `max_attempts` of them) that accepts TCP and, for `https`, completes a TLS
    /// handshake verified against the URL's host.
    ///
    /// A deadline hit is final (`timeout` with phase `connect` or `tls`): the
    /// budget is shared, so no later address could do better.
    pub(crate) async fn connect(
        &self,
        url: &CanonicalUrl,
        addresses: &[IpAddr],
        budget: &Budget,
    ) -> Result<Connected, FetchError> {
        let https = url.scheme() == "https";
        let server_name = if https {
            Some(tls::server_name(url)?)
        } else {
            None
        };
        let limit = usize::try_from(self.max_attempts.max(1)).unwrap_or(usize::MAX);
        let mut attempted = Vec::new();
        let mut first_error = None;
        for ip in addresses.iter().take(limit) {
            attempted.push(*ip);
            let target = SocketAddr::new(*ip, url.port());
            let tcp = budget.run(TimeoutPhase::Connect, self.open(target)).await?;
            let tcp = match tcp {
                Ok(tcp) => tcp,
                Err(error) => {
                    first_error.get_or_insert(AttemptError::Network(error));
                    continue;
                }
            };
            // Small requests and interactive latency: no Nagle delay.
            let _ = tcp.set_nodelay(true);
            let Some(name) = &server_name else {
                return Ok(Connected {
                    io: Box::new(tcp),
                    h2: false,
                });
            };
            let connector = TlsConnector::from(Arc::clone(self.tls));
            let handshake = connector.connect(name.clone(), tcp);
            match budget.run(TimeoutPhase::Tls, handshake).await? {
                Ok(stream) => {
                    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
                    return Ok(Connected {
                        io: Box::new(stream),
                        h2,
                    });
                }
                Err(error) => {
                    let failure = match tls::classify(&error) {
                        HandshakeFailure::Rejected(reason) => AttemptError::Tls(reason),
                        HandshakeFailure::Io(text) => AttemptError::Network(text),
                    };
                    first_error.get_or_insert(failure);
                }
            }
        }
        let error = match first_error {
            Some(error) => error.into_fetch_error(),
            // `authorize` never returns an empty set; stay safe if a validator does.
            None => FetchError::dns_failed(url.host_str(), "no addresses"),
        };
        let ips: Vec<Value> = attempted
            .iter()
            .map(|ip| Value::String(ip.to_string()))
            .collect();
        Err(error.with_detail("attempted_ips", ips))
    }

    /// TCP to `target`, directly or through the proxy's `CONNECT` tunnel.
    async fn open(&self, target: SocketAddr) -> Result<TcpStream, String> {
        match self.proxy {
            Some(endpoint) => proxy::tunnel(endpoint, target).await,
            None => TcpStream::connect(target)
                .await
                .map_err(|e| io_error_token(&e)),
        }
    }
}

/// A stable `details.error` text for a socket error: a snake_case token for the
/// common kinds, the OS message otherwise.
pub(crate) fn io_error_token(error: &io::Error) -> String {
    let token = match error.kind() {
        io::ErrorKind::ConnectionRefused => "connection_refused",
        io::ErrorKind::ConnectionReset => "connection_reset",
        io::ErrorKind::ConnectionAborted => "connection_aborted",
        io::ErrorKind::HostUnreachable => "host_unreachable",
        io::ErrorKind::NetworkUnreachable => "network_unreachable",
        io::ErrorKind::AddrNotAvailable => "address_not_available",
        io::ErrorKind::TimedOut => "connect_timed_out",
        io::ErrorKind::UnexpectedEof => "connection_closed",
        io::ErrorKind::BrokenPipe => "broken_pipe",
        _ => return error.to_string(),
    };
    token.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_tokens_are_stable() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(io_error_token(&refused), "connection_refused");
        let other = io::Error::other("weird");
        assert_eq!(io_error_token(&other), "weird");
    }

    #[test]
    fn first_attempt_error_decides_the_code() {
        let tls = AttemptError::Tls("bad cert".to_owned()).into_fetch_error();
        assert_eq!(tls.details["error"], "tls_validation_failed");
        let net = AttemptError::Network("connection_refused".to_owned()).into_fetch_error();
        assert_eq!(net.details["error"], "connection_refused");
    }
}
