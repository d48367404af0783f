//! TLS on pinned connections (FR-WF-BSSR-TLS-01, FR-WF-ERR-TLS-01, FR-WF-ERR-HTTP-02)
//! against local rustls servers with self-signed certificates (rcgen), speaking
//! HTTP/2 or HTTP/1.1 as ALPN decides.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use webfetch::CanonicalUrl;
use webfetch::Settings;
use webfetch::internals::render::{FetchedDocument, fetch_document};
use webfetch::internals::transport::HttpClient;
use webfetch::{ErrorCode, FetchError};

use crate::support::{Config, stub};

/// What the server saw of each request: SNI, ALPN result, and the request's
/// authority (HTTP/2 `:authority` or HTTP/1.1 `Host`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    sni: Option<String>,
    h2: bool,
    authority: String,
}

struct TlsServer {
    address: SocketAddr,
    certificate: CertificateDer<'static>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// A TLS server with a self-signed certificate for `names`, offering `alpn`,
/// answering every request with `status` and a small HTML body.
async fn tls_server(names: &[&str], alpn: &[&[u8]], status: u16) -> TlsServer {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let certified = rcgen::generate_simple_self_signed(names).unwrap();
    let certificate = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate.clone()], key)
            .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(socket).await else {
                    return;
                };
                let (_, session) = stream.get_ref();
                let sni = session.server_name().map(str::to_owned);
                let h2 = session.alpn_protocol() == Some(b"h2".as_slice());
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let authority = request
                        .uri()
                        .authority()
                        .map(|a| a.to_string())
                        .or_else(|| {
                            request
                                .headers()
                                .get("host")
                                .and_then(|h| h.to_str().ok())
                                .map(str::to_owned)
                        })
                        .unwrap_or_default();
                    log.lock().unwrap().push(Seen {
                        sni: sni.clone(),
                        h2,
                        authority,
                    });
                    async move {
                        let mut response = hyper::Response::new(Full::new(Bytes::from_static(
                            b"<html><p>secure</p></html>",
                        )));
                        *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                        response
                            .headers_mut()
                            .insert("content-type", "text/html".parse().unwrap());
                        Ok::<_, Infallible>(response)
                    }
                });
                let io = TokioIo::new(stream);
                if h2 {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
    TlsServer {
        address,
        certificate,
        seen,
    }
}

fn settings(port: u16) -> Arc<Settings> {
    Arc::new(Config::new(&[port]).timeout(5).settings())
}

fn client(settings: &Arc<Settings>) -> HttpClient {
    HttpClient::new(Arc::clone(settings), Arc::new(stub(settings)))
}

fn trusting(settings: &Arc<Settings>, server: &TlsServer) -> HttpClient {
    client(settings)
        .with_root_certificate(server.certificate.to_vec())
        .unwrap()
}

fn url(server: &TlsServer) -> CanonicalUrl {
    CanonicalUrl::parse(&format!("https://site.test:{}/page", server.address.port())).unwrap()
}

fn deadline() -> Instant {
    Instant::now() + std::time::Duration::from_secs(5)
}

/// Fetches `target` from `server` with a client that trusts its certificate.
async fn fetch_trusted(
    server: &TlsServer,
    target: &CanonicalUrl,
) -> Result<FetchedDocument, FetchError> {
    let settings = settings(server.address.port());
    fetch_document(&trusting(&settings, server), target, deadline(), None, None).await
}

#[tokio::test]
async fn fr_wf_bssr_tls_01_pinned_ip_verified_against_url_host() {
    let server = tls_server(&["site.test"], &[b"h2", b"http/1.1"], 200).await;
    let fetched = fetch_trusted(&server, &url(&server)).await.unwrap();
    assert_eq!(&fetched.body[..], b"<html><p>secure</p></html>");
    assert_eq!(
        *server.seen.lock().unwrap(),
        vec![Seen {
            sni: Some("site.test".to_owned()),
            h2: true,
            authority: format!("site.test:{}", server.address.port()),
        }]
    );
}

#[tokio::test]
async fn t_wf_err_05_untrusted_certificate_is_tls_validation_failed() {
    let server = tls_server(&["site.test"], &[b"http/1.1"], 200).await;
    let settings = settings(server.address.port());
    let error = fetch_document(&client(&settings), &url(&server), deadline(), None, None)
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::Network);
    assert_eq!(error.details_json()["error"], "tls_validation_failed");
    assert_eq!(
        error.details_json()["attempted_ips"],
        serde_json::json!(["127.0.0.1"])
    );
    assert!(error.is_retryable());
    assert!(server.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn t_wf_err_05_certificate_for_another_name_is_refused() {
    // Trusted, but issued for another host: pinning to the right IP must not make
    // the name check optional.
    let server = tls_server(&["other.test"], &[b"http/1.1"], 200).await;
    let error = fetch_trusted(&server, &url(&server)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Network);
    assert_eq!(error.details_json()["error"], "tls_validation_failed");
}

#[tokio::test]
async fn t_wf_err_05_ip_literal_needs_an_ip_certificate() {
    let server = tls_server(&["site.test"], &[b"http/1.1"], 200).await;
    let literal =
        CanonicalUrl::parse(&format!("https://127.0.0.1:{}/", server.address.port())).unwrap();
    let error = fetch_trusted(&server, &literal).await.unwrap_err();
    assert_eq!(error.details_json()["error"], "tls_validation_failed");
}

#[tokio::test]
async fn t_wf_err_06_http2_has_no_reason_phrase() {
    let server = tls_server(&["site.test"], &[b"h2"], 503).await;
    let error = fetch_trusted(&server, &url(&server)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Http5xx);
    assert_eq!(error.details_json()["status"], 503);
    assert_eq!(error.details_json()["status_text"], "");
    assert!(server.seen.lock().unwrap()[0].h2);
}

#[tokio::test]
async fn fr_wf_err_http_02_http11_over_tls_keeps_its_reason_phrase() {
    let server = tls_server(&["site.test"], &[b"http/1.1"], 404).await;
    let error = fetch_trusted(&server, &url(&server)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Http4xx);
    assert_eq!(error.details_json()["status_text"], "Not Found");
    assert!(!server.seen.lock().unwrap()[0].h2);
}

/// A host's extra root reaches every request of the tool, robots.txt
/// included; without it the same page is `tls_validation_failed`.
#[tokio::test]
async fn embed_builder_root_certificate_is_trusted_by_the_whole_tool() {
    let server = tls_server(&["site.test"], &[b"http/1.1"], 200).await;
    let settings = Config::new(&[server.address.port()]).timeout(5).settings();
    let args = serde_json::json!({ "url": url(&server).as_str() });
    let build = |roots: &[&CertificateDer<'static>]| {
        let mut builder = webfetch::WebFetchTool::builder(settings.clone())
            .ssrf_validator(Arc::new(stub(&settings)));
        for root in roots {
            builder = builder.root_certificate(root.to_vec());
        }
        builder.build().unwrap()
    };

    let trusting = build(&[&server.certificate]);
    let response = trusting
        .call(&args, usize::MAX)
        .await
        .map(|built| built.json)
        .unwrap();
    assert!(response.contains("secure"), "{response}");
    assert_eq!(
        server.seen.lock().unwrap().len(),
        2,
        "robots.txt, then the page"
    );

    let error = build(&[])
        .call(&args, usize::MAX)
        .await
        .map(|built| built.json)
        .unwrap_err();
    assert_eq!(error.code(), webfetch::ErrorCode::RobotsUnavailable);
    assert_eq!(error.details().error(), Some("tls_validation_failed"));

    let refused = webfetch::WebFetchTool::builder(settings.clone())
        .root_certificate(b"not a certificate".to_vec())
        .build()
        .unwrap_err();
    assert!(
        refused.to_string().contains("invalid root certificate"),
        "{refused}"
    );
}
