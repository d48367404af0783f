//! Hostile input never panics: arbitrary strings through URL validation and the SSRF
//! checks, arbitrary bytes and arbitrary `[tools.webfetch]` tables through the config
//! loader. Each gives a value or a structured error.

use proptest::prelude::*;

use webfetch::CanonicalUrl;
use webfetch::SecuritySettings;
use webfetch::internals::ssrf;
use webfetch::testing::StubValidator;

fn url_like() -> impl Strategy<Value = String> {
    let scheme = prop_oneof!["http", "https", "HTTP", "ftp", "javascript", "", "h\tttp"];
    let host = prop_oneof![
        "[a-z0-9.-]{0,20}",
        "[0-9.x]{1,20}",
        "\\[[0-9a-f:.%]{0,30}\\]",
        "[^/?#]{0,12}",
        "\\PC{0,8}",
    ];
    let tail = "[/?#%a-zA-Z0-9.\\\\@:-]{0,30}";
    (
        scheme,
        prop_oneof!["://", ":", ":/", ":\\\\", "//"],
        host,
        "(:[0-9]{0,6})?",
        tail,
    )
        .prop_map(|(s, sep, h, p, t)| format!("{s}{sep}{h}{p}{t}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn url_validation_never_panics_and_is_idempotent(input in prop_oneof![url_like(), "\\PC*", any::<String>()]) {
        if let Ok(url) = CanonicalUrl::parse(&input) {
            let again = CanonicalUrl::parse(url.as_str()).expect("a canonical URL re-validates");
            prop_assert_eq!(again.as_str(), url.as_str());
            let _ = url.origin().robots_url();
            let _ = url.redacted();
            let security = SecuritySettings::default();
            let _ = ssrf::authorize(&url, &security, &StubValidator::new(&security));
            let _ = url.resolve_redirect(Some(&input));
        }
    }

    #[test]
    fn redirect_resolution_never_panics(location in prop_oneof![url_like(), any::<String>()]) {
        let base = CanonicalUrl::parse("https://example.com/a/b?c").unwrap();
        if let Ok(next) = base.resolve_redirect(Some(&location)) {
            prop_assert!(matches!(next.scheme(), "http" | "https"));
        }
    }

    #[test]
    fn config_loader_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = webfetch::load_str(&String::from_utf8_lossy(&bytes), webfetch::LoadOptions::default());
    }

    #[test]
    fn config_loader_never_panics_on_plausible_tables(
        table in prop_oneof!["", ".security", ".browser", ".robots", ".rendering", ".http"],
        key in "[a-z_]{1,30}",
        value in prop_oneof![
            "-?[0-9]{1,25}", "true", "false", "\"[^\"\\\\]{0,20}\"",
            "\\[(\"[a-z0-9./:]{0,12}\", ?){0,3}\\]", "\\[([0-9]{1,6}, ?){0,3}\\]",
        ],
    ) {
        let _ = webfetch::load_str(&format!("[tools.webfetch{table}]\n{key} = {value}\n"), webfetch::LoadOptions::default());
    }
}
