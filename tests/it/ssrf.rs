//! URL validation and SSRF policy: SRD 6.1 (the unit rows), 6.9 DET-02/04 and the
//! FR-WF-04-PREC table. DNS is always the stub (T-WF-INFRA-01).

use std::net::IpAddr;

use webfetch::SecuritySettings;

use crate::support::load as settings;
use webfetch::CanonicalUrl;
use webfetch::internals::ssrf;
use webfetch::testing::StubValidator;
use webfetch::{ErrorCode, FetchError};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// URL validation plus the pre-connection checks, with a stub resolver.
fn check(
    input: &str,
    security: &SecuritySettings,
    validator: &StubValidator,
) -> Result<Vec<IpAddr>, FetchError> {
    let url = CanonicalUrl::parse(input)?;
    ssrf::authorize(&url, security, validator)
}

fn default_check(input: &str) -> Result<Vec<IpAddr>, FetchError> {
    let security = SecuritySettings::default();
    let validator = StubValidator::new(&security)
        .with_host("localhost", &[ip("127.0.0.1"), ip("::1")])
        .with_host("example.com", &[ip("93.184.216.34")]);
    check(input, &security, &validator)
}

fn assert_code(input: &str, code: ErrorCode) -> FetchError {
    let error = default_check(input).expect_err(input);
    assert_eq!(error.code(), code, "{input}: {}", error.to_json());
    error
}

#[test]
fn t_wf_ssrf_01_non_http_schemes_rejected() {
    for (input, scheme) in [
        ("ftp://example.com/", "ftp"),
        ("file:///etc/passwd", "file"),
        ("javascript:alert(1)", "javascript"),
        ("data:text/html,hi", "data"),
        ("gopher://example.com/", "gopher"),
    ] {
        let error = assert_code(input, ErrorCode::InvalidScheme);
        assert_eq!(error.details_json()["scheme"], scheme);
    }
}

#[test]
fn t_wf_ssrf_02_loopback_rejected() {
    for (input, blocked, cidr) in [
        ("http://localhost/", "::1", "::1/128"),
        ("http://127.0.0.1/", "127.0.0.1", "127.0.0.0/8"),
        ("http://[::1]/", "::1", "::1/128"),
        ("http://127.255.0.9/", "127.255.0.9", "127.0.0.0/8"),
    ] {
        let error = assert_code(input, ErrorCode::SsrfBlocked);
        assert_eq!(error.details_json()["blocked_ip"], blocked, "{input}");
        assert_eq!(error.details_json()["cidr"], cidr, "{input}");
        assert_eq!(error.details_json()["toggle"], "block_loopback");
    }
}

#[test]
fn t_wf_ssrf_03_private_ranges_rejected() {
    for (input, cidr) in [
        ("http://10.1.2.3/", "10.0.0.0/8"),
        ("http://172.16.0.1/", "172.16.0.0/12"),
        ("http://172.31.255.255/", "172.16.0.0/12"),
        ("http://192.168.1.1/", "192.168.0.0/16"),
        ("http://[fd00::1]/", "fc00::/7"),
    ] {
        let error = assert_code(input, ErrorCode::SsrfBlocked);
        assert_eq!(error.details_json()["cidr"], cidr);
        assert_eq!(error.details_json()["toggle"], "block_private_ips");
    }
    assert!(
        default_check("http://172.32.0.1/").is_ok(),
        "172.32/16 is public"
    );
}

#[test]
fn t_wf_ssrf_04_link_local_rejected() {
    for input in [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.0.1/",
        "http://[fe80::1]/",
    ] {
        let error = assert_code(input, ErrorCode::SsrfBlocked);
        assert_eq!(error.details_json()["toggle"], "block_link_local");
    }
}

#[test]
fn t_wf_ssrf_05_ipv4_mapped_ipv6_rejected() {
    let error = assert_code("http://[::ffff:10.0.0.1]/", ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["blocked_ip"], "::ffff:10.0.0.1");
    assert_eq!(error.details_json()["cidr"], "10.0.0.0/8");
    assert_eq!(error.details_json()["toggle"], "block_private_ips");
    let error = assert_code("http://[::ffff:7f00:1]/", ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["cidr"], "127.0.0.0/8");
    let error = assert_code("http://[::ffff:169.254.169.254]/", ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["toggle"], "block_link_local");
    assert!(default_check("http://[::ffff:93.184.216.34]/").is_ok());
}

#[test]
fn t_wf_ssrf_06_octal_hex_integer_forms_rejected() {
    for (input, raw) in [
        ("http://2130706433/", "2130706433"),
        ("http://0x7f000001/", "0x7f000001"),
        ("http://0177.0.0.1/", "0177.0.0.1"),
        ("http://0x7f.0.0.1/", "0x7f.0.0.1"),
        ("http://017700000001/", "017700000001"),
        ("http://0x7F.1/", "0x7F.1"),
        ("http://127.1/", "127.1"),
    ] {
        let error = assert_code(input, ErrorCode::InvalidHost);
        assert_eq!(error.details_json()["host"], raw, "{input}");
    }
}

#[test]
fn t_wf_ssrf_07_non_allowed_ports_rejected() {
    for (input, port) in [
        ("http://example.com:8080/", 8080),
        ("https://example.com:22/", 22),
        ("http://example.com:8443/", 8443),
    ] {
        let error = assert_code(input, ErrorCode::PortBlocked);
        assert_eq!(error.details_json()["port"], port);
        assert_eq!(
            error.details_json()["allowed_ports"],
            serde_json::json!([80, 443])
        );
    }
    assert!(default_check("https://example.com/").is_ok());
    assert!(default_check("http://example.com:80/").is_ok());
}

#[test]
fn t_wf_ssrf_08_custom_ports_accepted_when_configured() {
    let custom = settings("[tools.webfetch.security]\nallowed_ports = [8080]\n");
    let validator =
        StubValidator::new(&custom.security).with_host("example.com", &[ip("93.184.216.34")]);
    assert!(check("http://example.com:8080/", &custom.security, &validator).is_ok());
    // The list is the complete allowlist: 80 is no longer implied (FR-WF-PORT-01).
    let error = check("http://example.com/", &custom.security, &validator).unwrap_err();
    assert_eq!(error.code(), ErrorCode::PortBlocked);
    let listed = settings("[tools.webfetch.security]\nallowed_ports = [80, 443, 8080]\n");
    let validator =
        StubValidator::new(&listed.security).with_host("example.com", &[ip("93.184.216.34")]);
    for input in [
        "http://example.com/",
        "https://example.com/",
        "http://example.com:8080/",
    ] {
        assert!(
            check(input, &listed.security, &validator).is_ok(),
            "{input}"
        );
    }
    let empty = settings("[tools.webfetch.security]\nallowed_ports = []\n");
    assert_eq!(
        empty.security.allowed_ports,
        vec![80, 443],
        "empty means the default"
    );
}

#[test]
fn t_wf_ssrf_11_disabling_protection_needs_the_override() {
    let refused = webfetch::load_str(
        "[tools.webfetch.security]\nblock_private_ips = false\n",
        webfetch::LoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Configuration error: SSRF protection cannot be disabled without allow_insecure_overrides=true\n\
         Affected settings: block_private_ips=false"
    );
    let loaded = webfetch::load_str("[tools.webfetch.security]\nblock_private_ips = false\nblock_loopback = false\nallow_insecure_overrides = true\n", webfetch::LoadOptions::default())
    .unwrap();
    assert!(
        loaded.warnings.contains(
            &"SSRF protection disabled for: block_private_ips, block_loopback".to_owned()
        )
    );
    let security = &loaded.settings.security;
    let validator = StubValidator::new(security);
    assert!(check("http://10.0.0.1/", security, &validator).is_ok());
    assert!(check("http://127.0.0.1/", security, &validator).is_ok());
    // Toggles still on keep blocking.
    assert_eq!(
        check("http://169.254.169.254/", security, &validator)
            .unwrap_err()
            .code(),
        ErrorCode::SsrfBlocked
    );
}

#[test]
fn t_wf_ssrf_11_additional_cidrs_always_blocked() {
    let loaded = webfetch::load_str(
        "[tools.webfetch.security]\nblock_private_ips = false\nallow_insecure_overrides = true\n\
         additional_blocked_cidrs = [\"10.9.0.0/16\", \"2606:4700::/32\", \"93.184.216.34\"]\n",
        webfetch::LoadOptions::default(),
    )
    .unwrap();
    let security = &loaded.settings.security;
    let validator = StubValidator::new(security).with_host("example.com", &[ip("93.184.216.34")]);
    for (input, cidr) in [
        ("http://10.9.1.1/", "10.9.0.0/16"),
        ("http://[::ffff:10.9.1.1]/", "10.9.0.0/16"),
        ("http://[2606:4700::1]/", "2606:4700::/32"),
        ("http://example.com/", "93.184.216.34/32"),
    ] {
        let error = check(input, security, &validator).unwrap_err();
        assert_eq!(error.code(), ErrorCode::SsrfBlocked, "{input}");
        assert_eq!(error.details_json()["cidr"], cidr);
        assert_eq!(error.details_json()["toggle"], "additional_blocked_cidrs");
    }
    assert!(check("http://10.8.1.1/", security, &validator).is_ok());
}

#[test]
fn t_wf_ssrf_12_dns_order_ipv6_first_then_ipv4_by_bytes() {
    let resolver_order = vec![
        ip("10.0.0.2"),
        ip("2001:db8::2"),
        ip("2001:db8::1"),
        ip("10.0.0.1"),
    ];
    assert_eq!(
        ssrf::sort_addresses(resolver_order),
        vec![
            ip("2001:db8::1"),
            ip("2001:db8::2"),
            ip("10.0.0.1"),
            ip("10.0.0.2")
        ]
    );
    // Byte order, not string order: 9 < 10 and ::9 < ::a.
    assert_eq!(
        ssrf::sort_addresses(vec![
            ip("10.0.0.1"),
            ip("9.0.0.1"),
            ip("2600::a"),
            ip("2600::9")
        ]),
        vec![ip("2600::9"), ip("2600::a"), ip("9.0.0.1"), ip("10.0.0.1")]
    );
    // The validator returns the allowed set in that order.
    let security = SecuritySettings::default();
    let validator = StubValidator::new(&security).with_host(
        "multi.example",
        &[
            ip("93.184.216.35"),
            ip("2606:2800::2"),
            ip("93.184.216.34"),
            ip("2606:2800::1"),
        ],
    );
    assert_eq!(
        check("https://multi.example/", &security, &validator).unwrap(),
        vec![
            ip("2606:2800::1"),
            ip("2606:2800::2"),
            ip("93.184.216.34"),
            ip("93.184.216.35")
        ]
    );
}

#[test]
fn t_wf_ssrf_14_numeric_form_judged_on_the_raw_host() {
    // The parser normalises all of these to an IPv4 address; the raw substring decides.
    for (input, raw) in [
        ("http://0x7f000001:8080/x", "0x7f000001"),
        ("http://0x7f000001?q", "0x7f000001"),
        ("http://0x7f000001#frag", "0x7f000001"),
        ("HTTP://0X7F000001/", "0X7F000001"),
        ("http://%31%32%37.0.0.1/", "%31%32%37.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1."),
        ("http://2130706433\\path", "2130706433"),
    ] {
        let error = assert_code(input, ErrorCode::InvalidHost);
        assert_eq!(error.details_json()["host"], raw, "{input}");
    }
    // Canonical dotted decimal passes on to the SSRF check (FR-WF-04b2 precedence).
    assert_code("http://127.0.0.1:8080/", ErrorCode::SsrfBlocked);
    assert_code("http://0.0.0.0/", ErrorCode::SsrfBlocked);
    // Bracketed IPv6 is never subject to the IPv4 form rule.
    assert_code("http://[::ffff:127.0.0.1]/", ErrorCode::SsrfBlocked);
    // Out-of-range octets are invalid_host too (FR-WF-04b3).
    let error = assert_code("http://1.2.3.256/", ErrorCode::InvalidHost);
    assert_eq!(error.details_json()["host"], "1.2.3.256");
}

#[test]
fn t_wf_ssrf_15_userinfo_rejected_before_host_checks() {
    for input in [
        "https://user:pass@example.com/",
        "https://user@example.com/",
        "http://:pass@example.com/",
        "http://@example.com/",
        "http://user:pass@0x7f000001/",
        "http://user:pass@10.0.0.1/",
    ] {
        let error = assert_code(input, ErrorCode::InvalidUrl);
        let json = error.to_json();
        assert!(!json.contains("pass@") && !json.contains("user@"), "{json}");
    }
}

#[test]
fn t_wf_ssrf_16_leading_zero_octets_rejected() {
    for input in [
        "http://127.0.0.01/",
        "http://010.0.0.1/",
        "http://93.184.216.034/",
        "http://00.0.0.0/",
    ] {
        assert_code(input, ErrorCode::InvalidHost);
    }
    assert!(default_check("http://93.184.216.34/").is_ok());
}

#[test]
fn t_wf_ssrf_17_mixed_dns_results() {
    let security = SecuritySettings::default();
    let validator = StubValidator::new(&security)
        .with_host(
            "mixed.example",
            &[ip("10.0.0.1"), ip("93.184.216.34"), ip("::1")],
        )
        .with_host(
            "blocked.example",
            &[ip("192.168.0.9"), ip("10.0.0.2"), ip("10.0.0.1")],
        );
    assert_eq!(
        check("http://mixed.example/", &security, &validator).unwrap(),
        vec![ip("93.184.216.34")]
    );
    let error = check("http://blocked.example/", &security, &validator).unwrap_err();
    assert_eq!(error.code(), ErrorCode::SsrfBlocked);
    assert_eq!(
        error.details_json()["blocked_ip"],
        "10.0.0.1",
        "first blocked address in sort order"
    );
}

#[test]
fn t_wf_ssrf_18_port_versus_ssrf_precedence() {
    // A name: the port is refused before any resolution (the stub knows no such name,
    // so reaching DNS would have been dns_failed).
    let error = assert_code("http://unknown-name.example:8080/", ErrorCode::PortBlocked);
    assert_eq!(error.details_json()["port"], 8080);
    // An IP literal: SSRF wins regardless of the port.
    let error = assert_code("http://10.0.0.1:8080/", ErrorCode::SsrfBlocked);
    assert_eq!(error.details_json()["blocked_ip"], "10.0.0.1");
    // An allowed literal on a bad port is still port_blocked.
    assert_code("http://93.184.216.34:8080/", ErrorCode::PortBlocked);
    // And a name on a good port reaches DNS.
    assert_code("http://unknown-name.example/", ErrorCode::DnsFailed);
}

/// FR-WF-04-PREC: one row each, first matching condition wins.
#[test]
fn fr_wf_04_prec_every_row() {
    let rows = [
        ("http://exa mple.com/", ErrorCode::InvalidUrl),
        ("http://[::1/", ErrorCode::InvalidUrl),
        ("ftp://user:pass@host/", ErrorCode::InvalidScheme),
        ("ftp://0x7f000001/", ErrorCode::InvalidScheme),
        ("https://user:pass@[fe80::1%25lo0]/", ErrorCode::InvalidUrl),
        ("http://user@0x7f000001/", ErrorCode::InvalidUrl),
        ("http://[fe80::1%25lo0]/", ErrorCode::InvalidUrl),
        ("http://0x7f000001/", ErrorCode::InvalidHost),
    ];
    for (input, code) in rows {
        assert_code(input, code);
    }
}

#[test]
fn t_wf_det_02_normalization_is_deterministic() {
    let inputs = [
        "HTTPS://Example.COM:443/a/./b/../c?b=2&a=1#frag",
        "http://example.com/%7Efoo/%2f?x=%7e",
        "https://münchen.example/Pfad",
    ];
    for input in inputs {
        let first = CanonicalUrl::parse(input).unwrap();
        for _ in 0..3 {
            assert_eq!(CanonicalUrl::parse(input).unwrap(), first);
        }
        // Canonicalisation is idempotent.
        assert_eq!(CanonicalUrl::parse(first.as_str()).unwrap(), first);
    }
    let same = [
        "https://example.com/c?b=2&a=1",
        "HTTPS://EXAMPLE.com:443/a/../c?b=2&a=1",
        "https://example.com/./c?b=2&a=1#top",
        "https://example.com/%63?b=2&a=1",
    ];
    for input in same {
        assert_eq!(
            CanonicalUrl::parse(input).unwrap().as_str(),
            "https://example.com/c?b=2&a=1",
            "{input}"
        );
    }
    assert_eq!(
        CanonicalUrl::parse("http://example.com/a/")
            .unwrap()
            .as_str(),
        "http://example.com/a/"
    );
    assert_eq!(
        CanonicalUrl::parse("http://example.com/%2f%3a")
            .unwrap()
            .as_str(),
        "http://example.com/%2F%3A"
    );
}

#[test]
fn t_wf_det_04_idna_vectors_of_appendix_a() {
    for (host, ascii) in [
        ("münchen.example", "xn--mnchen-3ya.example"),
        ("日本語.jp", "xn--wgv71a119e.jp"),
        ("例え.jp", "xn--r8jz45g.jp"),
        ("mu\u{308}nchen.example", "xn--mnchen-3ya.example"),
        ("EXAMPLE.COM", "example.com"),
        ("münich.example", "xn--mnich-kva.example"),
    ] {
        let url = CanonicalUrl::parse(&format!("https://{host}/")).unwrap();
        assert_eq!(url.host_str(), ascii, "{host}");
        assert_eq!(url.as_str(), format!("https://{ascii}/"));
    }
}
