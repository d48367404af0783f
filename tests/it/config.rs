//! Configuration: defaults and clamping of SRD 5.4, the start-up errors, env
//! expansion and the registration rules of 5.2.

use std::path::PathBuf;

use webfetch::ExtractionMode;
use webfetch::ToolExecutor;
use webfetch::WebFetchTool;
use webfetch::{ApprovalSettings, ConfigError, Loaded, Registration, Settings, ToolsMode};

fn load(toml: &str) -> Loaded {
    webfetch::load_str(
        toml,
        webfetch::LoadOptions {
            contract: webfetch::Contract::Srd,
            env: Some(&|name| match name {
                "HOME" => Some("/home/agent".to_owned()),
                "EMPTY" => Some(String::new()),
                _ => None,
            }),
        },
    )
    .unwrap_or_else(|e| panic!("{toml}: {e}"))
}

fn error(toml: &str) -> ConfigError {
    webfetch::load_str(toml, webfetch::LoadOptions::default()).expect_err(toml)
}

#[test]
fn defaults_match_the_5_4_table() {
    let s = load("").settings;
    assert_eq!(s.user_agent, "forge-webfetch/1.0");
    assert_eq!(s.timeout_seconds, 20);
    assert_eq!(s.max_redirects, 5);
    assert_eq!(s.default_max_chunk_tokens, 600);
    assert_eq!(s.cache.ttl_days, 7);
    assert_eq!(s.cache.max_entries, 10_000);
    assert_eq!(s.cache.max_bytes, 1_073_741_824);
    assert_eq!(
        s.cache.dir,
        Some(std::env::temp_dir().join("forge-webfetch"))
    );
    assert_eq!(s.max_download_bytes, 5_242_880);
    assert_eq!(s.robots.cache_entries, 1024);
    assert_eq!(s.robots.cache_ttl.as_secs(), 24 * 3600);
    assert!(!s.robots.fail_open);
    assert!(!s.robots.normalize_paths);
    assert_eq!(s.robots.user_agent_token, "forge-webfetch");
    assert_eq!(s.robots.max_robots_bytes, 524_288);
    assert!(!s.allow_auto_execution);
    assert!(s.browser.enabled);
    assert_eq!(s.browser.chromium_path, None);
    assert_eq!(s.browser.network_idle_ms, 20_000);
    assert_eq!(s.browser.max_rendered_dom_bytes, 5_242_880);
    assert_eq!(s.browser.max_total_subresource_bytes, 20_971_520);
    assert_eq!(s.browser.block_resources, vec!["Image", "Font", "Media"]);
    let sec = &s.security;
    assert!(
        sec.block.private_ips && sec.block.loopback && sec.block.link_local && sec.block.reserved
    );
    assert_eq!(sec.allowed_ports, vec![80, 443]);
    assert!(sec.additional_blocked_cidrs.is_empty());
    assert_eq!(sec.max_dns_attempts, 2);
    assert!(!sec.allow_insecure_overrides);
    assert!(!s.use_system_proxy);
    assert!(s.rendering.js_heavy_domains.is_empty());
    assert!(s.rendering.spa_fallback_enabled);
    assert_eq!(s.rendering.min_extracted_chars, 400);
    assert_eq!(s.extraction.mode, ExtractionMode::Srd);
    assert!(s.serve.allowed_origins.is_empty());
    assert_eq!(s, Settings::default());
}

/// Every clamped field of 5.4, below and above its range.
#[test]
fn every_clamp_of_the_5_4_table() {
    type Get = fn(&Settings) -> u64;
    let rows: [(&str, &str, u64, u64, u64, u64, Get); 14] = [
        ("", "timeout_seconds", 0, 1, 301, 300, |s| {
            s.timeout_seconds.into()
        }),
        ("", "max_redirects", 21, 20, 21, 20, |s| {
            s.max_redirects.into()
        }),
        ("", "default_max_chunk_tokens", 5, 128, 4096, 2048, |s| {
            s.default_max_chunk_tokens.into()
        }),
        ("", "cache_ttl_days", 0, 1, 1000, 365, |s| {
            s.cache.ttl_days.into()
        }),
        (
            "",
            "max_cache_entries",
            2_000_000,
            1_000_000,
            2_000_000,
            1_000_000,
            |s| s.cache.max_entries.into(),
        ),
        ("", "max_cache_bytes", 5, 1 << 20, 1 << 41, 1 << 40, |s| {
            s.cache.max_bytes
        }),
        ("", "max_download_bytes", 1, 1024, 1 << 30, 100 << 20, |s| {
            s.max_download_bytes
        }),
        (
            "",
            "robots_cache_entries",
            200_000,
            100_000,
            200_000,
            100_000,
            |s| s.robots.cache_entries.into(),
        ),
        ("", "robots_cache_ttl_hours", 0, 1, 9999, 720, |s| {
            s.robots.cache_ttl.as_secs() / 3600
        }),
        ("security", "max_dns_attempts", 0, 1, 11, 10, |s| {
            s.security.max_dns_attempts.into()
        }),
        (
            "browser",
            "network_idle_ms",
            10,
            1000,
            999_999,
            120_000,
            |s| s.browser.network_idle_ms.into(),
        ),
        (
            "browser",
            "max_rendered_dom_bytes",
            1,
            1024,
            1 << 30,
            100 << 20,
            |s| s.browser.max_rendered_dom_bytes,
        ),
        (
            "browser",
            "max_total_subresource_bytes",
            1,
            1 << 20,
            1 << 30,
            500 << 20,
            |s| s.browser.max_total_subresource_bytes,
        ),
        (
            "rendering",
            "min_extracted_chars",
            10_001,
            10_000,
            10_001,
            10_000,
            |s| s.rendering.min_extracted_chars.into(),
        ),
    ];
    for (table, key, low, low_clamped, high, high_clamped, get) in rows {
        let section = if table.is_empty() {
            String::new()
        } else {
            format!(".{table}")
        };
        for (value, expected) in [(low, low_clamped), (high, high_clamped)] {
            let loaded = load(&format!("[tools.webfetch{section}]\n{key} = {value}\n"));
            assert_eq!(get(&loaded.settings), expected, "{key} = {value}");
            assert!(
                loaded
                    .warnings
                    .iter()
                    .any(|w| w.starts_with(&format!("{key} = {value} is out of range"))),
                "{key}: {:?}",
                loaded.warnings
            );
        }
    }
    // In-range values are kept and do not warn.
    let loaded = load("[tools.webfetch]\ntimeout_seconds = 7\n");
    assert_eq!(loaded.settings.timeout_seconds, 7);
    assert!(loaded.warnings.is_empty());
    assert_eq!(
        load("[tools.webfetch]\nmax_cache_entries = 0\n")
            .settings
            .cache
            .dir,
        None
    );
}

#[test]
fn fr_wf_sec_ovr_01_lists_every_affected_setting() {
    let e = error(
        "[tools.webfetch.security]\nblock_loopback = false\nblock_reserved = false\nallow_insecure_overrides = false\n",
    );
    assert_eq!(
        e.to_string(),
        "Configuration error: SSRF protection cannot be disabled without allow_insecure_overrides=true\n\
         Affected settings: block_loopback=false, block_reserved=false"
    );
}

#[test]
fn fr_wf_05b_warning_names_the_disabled_toggles() {
    let loaded = load(
        "[tools.webfetch.security]\nblock_link_local = false\nblock_reserved = false\nallow_insecure_overrides = true\n",
    );
    assert_eq!(
        loaded.warnings,
        vec!["SSRF protection disabled for: block_link_local, block_reserved"]
    );
    assert!(
        load("[tools.webfetch.security]\nallow_insecure_overrides = true\n")
            .warnings
            .is_empty()
    );
}

#[test]
fn fr_wf_05g_invalid_cidr_is_a_startup_error() {
    for bad in ["10.0.0.0/33", "not-a-cidr", "10.0.0.1/8", "::1/129", ""] {
        let e = error(&format!(
            "[tools.webfetch.security]\nadditional_blocked_cidrs = [\"{bad}\"]\n"
        ));
        assert_eq!(
            e.to_string(),
            format!("Configuration error: Invalid CIDR in additional_blocked_cidrs: \"{bad}\"")
        );
    }
    let loaded = load(
        "[tools.webfetch.security]\nadditional_blocked_cidrs = [\"100.100.100.200\", \"fd00:ec2::254/128\"]\n",
    );
    assert_eq!(loaded.settings.security.additional_blocked_cidrs.len(), 2);
}

#[test]
fn fr_wf_blockres_02_unknown_resource_type_is_a_startup_error() {
    let e = error("[tools.webfetch.browser]\nblock_resources = [\"image\", \"invalid_type\"]\n");
    assert_eq!(
        e.to_string(),
        "Configuration error: Unknown block_resources value: \"invalid_type\"\n\
         Valid values: Document, Stylesheet, Image, Media, Font, Script, TextTrack, XHR, Fetch, Prefetch, \
         EventSource, WebSocket, Manifest, SignedExchange, Ping, CSPViolationReport, Preflight, Other"
    );
    // Case-insensitive (FR-WF-BLOCKRES-01), stored in CDP spelling.
    let loaded =
        load("[tools.webfetch.browser]\nblock_resources = [\"IMAGE\", \"xhr\", \"Stylesheet\"]\n");
    assert_eq!(
        loaded.settings.browser.block_resources,
        vec!["Image", "XHR", "Stylesheet"]
    );
    assert!(
        load("[tools.webfetch.browser]\nblock_resources = []\n")
            .settings
            .browser
            .block_resources
            .is_empty()
    );
}

#[test]
fn unknown_keys_are_errors_that_name_them() {
    for (toml, key) in [
        ("[tools.webfetch]\ntimeout_secs = 5\n", "timeout_secs"),
        (
            "[tools.webfetch.security]\nblock_privat_ips = false\n",
            "block_privat_ips",
        ),
        ("[tools.webfetch.browser]\nheadless = false\n", "headless"),
        ("[tools.webfetch.robots]\nfailopen = true\n", "failopen"),
        ("[tools.webfetch.rendering]\njs_heavy = []\n", "js_heavy"),
        ("[tools.webfetch.http]\nproxy = \"x\"\n", "proxy"),
        ("[tools.webfetch.cache]\ndir = \"x\"\n", "cache"),
        (
            "[tools.webfetch.extraction]\nalgorithm = \"x\"\n",
            "algorithm",
        ),
    ] {
        let e = error(toml).to_string();
        assert!(e.starts_with("Configuration error: "), "{e}");
        assert!(e.contains(key), "{toml} -> {e}");
    }
    // The host's own tables are not ours to judge.
    load("[model]\nname = \"x\"\n[tools.shell]\nallow = true\n[tools.webfetch]\nenabled = true\n");
}

/// Extension: `[tools.webfetch.extraction] mode` picks the default extraction of
/// HTML pages; absent, it is the SRD's.
#[test]
fn extraction_mode_is_srd_unless_configured() {
    assert_eq!(load("").settings.extraction.mode, ExtractionMode::Srd);
    assert_eq!(
        load("[tools.webfetch.extraction]\n")
            .settings
            .extraction
            .mode,
        ExtractionMode::Srd
    );
    for (written, mode) in [
        ("srd", ExtractionMode::Srd),
        ("article", ExtractionMode::Article),
    ] {
        let toml = format!("[tools.webfetch.extraction]\nmode = \"{written}\"\n");
        assert_eq!(load(&toml).settings.extraction.mode, mode, "{toml}");
    }
}

/// Extension: `[tools.webfetch.browser] max_concurrent_renders`, the
/// cap on Chromiums one tool runs at once: 2 by default, clamped to 1..=64.
#[test]
fn max_concurrent_renders_defaults_to_2_and_is_clamped() {
    assert_eq!(load("").settings.browser.max_concurrent_renders, 2);
    for (written, resolved, warns) in [(5, 5, false), (0, 1, true), (100, 64, true)] {
        let toml = format!("[tools.webfetch.browser]\nmax_concurrent_renders = {written}\n");
        let loaded = load(&toml);
        assert_eq!(
            loaded.settings.browser.max_concurrent_renders, resolved,
            "{toml}"
        );
        assert_eq!(
            loaded
                .warnings
                .iter()
                .any(|w| w.contains("max_concurrent_renders")),
            warns,
            "{toml}"
        );
    }
}

#[test]
fn extraction_mode_bad_value_is_a_startup_error_naming_it() {
    for bad in ["Article", "readability", ""] {
        let toml = format!("[tools.webfetch.extraction]\nmode = \"{bad}\"\n");
        let e = error(&toml).to_string();
        assert!(
            e.starts_with("Configuration error: tools.webfetch.extraction.mode"),
            "{e}"
        );
        assert!(e.contains(&format!("`{bad}`")), "{e}");
        assert!(e.contains("`srd`") && e.contains("`article`"), "{e}");
    }
    let e = error("[tools.webfetch.extraction]\nmode = 1\n").to_string();
    assert!(e.starts_with("Configuration error: "), "{e}");
}

/// Extension: `[tools.webfetch.serve] allowed_origins`, empty unless
/// configured; each entry must be an origin, else start-up stops naming it.
#[test]
fn serve_allowed_origins_are_origins_or_a_startup_error_naming_them() {
    assert!(load("").settings.serve.allowed_origins.is_empty());
    let loaded = load(
        "[tools.webfetch.serve]
\
         allowed_origins = [\"https://Agents.Example\", \"http://10.0.0.5:8080\"]\n",
    );
    let shown: Vec<String> = loaded
        .settings
        .serve
        .allowed_origins
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(shown, ["https://agents.example", "http://10.0.0.5:8080"]);
    for bad in [
        "https://agents.example/",
        "agents.example",
        "null",
        "ftp://a.example",
    ] {
        let toml = format!(
            "[tools.webfetch.serve]\nallowed_origins = [\"https://ok.example\", \"{bad}\"]\n"
        );
        let e = error(&toml).to_string();
        assert!(
            e.starts_with("Configuration error: tools.webfetch.serve.allowed_origins"),
            "{e}"
        );
        assert!(e.contains(&format!("{bad:?}")), "{e}");
    }
    let e = error("[tools.webfetch.serve]\nallowed_origin = []\n").to_string();
    assert!(e.contains("allowed_origin"), "{e}");
}

#[test]
fn wrong_types_and_bad_toml_are_errors() {
    for toml in [
        "[tools.webfetch]\ntimeout_seconds = \"20\"\n",
        "[tools.webfetch]\ntimeout_seconds = -1\n",
        "[tools.webfetch.security]\nallowed_ports = [70000]\n",
        "[tools.webfetch.security]\nallowed_ports = [0]\n",
        "[tools.webfetch\n",
        "[tools.webfetch]\nuser_agent = \"a\\nb\"\n",
        "[tools]\nmode = \"sometimes\"\n",
    ] {
        assert!(
            error(toml).to_string().starts_with("Configuration error: "),
            "{toml}"
        );
    }
}

#[test]
fn fr_wf_cfg_03_env_expansion() {
    let s = load("[tools.webfetch]\ncache_dir = \"${HOME}/.cache/webfetch\"\n").settings;
    assert_eq!(
        s.cache.dir,
        Some(PathBuf::from("/home/agent/.cache/webfetch"))
    );
    // ${TEMP} falls back to the OS temp dir when unset.
    let s = load("[tools.webfetch]\ncache_dir = \"${TEMP}/wf\"\n").settings;
    assert_eq!(s.cache.dir, Some(std::env::temp_dir().join("wf")));
    // Empty (after expansion) disables caching (FR-WF-CFG-03a).
    assert_eq!(
        load("[tools.webfetch]\ncache_dir = \"\"\n")
            .settings
            .cache
            .dir,
        None
    );
    assert_eq!(
        load("[tools.webfetch]\ncache_dir = \"${EMPTY}  \"\n")
            .settings
            .cache
            .dir,
        None
    );
    // Relative paths resolve against the working directory.
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        load("[tools.webfetch]\ncache_dir = \"rel/cache\"\n")
            .settings
            .cache
            .dir,
        Some(cwd.join("rel/cache"))
    );
    let s = load("[tools.webfetch.browser]\nchromium_path = \"${HOME}/bin/chromium\"\n").settings;
    assert_eq!(
        s.browser.chromium_path,
        Some(PathBuf::from("/home/agent/bin/chromium"))
    );
    assert_eq!(
        load("[tools.webfetch.browser]\nchromium_path = \"\"\n")
            .settings
            .browser
            .chromium_path,
        None
    );
    assert_eq!(
        load("[tools.webfetch.browser]\nchromium_path = \"bin/chromium\"\n")
            .settings
            .browser
            .chromium_path,
        Some(cwd.join("bin/chromium"))
    );
    // An unset variable is an error, not a silent empty string.
    let e = webfetch::load_str(
        "[tools.webfetch]\ncache_dir = \"${NOPE_X}/c\"\n",
        webfetch::LoadOptions {
            env: Some(&|_| None),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("NOPE_X"), "{e}");
}

#[test]
fn robots_token_derivation_and_js_heavy_normalisation() {
    assert_eq!(
        load("[tools.webfetch]\nuser_agent = \"MyBot/2.0 (+https://x)\"\n")
            .settings
            .robots
            .user_agent_token,
        "MyBot"
    );
    assert_eq!(
        load("[tools.webfetch]\nuser_agent = \"my bot!\"\n")
            .settings
            .robots
            .user_agent_token,
        "mybot"
    );
    assert_eq!(
        load("[tools.webfetch]\nuser_agent = \"/1.0\"\n")
            .settings
            .robots
            .user_agent_token,
        "forge-webfetch"
    );
    let explicit = load(
        "[tools.webfetch]\nuser_agent = \"MyBot/2.0\"\n[tools.webfetch.robots]\nuser_agent_token = \"other\"\n",
    );
    assert_eq!(explicit.settings.robots.user_agent_token, "other");
    let s = load("[tools.webfetch.rendering]\njs_heavy_domains = [\"App.Example.COM\", \".München.example\"]\n").settings;
    assert_eq!(
        s.rendering.js_heavy_domains,
        vec!["app.example.com", ".xn--mnchen-3ya.example"]
    );
}

#[test]
fn fr_wf_cfg_prec_registration_rules() {
    let reg = |toml: &str| load(toml).registration();
    assert_eq!(
        reg(""),
        Registration::NotRegistered,
        "enabled defaults to false"
    );
    assert_eq!(
        reg("[tools.webfetch]\nenabled = true\n"),
        Registration::Registered
    );
    assert_eq!(
        reg("[tools]\nmode = \"disabled\"\n[tools.webfetch]\nenabled = true\n"),
        Registration::NotRegistered
    );
    assert_eq!(
        reg("[tools]\nmode = \"parse_only\"\n[tools.webfetch]\nenabled = true\n"),
        Registration::ParseOnly { advertised: false }
    );
    assert_eq!(
        reg("[tools]\nmode = \"parse_only\"\n[[tools.definitions]]\nname = \"web_fetch\"\n"),
        Registration::ParseOnly { advertised: true }
    );
    assert_eq!(
        load("[tools]\nmode = \"parse_only\"\n").mode,
        ToolsMode::ParseOnly
    );
}

/// The executor seam a host calls answers like `Loaded::requires_approval`: the
/// tool carries the host's deny mode and allowlist in its settings (FR-WF-OP-02).
#[test]
fn fr_wf_op_02_tool_requires_approval_follows_the_loaded_config() {
    let tool = |toml: &str| WebFetchTool::new(load(toml).settings);
    let cases = [
        ("", true),
        ("[tools.webfetch]\nallow_auto_execution = true\n", false),
        ("[tools.approval]\nallowlist = [\"web_fetch\"]\n", false),
        ("[tools.approval]\nallowlist = [\"other_tool\"]\n", true),
        (
            "[tools.approval]\nmode = \"deny\"\n[tools.webfetch]\nallow_auto_execution = true\n",
            true,
        ),
        (
            "[tools.approval]\nmode = \"deny\"\nallowlist = [\"web_fetch\"]\n",
            true,
        ),
    ];
    for (toml, expected) in cases {
        assert_eq!(tool(toml).requires_approval(), expected, "{toml}");
        assert_eq!(load(toml).requires_approval(), expected, "{toml}");
    }
    // Settings resolved from `[tools.webfetch]` alone carry no host policy.
    assert_eq!(Settings::default().approval, ApprovalSettings::default());
}

#[test]
fn fr_wf_op_02_approval_mapping() {
    assert!(load("").requires_approval());
    assert!(!load("[tools.webfetch]\nallow_auto_execution = true\n").requires_approval());
    assert!(!load("[tools.approval]\nallowlist = [\"web_fetch\"]\n").requires_approval());
    assert!(
        load("[tools.approval]\nmode = \"deny\"\n[tools.webfetch]\nallow_auto_execution = true\n")
            .requires_approval()
    );
}
