//! Pinned connections (FR-WF-06a, FR-WF-DNS-01, FR-WF-DNS-02, FR-WF-BSSR-TLS-01).
//!
//! The caller hands over the addresses `ssrf::authorize` allowed, already in the
//! FR-WF-DNS-01 order. This module connects to those addresses and nothing else:
//! it never resolves a name for the target, so a rebinding DNS answer can not
//! redirect a connection. At most `max_dns_attempts` addresses are tried; a TCP or
//! TLS failure moves on to the next one, and when every attempt failed the error is
//! the first attempt's, with `details.attempted_ips` listing all of them.
//!
//! # Fair shares of the connect budget
//!
//! Every attempt runs under the fetch's one deadline, but a TCP connect attempt
//! may use only its fair share of what is left: `remaining / attempts_left`,
//! where `attempts_left` counts the addresses still to try within
//! `max_dns_attempts`, this one included ([`connect_share`]). Without it a host
//! whose first address silently drops SYNs would spend the whole budget there
//! and its second, working address would never be tried. Shares are computed
//! afresh before each attempt, so time a quick failure leaves unused goes to the
//! later addresses, and the last attempt gets all that remains.
//!
//! - An attempt whose share runs out while the budget has not failed like any
//!   other address: `network` with `connect_timed_out` (the token
//!   [`io_error_token`](super::io_error::io_error_token) gives `TimedOut`), and the next address is tried.
//! - When the budget itself runs out (the deadline passes, or the last attempt's
//!   share, which is the rest of the budget, runs out) the fetch fails with
//!   `timeout`, phase `connect`, as soon as it happens; earlier attempts' errors
//!   are not reported. So "first address timed out on its share, second hit the
//!   deadline" is `timeout`/`connect`, not the first attempt's
//!   `connect_timed_out`: the budget was spent, and that is what the caller
//!   needs to know (the FR-WF-DNS-01 first-error rule covers attempts that all
//!   failed within the budget).
//! - The TLS handshake is not shared out: it runs under the fetch's deadline, and
//!   a deadline hit there is `timeout` with phase `tls`. A peer that accepted TCP
//!   is reachable, and a handshake cut short by a share would turn a slow but
//!   working server into a failure.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::io_error::io_error_token;
use super::proxy::{self, ProxyEndpoint};
use super::tls::{self, HandshakeFailure};
use crate::budget::Budget;
use crate::canonical_url::CanonicalUrl;
use crate::error::{FetchError, TimeoutPhase};

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
    /// Each TCP attempt gets its fair share of the budget (module doc); running
    /// out of a share fails only that address. A deadline hit is final (`timeout`
    /// with phase `connect` or `tls`): no later address could do better.
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
        let attempts = addresses.len().min(limit);
        for (index, ip) in addresses.iter().take(limit).enumerate() {
            attempted.push(*ip);
            let target = SocketAddr::new(*ip, url.port());
            let tcp = self.open_within(target, budget, attempts - index).await?;
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
        Err(error.with_attempted_ips(attempted))
    }

    /// [`Dialer::open`] within this attempt's share of `budget`, `attempts_left`
    /// counting this one. The inner error is this address's failure (its share ran
    /// out: `connect_timed_out`); the outer one is the budget's `timeout`.
    async fn open_within(
        &self,
        target: SocketAddr,
        budget: &Budget,
        attempts_left: usize,
    ) -> Result<Result<TcpStream, String>, FetchError> {
        let share = connect_share(budget.remaining(), attempts_left);
        let attempt = budget.run(TimeoutPhase::Connect, self.open(target));
        match tokio::time::timeout(share, attempt).await {
            Ok(outcome) => outcome,
            // The last share is the rest of the budget: running out of it is the
            // deadline, whichever timer noticed first.
            Err(_) if attempts_left <= 1 || budget.is_spent() => {
                Err(budget.expired(TimeoutPhase::Connect))
            }
            Err(_) => Ok(Err(io_error_token(&io::ErrorKind::TimedOut.into()))),
        }
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

/// The time one TCP connect attempt may take: an equal share of what is left of
/// the budget among the attempts still to make, this one included, so the last
/// attempt gets all of it (module doc). `attempts_left` of zero counts as one.
fn connect_share(remaining: Duration, attempts_left: usize) -> Duration {
    let attempts_left = u32::try_from(attempts_left.max(1)).unwrap_or(u32::MAX);
    remaining / attempts_left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_share_splits_what_is_left_among_the_attempts_left() {
        let ms = Duration::from_millis;
        // (remaining, attempts left including this one, share)
        let table = [
            (ms(2000), 2, ms(1000)),
            (ms(1000), 1, ms(1000)),
            (ms(9000), 3, ms(3000)),
            (ms(20_000), 10, ms(2000)),
            (ms(1000), 3, Duration::from_nanos(333_333_333)),
            (ms(0), 2, ms(0)),
            (ms(0), 1, ms(0)),
            (ms(1500), 0, ms(1500)),
        ];
        for (remaining, attempts_left, share) in table {
            assert_eq!(
                connect_share(remaining, attempts_left),
                share,
                "{remaining:?} among {attempts_left}"
            );
        }
    }

    #[test]
    fn first_attempt_error_decides_the_code() {
        let tls = AttemptError::Tls("bad cert".to_owned()).into_fetch_error();
        assert_eq!(tls.details_json()["error"], "tls_validation_failed");
        let net = AttemptError::Network("connection_refused".to_owned()).into_fetch_error();
        assert_eq!(net.details_json()["error"], "connection_refused");
    }
}
