//! TLS for pinned connections (FR-WF-BSSR-TLS-01, FR-WF-ERR-TLS-01).
//!
//! The TCP socket goes to a validated IP, but the handshake names the URL's host:
//! SNI, certificate verification and ALPN all use it, so pinning never weakens
//! hostname verification. Roots are the Mozilla set (webpki-roots) plus any extra
//! roots the embedder trusts; the crypto provider is rustls' ring provider, chosen
//! explicitly so no process-wide default is needed.

use std::io;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use crate::canonical_url::{CanonicalUrl, TargetHost};
use crate::error::FetchError;

/// ALPN offers, most preferred first: HTTP/2, then HTTP/1.1.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Builds the client configuration: webpki roots plus `extra_roots`, safe default
/// protocol versions, no client authentication, ALPN h2 and http/1.1.
pub(crate) fn client_config(
    extra_roots: &[CertificateDer<'static>],
) -> Result<ClientConfig, FetchError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for der in extra_roots {
        roots
            .add(der.clone())
            .map_err(|e| FetchError::internal(format!("invalid root certificate: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| FetchError::internal(format!("TLS configuration: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// The name the handshake verifies: the URL's host, never the pinned address
/// (FR-WF-BSSR-TLS-01). An IP-literal URL verifies against an IP SAN.
pub(crate) fn server_name(url: &CanonicalUrl) -> Result<ServerName<'static>, FetchError> {
    match url.host() {
        TargetHost::Ip(ip) => Ok(ServerName::IpAddress(ip.into())),
        TargetHost::Domain(name) => ServerName::try_from(name).map_err(|e| {
            FetchError::invalid_host(url.host_str(), format!("not a TLS server name: {e}"))
        }),
    }
}

/// How a failed handshake is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HandshakeFailure {
    /// The TLS layer refused the peer: a bad certificate, a name mismatch, an alert
    /// or a protocol violation. Appendix F.2 maps every TLS handshake failure to
    /// `tls_validation_failed`; the reason goes into the message only.
    Rejected(String),
    /// The transport failed under the handshake (reset, EOF): a plain network error.
    Io(String),
}

/// Sorts a handshake error into [`HandshakeFailure`]: tokio-rustls wraps the
/// `rustls::Error` in an `io::Error` (kind `InvalidData`).
pub(crate) fn classify(error: &io::Error) -> HandshakeFailure {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(tls_error) => HandshakeFailure::Rejected(tls_error.to_string()),
        None => HandshakeFailure::Io(super::io_error::io_error_token(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_name_is_the_url_host() {
        let url = CanonicalUrl::parse("https://Example.COM:8443/x").unwrap();
        assert_eq!(
            server_name(&url).unwrap(),
            ServerName::try_from("example.com").unwrap()
        );
        let literal = CanonicalUrl::parse("https://[2001:db8::1]/").unwrap();
        assert!(matches!(
            server_name(&literal).unwrap(),
            ServerName::IpAddress(_)
        ));
    }

    #[test]
    fn certificate_errors_are_rejections() {
        let error = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert!(matches!(classify(&error), HandshakeFailure::Rejected(_)));
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(
            classify(&reset),
            HandshakeFailure::Io("connection_reset".to_owned())
        );
    }

    #[test]
    fn config_offers_h2_then_http11() {
        let config = client_config(&[]).unwrap();
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}
