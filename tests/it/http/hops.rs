//! Every redirect hop is validated again: blocked addresses, ports and schemes,
//! rebinding names, DNS fall-through, and proxies that must not bypass it
//! (T-WF-SSRF-09, 10, 13, 17, 19, FR-WF-06c, 07e, 10d, FR-WF-DNS-01).

use super::*;

// ---------------------------------------------------------------- SSRF per hop

#[tokio::test]
async fn t_wf_ssrf_09_redirect_to_blocked_address_is_refused() {
    let server = html_server().await;
    let port = server.address().port();
    let cases = [
        (
            "/literal",
            format!("http://10.0.0.1:{port}/"),
            "10.0.0.1",
            "10.0.0.0/8",
        ),
        (
            "/metadata",
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "169.254.169.254",
            "169.254.0.0/16",
        ),
        (
            "/name",
            format!("http://internal.test:{port}/"),
            "10.0.0.5",
            "10.0.0.0/8",
        ),
        (
            "/mapped",
            format!("http://[::ffff:10.0.0.1]:{port}/"),
            "::ffff:10.0.0.1",
            "10.0.0.0/8",
        ),
    ];
    for (from, location, _, _) in &cases {
        redirect(&server, from, 302, location).await;
    }
    let settings = settings(config(&[port]));
    for (from, _, blocked_ip, cidr) in &cases {
        let hops = HopLog::default();
        let error = fetch_via(&client(&settings), &site(port, from), Some(&hops))
            .await
            .unwrap_err();
        assert_code(&error, ErrorCode::SsrfBlocked);
        assert_eq!(error.details_json()["blocked_ip"], *blocked_ip, "{from}");
        assert_eq!(error.details_json()["cidr"], *cidr, "{from}");
        assert_eq!(
            *hops.0.lock().unwrap(),
            [(String::new(), site(port, from))],
            "the hook runs for the first URL, never for a blocked hop"
        );
    }
}

#[tokio::test]
async fn fr_wf_07e_redirect_to_blocked_port_or_scheme() {
    let server = html_server().await;
    let port = server.address().port();
    redirect(
        &server,
        "/port",
        302,
        &format!("http://site.test:{}/", port.wrapping_add(1)),
    )
    .await;
    redirect(&server, "/file", 302, "file:///etc/passwd").await;
    redirect(&server, "/octal", 302, "http://0177.0.0.1/").await;
    let settings = settings(config(&[port]));
    let blocked_port = document(&settings, &site(port, "/port")).await.unwrap_err();
    assert_code(&blocked_port, ErrorCode::PortBlocked);
    let scheme = document(&settings, &site(port, "/file")).await.unwrap_err();
    assert_code(&scheme, ErrorCode::InvalidScheme);
    let host = document(&settings, &site(port, "/octal"))
        .await
        .unwrap_err();
    assert_code(&host, ErrorCode::InvalidHost);
}

#[tokio::test]
async fn t_wf_ssrf_10_rebinding_name_is_blocked_before_connecting() {
    let settings = settings(config(&[80]));
    let error = document(&settings, "http://internal.test/")
        .await
        .unwrap_err();
    assert_code(&error, ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["blocked_ip"], "10.0.0.5");
    assert_eq!(error.details_json()["toggle"], "block_private_ips");
}

/// A name that answers loopback first and a private address afterwards.
struct Rebinding {
    inner: StubValidator,
    private: StubValidator,
    calls: std::sync::atomic::AtomicUsize,
}

impl SsrfValidator for Rebinding {
    fn validate_ip(&self, ip: IpAddr) -> Result<(), SsrfError> {
        self.inner.validate_ip(ip)
    }
    fn resolve_and_validate(&self, host: &str) -> Result<Vec<IpAddr>, SsrfError> {
        match self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => self.inner.resolve_and_validate(host),
            _ => self.private.resolve_and_validate(host),
        }
    }
}

#[tokio::test]
async fn t_wf_ssrf_10_no_re_resolution_across_hops() {
    let server = html_server().await;
    let port = server.address().port();
    redirect(&server, "/first", 302, "/page").await;
    let settings = settings(config(&[port]));
    let rebinding = Arc::new(Rebinding {
        inner: StubValidator::new(&settings.security).with_host("rebind.test", &[LOCALHOST]),
        private: StubValidator::new(&settings.security)
            .with_host("rebind.test", &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9))]),
        calls: std::sync::atomic::AtomicUsize::new(0),
    });
    let client = HttpClient::new(Arc::clone(&settings), rebinding.clone());
    let start = format!("http://rebind.test:{port}/first");
    let fetched = fetch_via(&client, &start, None).await.unwrap();
    assert_eq!(fetched.redirects, 1);
    assert_eq!(rebinding.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    // A new fetch resolves again, and the rebound answer is refused.
    let error = fetch_via(&client, &start, None).await.unwrap_err();
    assert_code(&error, ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["blocked_ip"], "10.0.0.9");
}

#[tokio::test]
async fn t_wf_ssrf_17_mixed_answer_connects_only_to_allowed_addresses() {
    let server = html_server().await;
    let port = server.address().port();
    let settings = settings(config(&[port]).security("max_dns_attempts = 10"));
    let ips = [
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7)),
        LOCALHOST,
        "fd00::1".parse().unwrap(),
    ];
    let client = resolving(&settings, "mixed.test", &ips);
    let target = format!("http://mixed.test:{port}/page");
    let fetched = fetch_via(&client, &target, None).await.unwrap();
    assert_eq!(fetched.kind, MediaKind::Html);
}

#[tokio::test]
async fn fr_wf_06c_unknown_name_is_dns_failed() {
    let settings = settings(config(&[80]));
    let error = document(&settings, "http://nowhere.test/")
        .await
        .unwrap_err();
    assert_code(&error, ErrorCode::DnsFailed);
    assert_eq!(error.details_json()["host"], "nowhere.test");
}

/// Three loopback addresses on one port: the first two refuse, the third listens.
/// A hundred tries find such a port on any machine with loopback ports to spare.
fn three_addresses() -> (std::net::TcpListener, u16) {
    for _ in 0..100 {
        let third = std::net::TcpListener::bind((Ipv4Addr::new(127, 0, 0, 3), 0)).unwrap();
        let port = third.local_addr().unwrap().port();
        // Nobody may listen on .1/.2 at that port: binding proves it is free.
        let free = [1u8, 2].iter().all(|last| {
            std::net::TcpListener::bind((Ipv4Addr::new(127, 0, 0, *last), port)).is_ok()
        });
        if free {
            return (third, port);
        }
    }
    panic!("no port free on 127.0.0.1, .2 and .3 in a hundred tries");
}

#[tokio::test]
async fn t_wf_ssrf_13_only_max_dns_attempts_addresses_are_tried() {
    let (third, port) = three_addresses();
    let settings = settings(config(&[port]));
    assert_eq!(settings.security.max_dns_attempts, 2);
    let ips: Vec<IpAddr> = [3u8, 1, 2]
        .iter()
        .map(|last| IpAddr::V4(Ipv4Addr::new(127, 0, 0, *last)))
        .collect();
    let client = resolving(&settings, "multi.test", &ips);
    let target = format!("http://multi.test:{port}/");
    let error = fetch_via(&client, &target, None).await.unwrap_err();
    assert_code(&error, ErrorCode::Network);
    assert_eq!(error.details_json()["error"], "connection_refused");
    assert_eq!(
        error.details_json()["attempted_ips"],
        json!(["127.0.0.1", "127.0.0.2"])
    );
    assert!(
        never_contacted(&third),
        "the third address must never be tried"
    );
}

#[tokio::test]
async fn fr_wf_dns_01_failed_address_falls_through_to_the_next() {
    let server = html_server().await;
    let port = server.address().port();
    let settings = settings(config(&[port]));
    // Sorted order puts ::1 first; the server listens on 127.0.0.1 only.
    let client = resolving(
        &settings,
        "dual.test",
        &[LOCALHOST, IpAddr::V6(Ipv6Addr::LOCALHOST)],
    );
    let target = format!("http://dual.test:{port}/page");
    let fetched = fetch_via(&client, &target, None).await.unwrap();
    assert_eq!(fetched.kind, MediaKind::Html);
}

// ---------------------------------------------------------------- proxy

#[tokio::test]
async fn t_wf_ssrf_19_proxy_does_not_bypass_target_validation() {
    let proxy = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    // Loopback stays blocked: the proxy host itself is exempt (FR-WF-10d1), the
    // targets are not.
    let text = "[tools.webfetch]\n[tools.webfetch.http]\nuse_system_proxy = true\n";
    let settings = Arc::new(load(text));
    let env = move |name: &str| (name == "HTTP_PROXY").then(|| proxy_url.clone());
    let client = client(&settings).with_proxy_env(&env);
    for target in [
        "http://10.0.0.1/",
        "http://internal.test/",
        "http://[::ffff:10.0.0.1]/",
        "http://site.test/",
    ] {
        let error = fetch_via(&client, target, None).await.unwrap_err();
        assert_code(&error, ErrorCode::SsrfBlocked);
    }
    assert!(
        never_contacted(&proxy),
        "a blocked target must not reach the proxy"
    );
}

/// A minimal CONNECT proxy: records each CONNECT target, then relays bytes.
async fn connect_proxy() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let address = raw_listener(move |mut client| {
        let log = Arc::clone(&log);
        async move {
            let head = read_head(&mut client).await;
            let line = head.lines().next().unwrap_or("").to_owned();
            log.lock().unwrap().push(line.clone());
            let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
            let Ok(mut upstream) = TcpStream::connect(target).await else {
                let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                return;
            };
            let _ = client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await;
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    })
    .await;
    (address, seen)
}

#[tokio::test]
async fn t_wf_ssrf_19_proxy_tunnels_to_the_validated_ip() {
    let server = html_server().await;
    let port = server.address().port();
    let (proxy, seen) = connect_proxy().await;
    let settings =
        settings(config(&[port]).section("[tools.webfetch.http]\nuse_system_proxy = true"));
    let env = move |name: &str| (name == "http_proxy").then(|| format!("http://{proxy}"));
    let client = client(&settings).with_proxy_env(&env);
    let fetched = fetch_via(&client, &site(port, "/page"), None)
        .await
        .unwrap();
    assert_eq!(fetched.kind, MediaKind::Html);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![format!("CONNECT 127.0.0.1:{port} HTTP/1.1")]
    );
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].headers["host"],
        format!("site.test:{port}").as_str()
    );
}

#[tokio::test]
async fn fr_wf_10d_environment_proxy_ignored_by_default() {
    let server = html_server().await;
    let port = server.address().port();
    let proxy = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let settings = settings(config(&[port]));
    let env = move |name: &str| name.ends_with("_PROXY").then(|| proxy_url.clone());
    let client = client(&settings).with_proxy_env(&env);
    fetch_via(&client, &site(port, "/page"), None)
        .await
        .unwrap();
    assert!(never_contacted(&proxy));
}
