//! robots.txt tests of SRD 6.2 (T-WF-ROB-01 .. 27): the pure ones parse and match
//! directly; the fetch ones run the real HTTP client against wiremock on loopback.

use proptest::prelude::*;
use webfetch::CanonicalUrl;
use webfetch::internals::robots::{MAX_RULES_PER_FILE, RobotsTxt, Rules};

const TOKEN: &str = "forge-webfetch";

fn rules(body: &str) -> Rules {
    RobotsTxt::parse(body.as_bytes(), false).rules_for(TOKEN)
}

fn allowed(body: &str, path: &str) -> bool {
    rules(body).is_allowed(path)
}

#[test]
fn t_wf_rob_01_disallowed_path_is_refused() {
    let body = "User-agent: *\nDisallow: /private/\n";
    assert!(!allowed(body, "/private/"));
    assert!(!allowed(body, "/private/page.html"));
}

#[test]
fn t_wf_rob_02_path_not_disallowed_is_allowed() {
    let body = "User-agent: *\nDisallow: /private/\n";
    assert!(allowed(body, "/public/page.html"));
    assert!(allowed(body, "/private"));
    assert!(allowed(body, "/"));
}

#[test]
fn t_wf_rob_03_allow_beats_disallow_on_equal_length() {
    let body = "User-agent: *\nDisallow: /page\nAllow: /page\n";
    assert!(allowed(body, "/page"));
    let body = "User-agent: *\nAllow: /a*c\nDisallow: /ab$\n";
    assert!(allowed(body, "/abc"));
    // Same length, but only the Disallow matches: it decides.
    assert!(!allowed("User-agent: *\nAllow: /x\nDisallow: /p\n", "/p"));
}

#[test]
fn t_wf_rob_04_longest_match_wins() {
    let body = "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n";
    assert!(!allowed(body, "/a/x"));
    assert!(allowed(body, "/a/b/x"));
    assert!(!allowed(body, "/a/b/c/d"));
    // ROBOTS-RULE-01's own example: 11 chars against 16.
    let body = "User-agent: *\nDisallow: /private/*\nAllow: /private/public/\n";
    assert!(allowed(body, "/private/public/x"));
    assert!(!allowed(body, "/private/secret"));
}

#[test]
fn t_wf_rob_05_falls_back_to_the_star_group() {
    let body = "User-agent: googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /nope\n";
    assert!(!allowed(body, "/nope"));
    assert!(allowed(body, "/yes"));
    // A specific group wins over `*` even when `*` comes first.
    let body = "User-agent: *\nDisallow: /\n\nUser-agent: forge-webfetch\nDisallow: /only\n";
    assert!(allowed(body, "/other"));
    assert!(!allowed(body, "/only"));
    // No matching group and no `*` group: allow-all.
    assert!(allowed("User-agent: googlebot\nDisallow: /\n", "/"));
    // ROBOTS-WILDCARD-01: the first `*` group only.
    let body = "User-agent: *\nDisallow: /first\n\nUser-agent: *\nDisallow: /second\n";
    assert!(!allowed(body, "/first"));
    assert!(allowed(body, "/second"));
}

#[test]
fn t_wf_rob_10_wildcard_and_end_anchor() {
    let body = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp*/cache\nAllow: /tmp/ok$\n";
    assert!(!allowed(body, "/docs/a.pdf"));
    assert!(allowed(body, "/docs/a.pdf?download=1"));
    assert!(allowed(body, "/docs/a.pdfx"));
    assert!(!allowed(body, "/tmp-1/x/cache/y"));
    assert!(allowed(body, "/tmp/ok"));
    assert!(allowed(body, "/tmp/okay"));
    assert!(!allowed("User-agent: *\nDisallow: *\n", "/anything"));
    assert!(!allowed("User-agent: *\nDisallow: /$\n", "/"));
    assert!(allowed("User-agent: *\nDisallow: /$\n", "/page"));
}

#[test]
fn t_wf_rob_11_multiple_matching_groups_first_wins_never_merged() {
    let body = "User-agent: forge-webfetch\nDisallow: /a\n\n\
                User-agent: forge-webfetch\nDisallow: /b\n";
    assert!(!allowed(body, "/a"));
    assert!(
        allowed(body, "/b"),
        "the second group must not be merged in"
    );
    // SRD example: token `forge`, `forge-webfetch` is the longer match.
    let robots = RobotsTxt::parse(
        b"User-agent: forge\nDisallow: /short\n\nUser-agent: forge-webfetch\nDisallow: /long\n",
        false,
    );
    let rules = robots.rules_for("forge");
    assert!(rules.is_allowed("/short"));
    assert!(!rules.is_allowed("/long"));
}

#[test]
fn t_wf_rob_14_token_derived_from_user_agent() {
    let loaded = webfetch::load_str(
        "[tools.webfetch]\nuser_agent = \"Acme.Crawler_v2/3.1 (+https://acme.example/bot)\"\n",
        webfetch::LoadOptions::default(),
    )
    .unwrap();
    let token = &loaded.settings.robots.user_agent_token;
    assert_eq!(token, "AcmeCrawler_v2");
    let body = "User-agent: *\nDisallow: /\n\nUser-agent: acmecrawler_v2\nDisallow: /mine\n";
    let rules = RobotsTxt::parse(body.as_bytes(), false).rules_for(token);
    assert!(rules.is_allowed("/elsewhere"));
    assert!(!rules.is_allowed("/mine"));
    // An explicit token wins over the derivation.
    let loaded = webfetch::load_str("[tools.webfetch]\nuser_agent = \"Acme/1.0\"\n[tools.webfetch.robots]\nuser_agent_token = \"other\"\n", webfetch::LoadOptions::default())
    .unwrap();
    assert_eq!(loaded.settings.robots.user_agent_token, "other");
    // Nothing usable before the `/`: the default token.
    let loaded = webfetch::load_str(
        "[tools.webfetch]\nuser_agent = \"(+)/1.0\"\n",
        webfetch::LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(loaded.settings.robots.user_agent_token, "forge-webfetch");
}

#[test]
fn t_wf_rob_15_specificity_is_the_longest_matching_line_of_a_group() {
    // Group 1 matches through a 19-char line, group 2 through a 16-char line.
    let body = "User-agent: other\nUser-agent: forge-webfetch-beta\nDisallow: /one\n\n\
                User-agent: forge-webfetch-x\nDisallow: /two\n";
    assert!(!allowed(body, "/one"));
    assert!(allowed(body, "/two"));
    // The same value lengths, order swapped: still the 19-char group.
    let body = "User-agent: forge-webfetch-x\nDisallow: /two\n\n\
                User-agent: forge-webfetch-beta\nUser-agent: other\nDisallow: /one\n";
    assert!(!allowed(body, "/one"));
    assert!(allowed(body, "/two"));
    // Case-insensitive substring match.
    assert!(!allowed(
        "User-agent: My-FORGE-WEBFETCH-Bot\nDisallow: /\n",
        "/"
    ));
}

#[test]
fn t_wf_rob_21_comments_and_inline_comment_stripping() {
    let body = "# full-line comment\n   # indented comment\nUser-agent: * # everyone\n\
                Disallow: /a # not part of the path\nDisallow: /b\t# tab separator\n\
                Disallow: /c#d\nDisallow: # only a comment, so empty\n";
    let rules = rules(body);
    assert!(!rules.is_allowed("/a"));
    assert!(!rules.is_allowed("/b"));
    assert!(!rules.is_allowed("/c#d"), "`#` without whitespace is data");
    assert!(rules.is_allowed("/c"));
    assert!(
        rules.is_allowed("/other"),
        "the comment-only Disallow is empty"
    );
    assert_eq!(rules.len(), 3);
}

#[test]
fn t_wf_rob_22_truncation_drops_partial_line_and_partial_utf8() {
    let full = "User-agent: *\nDisallow: /caf\u{e9}\nDisallow: /second\n".as_bytes();
    // Cut inside the two-byte `é`: the partial sequence and its line go.
    let cut = full.iter().position(|b| *b == 0xC3).unwrap() + 1;
    let rules = RobotsTxt::parse(&full[..cut], true).rules_for(TOKEN);
    assert!(
        rules.is_allowed("/caf"),
        "the partial line must not become `/caf`"
    );
    assert!(rules.is_allowed("/caf%C3%A9"));
    assert!(rules.is_allowed("/second"));
    assert!(rules.is_empty());
    // Cut inside the next line: the complete `/café` rule stays.
    let cut = full.len() - 4;
    let rules = RobotsTxt::parse(&full[..cut], true).rules_for(TOKEN);
    assert!(!rules.is_allowed("/caf%C3%A9"));
    assert!(
        rules.is_allowed("/sec"),
        "the partial `/sec` line must be dropped"
    );
    // Not truncated: the last line counts even without a line break.
    let rules = RobotsTxt::parse(b"User-agent: *\nDisallow: /x", false).rules_for(TOKEN);
    assert!(!rules.is_allowed("/x"));
}

#[test]
fn t_wf_rob_23_empty_disallow_allows_all() {
    assert!(allowed("User-agent: *\nDisallow:\n", "/anything"));
    assert!(allowed("User-agent: *\nDisallow:   \t\n", "/anything"));
    // SRD example: an empty-Disallow group for us beats another group's `Disallow: /`.
    let body = "User-agent: *\nDisallow: /\n\nUser-agent: forge-webfetch\nDisallow:\n";
    assert!(allowed(body, "/anything"));
}

#[test]
fn t_wf_rob_24_empty_allow_matches_nothing() {
    let body = "User-agent: *\nAllow:\nDisallow: /\n";
    assert!(!allowed(body, "/"));
    assert!(!allowed(body, "/x"));
    assert!(allowed("User-agent: *\nAllow:\n", "/x"));
}

#[test]
fn t_wf_rob_25_utf8_bom_is_stripped() {
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(b"User-agent: *\nDisallow: /private\n");
    let rules = RobotsTxt::parse(&body, false).rules_for(TOKEN);
    assert!(!rules.is_allowed("/private"));
}

#[test]
fn t_wf_rob_26_utf16_bom_is_undecodable_allow_all() {
    let utf16le: Vec<u8> = "\u{feff}User-agent: *\nDisallow: /\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let utf16be: Vec<u8> = "\u{feff}User-agent: *\nDisallow: /\n"
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect();
    for body in [utf16le, utf16be] {
        let robots = RobotsTxt::parse(&body, false);
        assert!(robots.groups().is_empty());
        assert!(robots.rules_for(TOKEN).is_allowed("/"));
    }
}

#[test]
fn fr_wf_09b_invalid_utf8_is_allow_all() {
    // `Disallow: /` is readable, but the file is not UTF-8: the whole file is
    // undecodable and therefore allow-all (FR-WF-09b step 3).
    let body = b"User-agent: *\nDisallow: /\n# Latin-1 comment: caf\xE9\n";
    let robots = RobotsTxt::parse(body, false);
    assert!(robots.groups().is_empty());
    assert!(robots.rules_for(TOKEN).is_allowed("/"));
    assert!(robots.rules_for(TOKEN).is_allowed("/private"));
    // The same file in UTF-8 is enforced.
    let body = "User-agent: *\nDisallow: /\n# Latin-1 comment: caf\u{e9}\n";
    assert!(!allowed(body, "/"));
}

#[test]
fn robots_bom_01_utf16le_and_utf32_boms_are_allow_all() {
    let utf16le: Vec<u8> = "\u{feff}User-agent: *\nDisallow: /\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let utf32 = |le: bool| -> Vec<u8> {
        "\u{feff}User-agent: *\nDisallow: /\n"
            .chars()
            .flat_map(|c| {
                let c = u32::from(c);
                if le { c.to_le_bytes() } else { c.to_be_bytes() }
            })
            .collect()
    };
    // A UTF-16LE BOM in front of otherwise ASCII text is still non-UTF-8 content.
    let mut bom_then_ascii = b"\xFF\xFE".to_vec();
    bom_then_ascii.extend_from_slice(b"User-agent: *\nDisallow: /\n");
    for body in [utf16le, utf32(true), utf32(false), bom_then_ascii] {
        let rules = RobotsTxt::parse(&body, false).rules_for(TOKEN);
        assert!(rules.is_allow_all());
        assert!(rules.is_allowed("/"));
    }
    // A UTF-8 BOM is stripped and the file parsed.
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(b"User-agent: *\nDisallow: /private\n");
    let rules = RobotsTxt::parse(&body, false).rules_for(TOKEN);
    assert!(!rules.is_allowed("/private"));
    assert!(rules.is_allowed("/public"));
}

#[test]
fn t_wf_rob_27_matching_uses_canonical_path_and_query() {
    let body =
        "User-agent: *\nDisallow: /private/~user\nDisallow: /*?session=\nDisallow: /caf\u{e9}\n";
    let rules = rules(body);
    let check = |input: &str| {
        let url = CanonicalUrl::parse(input).unwrap();
        rules.is_allowed(&url.path_and_query())
    };
    // Dot segments removed and `%7E` decoded before matching.
    assert!(!check("https://e.example/public/../private/%7euser#frag"));
    // The query is part of the matching input, in its original order (not sorted:
    // `?a=1&session=` has no `?session=`).
    assert!(!check("https://e.example/page?session=abc&a=1"));
    assert!(check("https://e.example/page?a=1&session=abc"));
    assert!(check("https://e.example/page?a=1"));
    // The fragment is not.
    assert!(check("https://e.example/page#?session=abc"));
    // Non-ASCII in a pattern matches its percent-encoded form in the URL.
    assert!(!check("https://e.example/caf\u{e9}"));
    assert!(!check("https://e.example/caf%C3%A9"));
}

/// Patterns with many `*` against a long path: a backtracking matcher needs
/// exponential time here and a DP table `stars × path` cells (10^10 for the second
/// case); the greedy piece search does one pass. This finishes in milliseconds
/// because of the algorithm, not because of a time limit.
#[test]
fn pathological_patterns_are_matched_in_linear_time() {
    let path = format!("/{}", "a".repeat(1_000_000));
    let pattern = format!("/{}b", "*a".repeat(10_000));
    let body = format!("User-agent: *\nDisallow: {pattern}\n");
    assert!(allowed(&body, &path), "no `b`: no match");
    assert!(!allowed(&body, &format!("{path}b")));
    let body = format!("User-agent: *\nDisallow: /{}$\n", "*a".repeat(10_000));
    assert!(!allowed(&body, &path));
    assert!(allowed(&body, &format!("{path}b")));
    // The classic exponential case for naive recursion.
    let body = "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*b\n";
    assert!(allowed(body, &format!("/{}", "a".repeat(100_000))));
}

/// Many rules, each forced to scan: cost is rules × path, every step linear.
#[test]
fn pathological_rule_counts_stay_linear_per_rule() {
    let mut body = String::from("User-agent: *\n");
    for i in 0..20_000 {
        body.push_str(&format!("Disallow: /*x{i}y\n"));
    }
    let rules = rules(&body);
    assert_eq!(rules.len(), 20_000);
    assert!(rules.is_allowed(&format!("/{}", "x".repeat(2_000))));
    assert!(!rules.is_allowed("/ax19999y"));
}

const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// A body of `User-agent: *` then `line(i)` for i = 0, 1, ... cut at 512 KiB (the
/// default `max_robots_bytes`) like a truncated retrieval.
fn filled(line: impl Fn(usize) -> String) -> Vec<u8> {
    let mut body = b"User-agent: *\n".to_vec();
    let mut i = 0;
    while body.len() < MAX_ROBOTS_BYTES {
        body.extend_from_slice(line(i).as_bytes());
        i += 1;
    }
    body.truncate(MAX_ROBOTS_BYTES);
    body
}

/// FR-WF-ROBOTS-SIZE-01, memory side: a parsed file, and the rule set the origin
/// cache keeps, are at most twice the body plus a constant. Before the compact
/// representation a 512 KiB file of `Allow: a` lines held 58 252 rules in about
/// 1.9 MB of requested heap (more with allocator overhead) per cached origin.
#[test]
fn robots_size_01_parsed_rules_are_bounded_by_the_body() {
    let bound = |body: &[u8]| 2 * body.len() + 4096;
    let same = filled(|_| "Allow: a\n".to_owned());
    let distinct = filled(|i| format!("Disallow: /some/long/path/segment/{i:012}/*.php$\n"));
    let short = filled(|i| format!("Allow:{i:x}\n"));
    for (name, body, rule_count) in [
        ("Allow: a", &same, 1),
        ("distinct long", &distinct, 9_708),
        ("distinct short", &short, 48_058),
    ] {
        let robots = RobotsTxt::parse(body, true);
        let rules = robots.rules_for(TOKEN);
        assert_eq!(rules.len(), rule_count, "{name}");
        assert!(
            robots.heap_bytes() <= bound(body),
            "{name}: {}",
            robots.heap_bytes()
        );
        assert!(
            rules.heap_bytes() <= bound(body),
            "{name}: {}",
            rules.heap_bytes()
        );
    }
    // Identical rules are one rule: the 512 KiB `Allow: a` file is a few bytes.
    assert!(RobotsTxt::parse(&same, true).rules_for(TOKEN).heap_bytes() < 64);
    // Percent-encoding triples an escaped byte: the worst case stays within 3x.
    let escaped = filled(|i| format!("Disallow: /{i:x}\"\"\"\"\"\"\"\"\"\"\"\"\n"));
    let rules = RobotsTxt::parse(&escaped, true).rules_for(TOKEN);
    assert!(rules.heap_bytes() <= 3 * escaped.len() + 4096);
    assert!(!rules.is_allowed("/0%22%22%22%22%22%22%22%22%22%22%22%22"));
}

/// Past `MAX_RULES_PER_FILE` rule lines the rest of the file is ignored, as if the
/// body ended there (FR-WF-ROBOTS-SIZE-01, 02).
#[test]
fn robots_size_01_rule_lines_past_the_cap_are_ignored() {
    let mut body = String::from("User-agent: *\n");
    for i in 0..MAX_RULES_PER_FILE {
        body.push_str(&format!("Disallow: /{i}/\n"));
    }
    body.push_str("Disallow: /past-the-cap\nUser-agent: forge-webfetch\nDisallow: /\n");
    let robots = RobotsTxt::parse(body.as_bytes(), false);
    assert_eq!(robots.groups().len(), 1);
    let rules = robots.rules_for(TOKEN);
    assert_eq!(rules.len(), MAX_RULES_PER_FILE);
    assert!(!rules.is_allowed("/65535/x"));
    assert!(rules.is_allowed("/past-the-cap"));
    assert!(rules.is_allowed("/other"));
}

fn robots_like() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(b"User-agent: *".to_vec()),
        Just(b"User-agent: forge-webfetch".to_vec()),
        Just(b"user-agent:forge".to_vec()),
        "[Dd]isallow: ?[/*$a-c?=#%0-9A-F \t\u{e9}]{0,12}".prop_map(String::into_bytes),
        "[Aa]llow: ?[/*$a-c?=#%0-9A-F \t]{0,12}".prop_map(String::into_bytes),
        Just(b"# comment".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..16),
    ];
    let sep = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec())
    ];
    proptest::collection::vec((line, sep), 0..24).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(mut line, sep)| {
                line.extend(sep);
                line
            })
            .collect()
    })
}

/// 2 000 cases per property in CI; `PROPTEST_CASES=N` runs a longer fuzzing session.
fn fuzz_config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    ProptestConfig::with_cases(cases)
}

proptest! {
    #![proptest_config(fuzz_config())]

    /// Arbitrary bytes as robots.txt and arbitrary paths never panic.
    #[test]
    fn never_panics_on_arbitrary_bytes(
        body in proptest::collection::vec(any::<u8>(), 0..2048),
        truncated in any::<bool>(),
        token in "[A-Za-z0-9_-]{0,16}",
        path in any::<String>(),
    ) {
        let rules = RobotsTxt::parse(&body, truncated).rules_for(&token);
        let _ = rules.is_allowed(&path);
    }

    /// Robots-shaped input (real directives, wildcards, comments, BOMs, stray bytes).
    #[test]
    fn never_panics_on_robots_like_input(
        body in robots_like(),
        truncated in any::<bool>(),
        path in "/[a-c/*$?=#%0-9A-F\u{e9}]{0,24}",
    ) {
        let robots = RobotsTxt::parse(&body, truncated);
        for token in ["forge-webfetch", "forge", ""] {
            let _ = robots.rules_for(token).is_allowed(&path);
        }
    }
}

mod fetch;

/// `normalize_paths` (an extension): through the whole tool, against a server that
/// answers every path, as one that merges slashes and decodes `%2F` before routing
/// would for these variants of disallowed pages. By default (the SRD's literal RFC
/// 9309 matching) they are allowed and fetched; with `[tools.webfetch.robots]
/// normalize_paths = true` they are `robots_disallowed` and never requested, while
/// an allowed path is still fetched.
#[tokio::test]
async fn normalize_paths_refuses_what_a_normalizing_server_would_serve() {
    use serde_json::json;
    use webfetch::ErrorCode;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer};

    use crate::support::{self, Config, html};

    let server = MockServer::start().await;
    support::robots(
        &server,
        "User-agent: *\nDisallow: /private\nDisallow: /secret/\n",
    )
    .await;
    Mock::given(method("GET"))
        .respond_with(html(
            "<html><body><main><p>Served.</p></main></body></html>",
        ))
        .mount(&server)
        .await;
    let port = server.address().port();
    let url = |path: &str| json!({ "url": format!("http://127.0.0.1:{port}{path}") });
    let pages = || async {
        let requests = server.received_requests().await.unwrap();
        requests
            .iter()
            .filter(|r| r.url.path() != "/robots.txt")
            .count()
    };
    let variants = ["//private", "/x/..%2fprivate", "/secret%2Fx"];

    let literal = Config::new(&[port]).tool();
    for path in variants {
        let result = literal
            .call(&url(path), usize::MAX)
            .await
            .map(|built| built.json);
        assert!(result.is_ok(), "{path}: {result:?}");
    }
    assert_eq!(pages().await, variants.len());

    let hardened = Config::new(&[port])
        .section("[tools.webfetch.robots]\nnormalize_paths = true")
        .tool();
    for (path, shown) in [
        ("//private", "//private"),
        ("/x/..%2fprivate", "/x/..%2Fprivate"),
        ("/secret%2Fx", "/secret%2Fx"),
    ] {
        let error = hardened
            .call(&url(path), usize::MAX)
            .await
            .map(|built| built.json)
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::RobotsDisallowed, "{path}");
        assert_eq!(error.details_json()["path"], shown);
    }
    assert_eq!(
        pages().await,
        variants.len(),
        "no refused page was requested"
    );
    let allowed = hardened
        .call(&url("//public//page"), usize::MAX)
        .await
        .map(|built| built.json);
    assert!(allowed.is_ok(), "{allowed:?}");
    assert_eq!(pages().await, variants.len() + 1);
}
