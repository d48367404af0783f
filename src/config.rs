//! Configuration: the SRD's `[tools.webfetch]` TOML table (5.1, 5.3), its defaults and
//! clamping (5.4) and the start-up checks that refuse an unsafe or invalid setting
//! (FR-WF-SEC-OVR-01, FR-WF-05g, FR-WF-BLOCKRES-02).
//!
//! [`RawConfig`] mirrors the file; [`Settings`] is what the tool runs with: every value
//! present, clamped and validated. Loading is pure: warnings (FR-WF-05b, clamps) are
//! returned for the caller to log.
//!
//! Unknown keys inside `[tools.webfetch]` are errors that name the key: a typo in a
//! security setting must never pass silently. Keys outside `[tools]` belong to the
//! host agent and are ignored, so one file serves a host and the CLI alike.
//!
//! Two sub-tables are extensions of ours, not the SRD's:
//! `[tools.webfetch.extraction] mode = "srd" | "article" | "auto"`
//! ([`ExtractionSettings`]), whose SRD-contract default, `srd`, leaves every response as the SRD specifies it, and
//! `[tools.webfetch.serve] allowed_origins` ([`ServeSettings`]: browser
//! origins `webfetch serve` admits besides its own; no tool response changes). Three
//! keys are extensions too: `[tools.webfetch.browser] allow_no_sandbox` (default
//! `false`), the only way to run Chromium without its sandbox,
//! `max_concurrent_renders` (the cap on concurrent browser renders; it
//! changes no response), and `[tools.webfetch.robots] normalize_paths` (default
//! `false`: also refuse a path whose form as a normalizing server routes
//! it is disallowed; off, robots.txt matching is the SRD's literal one).
//!
//! # Two contracts
//!
//! Settings are resolved for a [`Contract`] (DESIGN.md, "Two contracts"). The SRD
//! contract (the library, the executor seam, `webfetch fetch` and `extract`) answers
//! exactly as the SRD says; the agent contract (`webfetch mcp`, `webfetch serve`)
//! defaults some extension keys to what serves a model best. The contract decides
//! only the value of an extension key the file leaves unset: a key set in the file
//! means the same under both, and no SRD key depends on it. The raw table keeps such a
//! key as an `Option`; [`Contract::pick`] resolves it. The keys with an agent default:
//!
//! | key | SRD contract | agent contract |
//! | --- | --- | --- |
//! | `[tools.webfetch.browser] robots_for_frames` | `false` | `true` |
//! | `[tools.webfetch.extraction] mode` | `"srd"` | `"auto"` |
//! | `[tools.webfetch.content] formats` | `[]` | `["pdf", "markdown", "json", "feed"]` |
//! | `[tools.webfetch.http] detect_walls` | `false` | `true` |
//!
//! `[tools.webfetch.fleet]` is the shared state of a fleet on Redis and
//! the politeness limit ([`fleet`]); it has no contract default.

mod fleet;
mod raw;
mod registration;
pub(crate) mod secret_file;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;

use crate::bot_auth::BotAuth;
use crate::canonical_url::Origin;
use crate::vocabulary::ExtractionMode;
pub use raw::ToolsMode;
pub(crate) use raw::{
    RawBotAuth, RawBrowser, RawConfig, RawExtraction, RawFile, RawRendering, RawSecurity, RawServe,
};

pub use self::fleet::{FleetKey, FleetSettings, RedisSettings, RedisUrl};
pub use self::registration::Registration;

mod content;

pub use self::content::ContentSettings;

/// A configuration error that stops start-up. `Display` is the full message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Configuration error: {0}")]
pub struct ConfigError(String);

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ConfigError(message.into())
    }
}

/// The CDP ResourceType values accepted in `block_resources` (FR-WF-BLOCKRES-01).
pub(crate) const RESOURCE_TYPES: [&str; 18] = [
    "Document",
    "Stylesheet",
    "Image",
    "Media",
    "Font",
    "Script",
    "TextTrack",
    "XHR",
    "Fetch",
    "Prefetch",
    "EventSource",
    "WebSocket",
    "Manifest",
    "SignedExchange",
    "Ping",
    "CSPViolationReport",
    "Preflight",
    "Other",
];

/// Default User-Agent (FR-WF-10).
pub(crate) const DEFAULT_USER_AGENT: &str = "forge-webfetch/1.0";

/// Which SSRF range families are blocked (FR-WF-05 toggles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockToggles {
    /// `block_private_ips`.
    pub private_ips: bool,
    /// `block_loopback`.
    pub loopback: bool,
    /// `block_link_local`.
    pub link_local: bool,
    /// `block_reserved`.
    pub reserved: bool,
}

impl Default for BlockToggles {
    fn default() -> Self {
        BlockToggles {
            private_ips: true,
            loopback: true,
            link_local: true,
            reserved: true,
        }
    }
}

impl BlockToggles {
    /// The config names of the toggles that are off, in declaration order.
    pub fn disabled_names(&self) -> Vec<&'static str> {
        [
            ("block_private_ips", self.private_ips),
            ("block_loopback", self.loopback),
            ("block_link_local", self.link_local),
            ("block_reserved", self.reserved),
        ]
        .into_iter()
        .filter(|(_, on)| !on)
        .map(|(name, _)| name)
        .collect()
    }
}

/// `[tools.webfetch.security]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecuritySettings {
    /// Range toggles.
    pub block: BlockToggles,
    /// The complete port allowlist (FR-WF-PORT-01); never empty.
    pub allowed_ports: Vec<u16>,
    /// Always-blocked extra ranges (FR-WF-05g).
    pub additional_blocked_cidrs: Vec<IpNet>,
    /// The gate for disabling toggles (FR-WF-05b).
    pub allow_insecure_overrides: bool,
    /// Connection attempts per fetch, 1..=10 (FR-WF-DNS-02).
    pub max_dns_attempts: u32,
}

impl Default for SecuritySettings {
    fn default() -> Self {
        SecuritySettings {
            block: BlockToggles::default(),
            allowed_ports: vec![80, 443],
            additional_blocked_cidrs: Vec::new(),
            allow_insecure_overrides: false,
            max_dns_attempts: 2,
        }
    }
}

/// The on-disk cache settings (3.6). `dir` is `None` when caching is disabled by
/// configuration (empty `cache_dir` or `max_cache_entries = 0`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheSettings {
    /// Absolute cache directory, or `None` when disabled.
    pub dir: Option<PathBuf>,
    /// Entry TTL in days, 1..=365.
    pub ttl_days: u32,
    /// Entry limit, 0..=1_000_000 (0 disables caching).
    pub max_entries: u32,
    /// Size budget in bytes.
    pub max_bytes: u64,
}

/// `[tools.webfetch.robots]` plus the robots cache limits, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RobotsSettings {
    /// Allow-all with a note when robots.txt is unavailable.
    pub fail_open: bool,
    /// Token for group matching (FR-WF-ROBOTS-UA-TOKEN-01), derived when absent.
    pub user_agent_token: String,
    /// Size cap on decompressed robots.txt bytes; at least 1 (SRD-READINGS 15).
    pub max_robots_bytes: u64,
    /// Origin cache capacity; 0 disables the cache.
    pub cache_entries: u32,
    /// Origin cache TTL.
    pub cache_ttl: Duration,
    /// Extension, default `false`: also refuse a path whose form as a
    /// normalizing server routes it (`%2F` decoded, slashes merged, dot segments
    /// removed) is disallowed. Off, matching is RFC 9309's literal one (FR-WF-08c).
    pub normalize_paths: bool,
}

/// `[tools.webfetch.browser]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrowserSettings {
    /// Browser mode and fallback allowed.
    pub enabled: bool,
    /// Absolute path of Chromium, or `None` to search PATH.
    pub chromium_path: Option<PathBuf>,
    /// Cap on the network-idle wait, ms.
    pub network_idle_ms: u32,
    /// Cap on `outerHTML` bytes.
    pub max_rendered_dom_bytes: u64,
    /// Total subresource budget.
    pub max_total_subresource_bytes: u64,
    /// Blocked CDP resource types, in canonical spelling.
    pub block_resources: Vec<&'static str>,
    /// Extension: how many browser renders one tool (all its clones,
    /// so all sessions of `webfetch serve`) runs at once, 1..=64, default
    /// 2; a call past the cap waits within its
    /// own deadline, then fails with `timeout`.
    pub max_concurrent_renders: u32,
    /// Run Chromium with `--no-sandbox` (extension, default `false`): only for
    /// kernels that cannot give Chromium its sandbox. A warning is logged at each
    /// launch.
    pub allow_no_sandbox: bool,
    /// Extension: check robots.txt for the document requests of
    /// iframes and frames too (each redirect hop and script-started navigation of
    /// a frame included), through the call's robots check, and fail those it
    /// refuses, so none of their text reaches the output. FR-WF-ROBOTS-SCOPE-01
    /// says frames MUST NOT be blocked by robots.txt, so this is off under the
    /// SRD contract and on under the agent contract unless the file sets it
    /// ([`Contract`]). Other subresources (scripts, XHR, fetch, images, ...)
    /// are never robots-checked.
    pub robots_for_frames: bool,
}

/// Default of `[tools.webfetch.browser] max_concurrent_renders` (extension): each
/// render is a Chromium process of a few hundred MB.
pub(crate) const DEFAULT_MAX_CONCURRENT_RENDERS: u32 = 2;

impl Default for BrowserSettings {
    fn default() -> Self {
        BrowserSettings {
            enabled: true,
            chromium_path: None,
            network_idle_ms: 20_000,
            max_rendered_dom_bytes: 5 * 1024 * 1024,
            max_total_subresource_bytes: 20 * 1024 * 1024,
            block_resources: vec!["Image", "Font", "Media"],
            max_concurrent_renders: DEFAULT_MAX_CONCURRENT_RENDERS,
            allow_no_sandbox: false,
            robots_for_frames: false,
        }
    }
}

/// `[tools.webfetch.rendering]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderingSettings {
    /// Normalised `js_heavy_domains` entries (FR-WF-RENDER-JS-01): a leading `.`
    /// means "subdomains of".
    pub js_heavy_domains: Vec<String>,
    /// SPA fallback enabled (FR-WF-12e).
    pub spa_fallback_enabled: bool,
    /// Threshold in chars (FR-WF-12c-UNIT).
    pub min_extracted_chars: u32,
}

impl Default for RenderingSettings {
    fn default() -> Self {
        RenderingSettings {
            js_heavy_domains: Vec::new(),
            spa_fallback_enabled: true,
            min_extracted_chars: 400,
        }
    }
}

/// `[tools.webfetch.extraction]`, resolved (extension).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtractionSettings {
    /// The extraction of HTML pages when a call names none: `srd` (FR-WF-13, the
    /// SRD contract's default), `article`, or `auto` (the agent
    /// contract's default).
    pub mode: ExtractionMode,
}

/// The contract a front door answers by (DESIGN.md, "Two contracts"): it decides
/// the value of an extension key the file leaves unset, and nothing else (see the
/// module documentation for the keys).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Contract {
    /// The SRD's answers, byte for byte: the library, the executor seam,
    /// `webfetch fetch` and `webfetch extract`.
    #[default]
    Srd,
    /// What serves a model best: `webfetch mcp` and `webfetch serve`, the front
    /// doors built for agents.
    Agent,
}

impl Contract {
    /// An extension key's value: the file's when it sets one, else this contract's
    /// default (`srd` or `agent`).
    pub fn pick<T>(self, set: Option<T>, srd: T, agent: T) -> T {
        set.unwrap_or(match self {
            Contract::Srd => srd,
            Contract::Agent => agent,
        })
    }
}

/// `[tools.webfetch.serve]`, resolved (extension).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeSettings {
    /// Browser origins `webfetch serve` admits besides its own (a reverse
    /// proxy's public origin, say); every other `Origin` is refused with `403`.
    /// Each entry was checked to be `scheme://host[:port]` at load.
    pub allowed_origins: Vec<Origin>,
}

/// The host's `[tools.approval]` as it concerns `web_fetch` (FR-WF-OP-02).
///
/// Not part of `[tools.webfetch]`: loading a file fills it from `[tools.approval]`;
/// settings resolved alone leave the default (no deny mode, not allowlisted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalSettings {
    /// `tools.approval.mode` is `deny`: overrides auto-execution and the allowlist.
    pub deny: bool,
    /// `web_fetch` is in `tools.approval.allowlist`.
    pub allowlisted: bool,
}

/// Everything the tool runs with: every field present, clamped and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// `tools.webfetch.enabled` as written (`None` when absent).
    pub enabled: Option<bool>,
    /// User-Agent header (FR-WF-10).
    pub user_agent: String,
    /// Whole-fetch budget, 1..=300 s (FR-WF-10a).
    pub timeout_seconds: u32,
    /// Redirect hops, 0..=20 (FR-WF-07).
    pub max_redirects: u32,
    /// Default chunk budget, 128..=2048.
    pub default_max_chunk_tokens: u32,
    /// Disk cache.
    pub cache: CacheSettings,
    /// Cap on decompressed bytes per response (FR-WF-10e).
    pub max_download_bytes: u64,
    /// robots.txt.
    pub robots: RobotsSettings,
    /// Skip approval (FR-WF-OP-02).
    pub allow_auto_execution: bool,
    /// The host's approval policy for `web_fetch` (FR-WF-OP-02).
    pub approval: ApprovalSettings,
    /// Browser mode.
    pub browser: BrowserSettings,
    /// SSRF policy.
    pub security: SecuritySettings,
    /// Use HTTP_PROXY / HTTPS_PROXY (FR-WF-10d).
    pub use_system_proxy: bool,
    /// Extension, `[tools.webfetch.http] detect_walls`: a site's bot challenge or
    /// block page (whatever its status) and a 402 are errors that say so
    /// (`reason: "bot_challenge"` / `"payment_required"`), never content; and a
    /// page that is an empty application shell read without a browser is noted
    /// `javascript_required`. Agent contract default on, SRD contract off.
    pub detect_walls: bool,
    /// Rendering selection.
    pub rendering: RenderingSettings,
    /// Extraction defaults (extension).
    pub extraction: ExtractionSettings,
    /// Extension: the formats read beyond HTML and plain text, and
    /// their limits.
    pub content: ContentSettings,
    /// The fleet's shared state and the politeness limit (extension).
    pub fleet: FleetSettings,
    /// `webfetch serve`'s settings (extension).
    pub serve: ServeSettings,
    /// Extension, `[tools.webfetch.bot_auth]`: the key every request is signed
    /// with (Web Bot Auth), when configured.
    pub bot_auth: Option<BotAuth>,
}

impl Default for Settings {
    /// The 5.4 defaults (the SRD contract), with `cache_dir` resolved from
    /// `${TEMP}/forge-webfetch`.
    fn default() -> Self {
        Settings::from_raw(&RawConfig::default(), &std_env, Contract::Srd)
            .expect("the default configuration is valid")
            .settings
    }
}

impl Settings {
    /// `requires_approval()` per FR-WF-OP-02: `allow_auto_execution` makes
    /// `web_fetch` allowlisted, so auto-execution or the allowlist skip the prompt,
    /// but a global deny mode (`tools.approval.mode = "deny"`) always wins.
    pub fn requires_approval(&self) -> bool {
        if self.approval.deny {
            return true;
        }
        !(self.allow_auto_execution || self.approval.allowlisted)
    }

    /// The whole-fetch budget as a duration.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(u64::from(self.timeout_seconds))
    }

    /// `timeout_seconds` in milliseconds: the `details.timeout_ms` of a timeout
    /// (SRD-READINGS 10).
    pub fn timeout_ms(&self) -> u64 {
        u64::from(self.timeout_seconds) * 1000
    }
}

/// A loaded configuration: the host's tool settings, our settings and the warnings
/// to log at start-up.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Loaded {
    /// `tools.mode`.
    pub mode: ToolsMode,
    /// `web_fetch` is in `[[tools.definitions]]`.
    pub defined_for_parse_only: bool,
    /// The resolved `[tools.webfetch]`.
    pub settings: Settings,
    /// Start-up warnings (FR-WF-05b, clamped values).
    pub warnings: Vec<String>,
}

/// Settings plus the warnings produced while resolving them.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The settings.
    pub settings: Settings,
    /// Warnings to log at start-up.
    pub warnings: Vec<String>,
}

/// Looks up an environment variable; a seam so tests need not touch the process env.
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn std_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// How a configuration is read: one value for every variant of the loader
/// ("one way to call"). The default is the SRD contract and the
/// process environment.
#[derive(Clone, Copy, Default)]
pub struct LoadOptions<'a> {
    /// The front door's contract: an extension key the file leaves
    /// unset takes this contract's default.
    pub contract: Contract,
    /// Where environment variables are looked up; `None` is the process
    /// environment. A seam, so tests need not touch the process env.
    pub env: Option<EnvLookup<'a>>,
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("contract", &self.contract)
            .field("custom_env", &self.env.is_some())
            .finish()
    }
}

/// Reads and parses a config file ([`load_str`] of its text).
pub fn load_file(path: &Path, options: LoadOptions<'_>) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(format!("cannot read {}: {e}", path.display())))?;
    load_str(&text, options)
}

/// Parses a whole TOML file (FR-WF-CFG-01): the host's tool settings
/// (`tools.mode`, approval, definitions) and `[tools.webfetch]` resolved by
/// `options`.
pub fn load_str(text: &str, options: LoadOptions<'_>) -> Result<Loaded, ConfigError> {
    let file: RawFile = toml::from_str(text).map_err(|e| ConfigError::new(toml_message(&e)))?;
    let env = options.env.unwrap_or(&std_env);
    let mut resolved = Settings::from_raw(&file.tools.webfetch, env, options.contract)?;
    let tools = &file.tools;
    resolved.settings.approval = ApprovalSettings {
        deny: tools.approval.mode.as_deref() == Some("deny"),
        allowlisted: tools.approval.allowlist.iter().any(|t| t == "web_fetch"),
    };
    Ok(Loaded {
        mode: tools.mode,
        defined_for_parse_only: tools.definitions.iter().any(|d| d.name == "web_fetch"),
        settings: resolved.settings,
        warnings: resolved.warnings,
    })
}

fn toml_message(error: &toml::de::Error) -> String {
    // toml's message already names the unknown field and its table; keep it on
    // one line so it reads well after "Configuration error: ".
    let mut message = error.message().trim().to_owned();
    if let Some(span) = error.span() {
        message.push_str(&format!(" (at byte {})", span.start));
    }
    message
}

/// Clamps `value` into `range`, recording a warning when it moved (5.4).
fn clamp<T>(
    name: &str,
    value: Option<T>,
    default: T,
    min: T,
    max: T,
    warnings: &mut Vec<String>,
) -> T
where
    T: PartialOrd + Copy + std::fmt::Display,
{
    let Some(value) = value else { return default };
    let clamped = if value < min {
        min
    } else if value > max {
        max
    } else {
        value
    };
    if clamped != value {
        warnings.push(format!(
            "{name} = {value} is out of range [{min}, {max}]; using {clamped}"
        ));
    }
    clamped
}

impl Settings {
    /// Resolves a `[tools.webfetch]` table: defaults, clamping, env expansion and the
    /// start-up checks; `contract` gives the extension keys left unset their value.
    pub(crate) fn from_raw(
        raw: &RawConfig,
        env: EnvLookup<'_>,
        contract: Contract,
    ) -> Result<Resolved, ConfigError> {
        let mut warnings = Vec::new();
        let w = &mut warnings;
        let security = resolve_security(raw.security.clone().unwrap_or_default(), w)?;
        let browser = resolve_browser(raw.browser.clone().unwrap_or_default(), env, contract, w)?;
        let rendering = resolve_rendering(raw.rendering.clone().unwrap_or_default(), w)?;
        let extraction = resolve_extraction(raw.extraction.clone().unwrap_or_default(), contract)?;
        let content =
            content::resolve_content(raw.content.clone().unwrap_or_default(), contract, w)?;
        let fleet = fleet::resolve(raw.fleet.clone().unwrap_or_default(), env, w)?;
        let serve = resolve_serve(raw.serve.clone().unwrap_or_default())?;
        let bot_auth = resolve_bot_auth(raw.bot_auth.clone().unwrap_or_default(), env)?;
        let user_agent = raw
            .user_agent
            .clone()
            .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned());
        if user_agent.chars().any(|c| c.is_control()) {
            return Err(ConfigError::new(
                "user_agent must not contain control characters",
            ));
        }
        let raw_robots = raw.robots.clone().unwrap_or_default();
        let robots = RobotsSettings {
            fail_open: raw_robots.fail_open.unwrap_or(false),
            normalize_paths: raw_robots.normalize_paths.unwrap_or(false),
            user_agent_token: match raw_robots.user_agent_token {
                Some(token) if !token.trim().is_empty() => token.trim().to_owned(),
                _ => derive_robots_token(&user_agent),
            },
            max_robots_bytes: clamp(
                "max_robots_bytes",
                raw_robots.max_robots_bytes,
                524_288,
                1,
                u64::MAX,
                w,
            ),
            cache_entries: clamp(
                "robots_cache_entries",
                raw.robots_cache_entries,
                1024,
                0,
                100_000,
                w,
            ),
            cache_ttl: Duration::from_secs(
                3600 * u64::from(clamp(
                    "robots_cache_ttl_hours",
                    raw.robots_cache_ttl_hours,
                    24,
                    1,
                    720,
                    w,
                )),
            ),
        };
        let max_entries = clamp(
            "max_cache_entries",
            raw.max_cache_entries,
            10_000,
            0,
            1_000_000,
            w,
        );
        let cache_dir_text = raw.cache_dir.as_deref().unwrap_or("${TEMP}/forge-webfetch");
        let cache_dir = expand_env_vars(cache_dir_text, env)?;
        let cache = CacheSettings {
            dir: if cache_dir.trim().is_empty() || max_entries == 0 {
                None
            } else {
                Some(absolute(&cache_dir))
            },
            ttl_days: clamp("cache_ttl_days", raw.cache_ttl_days, 7, 1, 365, w),
            max_entries,
            max_bytes: clamp(
                "max_cache_bytes",
                raw.max_cache_bytes,
                1 << 30,
                1 << 20,
                1 << 40,
                w,
            ),
        };
        if !security.block.disabled_names().is_empty() {
            w.push(format!(
                "SSRF protection disabled for: {}",
                security.block.disabled_names().join(", ")
            ));
        }
        let settings = Settings {
            enabled: raw.enabled,
            user_agent,
            timeout_seconds: clamp("timeout_seconds", raw.timeout_seconds, 20, 1, 300, w),
            max_redirects: clamp("max_redirects", raw.max_redirects, 5, 0, 20, w),
            default_max_chunk_tokens: clamp(
                "default_max_chunk_tokens",
                raw.default_max_chunk_tokens,
                600,
                128,
                2048,
                w,
            ),
            cache,
            max_download_bytes: clamp(
                "max_download_bytes",
                raw.max_download_bytes,
                5 << 20,
                1024,
                100 << 20,
                w,
            ),
            robots,
            allow_auto_execution: raw.allow_auto_execution.unwrap_or(false),
            approval: ApprovalSettings::default(),
            browser,
            security,
            use_system_proxy: raw
                .http
                .as_ref()
                .and_then(|h| h.use_system_proxy)
                .unwrap_or(false),
            detect_walls: contract.pick(
                raw.http.as_ref().and_then(|h| h.detect_walls),
                false,
                true,
            ),
            rendering,
            extraction,
            content,
            fleet,
            serve,
            bot_auth,
        };
        Ok(Resolved { settings, warnings })
    }
}

fn resolve_security(
    raw: RawSecurity,
    w: &mut Vec<String>,
) -> Result<SecuritySettings, ConfigError> {
    let block = BlockToggles {
        private_ips: raw.block_private_ips.unwrap_or(true),
        loopback: raw.block_loopback.unwrap_or(true),
        link_local: raw.block_link_local.unwrap_or(true),
        reserved: raw.block_reserved.unwrap_or(true),
    };
    let allow_insecure_overrides = raw.allow_insecure_overrides.unwrap_or(false);
    let disabled = block.disabled_names();
    if !disabled.is_empty() && !allow_insecure_overrides {
        let affected: Vec<String> = disabled
            .iter()
            .map(|name| format!("{name}=false"))
            .collect();
        return Err(ConfigError::new(format!(
            "SSRF protection cannot be disabled without allow_insecure_overrides=true\nAffected settings: {}",
            affected.join(", ")
        )));
    }
    let mut allowed_ports = raw.allowed_ports.unwrap_or_default();
    if allowed_ports.contains(&0) {
        return Err(ConfigError::new("allowed_ports: 0 is not a valid port"));
    }
    if allowed_ports.is_empty() {
        allowed_ports = vec![80, 443];
    }
    let additional_blocked_cidrs = raw
        .additional_blocked_cidrs
        .unwrap_or_default()
        .iter()
        .map(|text| parse_cidr(text))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SecuritySettings {
        block,
        allowed_ports,
        additional_blocked_cidrs,
        allow_insecure_overrides,
        max_dns_attempts: clamp("max_dns_attempts", raw.max_dns_attempts, 2, 1, 10, w),
    })
}

/// Parses one `additional_blocked_cidrs` entry (FR-WF-05g). A bare address is a
/// single-host range; host bits set below the prefix are an error, since `10.0.0.1/8`
/// is more likely a typo than a wish to block 10.0.0.0/8.
fn parse_cidr(text: &str) -> Result<IpNet, ConfigError> {
    let invalid = || {
        ConfigError::new(format!(
            "Invalid CIDR in additional_blocked_cidrs: \"{text}\""
        ))
    };
    let trimmed = text.trim();
    let net = match trimmed.parse::<IpNet>() {
        Ok(net) => net,
        Err(_) => trimmed
            .parse::<std::net::IpAddr>()
            .map(IpNet::from)
            .map_err(|_| invalid())?,
    };
    if net.trunc() != net {
        return Err(invalid());
    }
    Ok(net)
}

fn resolve_browser(
    raw: RawBrowser,
    env: EnvLookup<'_>,
    contract: Contract,
    w: &mut Vec<String>,
) -> Result<BrowserSettings, ConfigError> {
    let defaults = BrowserSettings::default();
    let block_resources = match raw.block_resources {
        None => defaults.block_resources,
        Some(entries) => entries
            .iter()
            .map(|entry| {
                RESOURCE_TYPES
                    .iter()
                    .copied()
                    .find(|known| known.eq_ignore_ascii_case(entry.trim()))
                    .ok_or_else(|| {
                        ConfigError::new(format!(
                            "Unknown block_resources value: \"{entry}\"\nValid values: {}",
                            RESOURCE_TYPES.join(", ")
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let chromium_path = match raw.chromium_path {
        None => None,
        Some(text) => {
            let expanded = expand_env_vars(&text, env)?;
            (!expanded.trim().is_empty()).then(|| absolute(&expanded))
        }
    };
    Ok(BrowserSettings {
        enabled: raw.enabled.unwrap_or(true),
        chromium_path,
        network_idle_ms: clamp(
            "network_idle_ms",
            raw.network_idle_ms,
            20_000,
            1_000,
            120_000,
            w,
        ),
        max_rendered_dom_bytes: clamp(
            "max_rendered_dom_bytes",
            raw.max_rendered_dom_bytes,
            5 << 20,
            1024,
            100 << 20,
            w,
        ),
        max_total_subresource_bytes: clamp(
            "max_total_subresource_bytes",
            raw.max_total_subresource_bytes,
            20 << 20,
            1 << 20,
            500 << 20,
            w,
        ),
        block_resources,
        max_concurrent_renders: clamp(
            "max_concurrent_renders",
            raw.max_concurrent_renders,
            DEFAULT_MAX_CONCURRENT_RENDERS,
            1,
            64,
            w,
        ),
        allow_no_sandbox: raw.allow_no_sandbox.unwrap_or(false),
        robots_for_frames: contract.pick(raw.robots_for_frames, false, true),
    })
}

fn resolve_rendering(
    raw: RawRendering,
    w: &mut Vec<String>,
) -> Result<RenderingSettings, ConfigError> {
    let js_heavy_domains = raw
        .js_heavy_domains
        .unwrap_or_default()
        .iter()
        .map(|entry| normalize_domain_entry(entry))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RenderingSettings {
        js_heavy_domains,
        spa_fallback_enabled: raw.spa_fallback_enabled.unwrap_or(true),
        min_extracted_chars: clamp(
            "min_extracted_chars",
            raw.min_extracted_chars,
            400,
            0,
            10_000,
            w,
        ),
    })
}

/// `[tools.webfetch.extraction]`: a `mode` other than `srd`, `article` or `auto`
/// stops start-up with a message naming the value and the accepted ones. Unset, it
/// is `srd` under the SRD contract and `auto` under the agent contract.
fn resolve_extraction(
    raw: RawExtraction,
    contract: Contract,
) -> Result<ExtractionSettings, ConfigError> {
    let set = match raw.mode {
        None => None,
        Some(text) => Some(text.parse().map_err(|error| {
            ConfigError::new(format!("tools.webfetch.extraction.mode: {error}"))
        })?),
    };
    Ok(ExtractionSettings {
        mode: contract.pick(set, ExtractionMode::Srd, ExtractionMode::Auto),
    })
}

/// `[tools.webfetch.bot_auth]`: `key_file` (read only if nobody else can write
/// it; `${VAR}` expanded) and `signature_agent`, both or neither. A key that
/// can not be read or parsed stops start-up: no request goes out unsigned by
/// mistake.
fn resolve_bot_auth(raw: RawBotAuth, env: EnvLookup<'_>) -> Result<Option<BotAuth>, ConfigError> {
    let fail = |why: String| ConfigError::new(format!("tools.webfetch.bot_auth: {why}"));
    let (key_file, agent) = match (raw.key_file, raw.signature_agent) {
        (None, None) => return Ok(None),
        (Some(key_file), Some(agent)) => (key_file, agent),
        _ => {
            return Err(fail(
                "set both key_file and signature_agent, or neither".to_owned(),
            ));
        }
    };
    let path = PathBuf::from(expand_env_vars(&key_file, env)?);
    let key = secret_file::read(&path, MAX_KEY_FILE_BYTES)
        .map_err(|why| fail(format!("key_file {}: {why}", path.display())))?;
    BotAuth::from_key(&key, &agent)
        .map(Some)
        .map_err(|why| fail(format!("key_file {}: {why}", path.display())))
}

/// The largest key file read: a JWK or a PEM is a few hundred bytes.
const MAX_KEY_FILE_BYTES: u64 = 16 << 10;

/// `[tools.webfetch.serve]`: an `allowed_origins` entry that is not an origin
/// stops start-up with a message naming it.
fn resolve_serve(raw: RawServe) -> Result<ServeSettings, ConfigError> {
    let allowed_origins = raw
        .allowed_origins
        .unwrap_or_default()
        .iter()
        .map(|text| Origin::parse(text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            ConfigError::new(format!("tools.webfetch.serve.allowed_origins: {error}"))
        })?;
    Ok(ServeSettings { allowed_origins })
}

/// Normalises a `js_heavy_domains` entry with Appendix A host rules (lowercase, IDNA
/// to ASCII), keeping a leading `.` (FR-WF-RENDER-JS-01).
fn normalize_domain_entry(entry: &str) -> Result<String, ConfigError> {
    let entry = entry.trim();
    let (dot, host) = match entry.strip_prefix('.') {
        Some(rest) => (".", rest),
        None => ("", entry),
    };
    let ascii = url::Host::parse(host).map_err(|e| {
        ConfigError::new(format!("invalid js_heavy_domains entry \"{entry}\": {e}"))
    })?;
    Ok(format!("{dot}{ascii}"))
}

/// Derives the robots.txt token from the User-Agent (FR-WF-ROBOTS-UA-TOKEN-01): the
/// product name before the first `/`, filtered to `[A-Za-z0-9_-]`, or
/// `forge-webfetch` when nothing is left.
pub(crate) fn derive_robots_token(user_agent: &str) -> String {
    let product = user_agent.split('/').next().unwrap_or("");
    let token: String = product
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    if token.is_empty() {
        "forge-webfetch".to_owned()
    } else {
        token
    }
}

/// Expands `${VAR}` references (FR-WF-CFG-03). `${TEMP}` falls back to the OS temp
/// directory when unset; any other unset variable is an error, because silently
/// expanding it to nothing could put a cache somewhere unexpected.
pub(crate) fn expand_env_vars(text: &str, env: EnvLookup<'_>) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ConfigError::new(format!("unterminated ${{ in \"{text}\"")))?;
        let name = &after[..end];
        let value = match env(name) {
            Some(value) => value,
            None if name == "TEMP" => std::env::temp_dir().to_string_lossy().into_owned(),
            None => {
                return Err(ConfigError::new(format!(
                    "environment variable {name} in \"{text}\" is not set"
                )));
            }
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Resolves a relative path against the working directory (FR-WF-CFG-03a).
fn absolute(path: &str) -> PathBuf {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(&path))
            .unwrap_or(path)
    }
}

#[cfg(test)]
mod tests;
