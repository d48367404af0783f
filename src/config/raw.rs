//! The configuration file as deserialized (SRD section 5): every table and key
//! webfetch reads, unvalidated. [`super::Settings`] is what validation makes of it.

use serde::Deserialize;

use super::content::RawContent;
use super::fleet::RawFleet;

/// The whole file, as far as webfetch reads it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawFile {
    /// The `[tools]` table.
    #[serde(default)]
    pub tools: RawTools,
}

/// `[tools]`: the global tool settings of the host (5.2) and our table.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawTools {
    /// `tools.mode`: `enabled` (default), `disabled` or `parse_only`.
    #[serde(default)]
    pub mode: ToolsMode,
    /// `[tools.approval]`.
    #[serde(default)]
    pub approval: RawApproval,
    /// `[[tools.definitions]]`: tools advertised in `parse_only` mode.
    #[serde(default)]
    pub definitions: Vec<RawToolDefinition>,
    /// `[tools.webfetch]`.
    #[serde(default)]
    pub webfetch: RawConfig,
}

/// `tools.mode` (FR-WF-CFG-PREC-01..03).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolsMode {
    /// Tools are registered and run.
    #[default]
    Enabled,
    /// No tool runs.
    Disabled,
    /// Tools come from `[[tools.definitions]]` and never execute.
    ParseOnly,
}

/// `[tools.approval]`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawApproval {
    /// `tools.approval.mode`; `deny` overrides `allow_auto_execution` (FR-WF-OP-02).
    #[serde(default)]
    pub mode: Option<String>,
    /// Tools that need no approval.
    #[serde(default)]
    pub allowlist: Vec<String>,
}

/// One `[[tools.definitions]]` entry; only its name matters here.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawToolDefinition {
    /// The tool name.
    pub name: String,
}

/// `[tools.webfetch]` exactly as written (FR-WF-CFG-01).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    pub enabled: Option<bool>,
    pub user_agent: Option<String>,
    pub timeout_seconds: Option<u32>,
    pub max_redirects: Option<u32>,
    pub default_max_chunk_tokens: Option<u32>,
    pub cache_dir: Option<String>,
    pub cache_ttl_days: Option<u32>,
    pub max_cache_entries: Option<u32>,
    pub max_cache_bytes: Option<u64>,
    pub max_download_bytes: Option<u64>,
    pub robots_cache_entries: Option<u32>,
    pub robots_cache_ttl_hours: Option<u32>,
    pub allow_auto_execution: Option<bool>,
    pub browser: Option<RawBrowser>,
    pub security: Option<RawSecurity>,
    pub http: Option<RawHttp>,
    pub rendering: Option<RawRendering>,
    pub robots: Option<RawRobots>,
    pub extraction: Option<RawExtraction>,
    /// Extension: `[tools.webfetch.content]`.
    pub content: Option<RawContent>,
    /// Extension: see [`FleetSettings`].
    pub fleet: Option<RawFleet>,
    pub serve: Option<RawServe>,
    /// Extension: `[tools.webfetch.bot_auth]`, see [`RawBotAuth`].
    pub bot_auth: Option<RawBotAuth>,
}

/// `[tools.webfetch.bot_auth]`: an extension of ours (Web Bot Auth). Absent, no
/// request is signed.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBotAuth {
    pub key_file: Option<String>,
    pub signature_agent: Option<String>,
}

/// `[tools.webfetch.security]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSecurity {
    pub block_private_ips: Option<bool>,
    pub block_loopback: Option<bool>,
    pub block_link_local: Option<bool>,
    pub block_reserved: Option<bool>,
    pub allowed_ports: Option<Vec<u16>>,
    pub additional_blocked_cidrs: Option<Vec<String>>,
    pub allow_insecure_overrides: Option<bool>,
    pub max_dns_attempts: Option<u32>,
}

/// `[tools.webfetch.browser]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBrowser {
    pub enabled: Option<bool>,
    pub chromium_path: Option<String>,
    pub network_idle_ms: Option<u32>,
    pub max_rendered_dom_bytes: Option<u64>,
    pub max_total_subresource_bytes: Option<u64>,
    pub block_resources: Option<Vec<String>>,
    /// Extension (not in SRD 5.3): see [`BrowserSettings::max_concurrent_renders`].
    pub max_concurrent_renders: Option<u32>,
    /// Extension of ours, not in SRD 5.3: run Chromium with `--no-sandbox`.
    pub allow_no_sandbox: Option<bool>,
    /// Extension: see [`BrowserSettings::robots_for_frames`]; unset, the
    /// [`Contract`] decides.
    pub robots_for_frames: Option<bool>,
}

/// `[tools.webfetch.http]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHttp {
    pub use_system_proxy: Option<bool>,
    /// Extension: see [`Settings::detect_walls`](super::Settings::detect_walls).
    pub detect_walls: Option<bool>,
}

/// `[tools.webfetch.rendering]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRendering {
    pub js_heavy_domains: Option<Vec<String>>,
    pub spa_fallback_enabled: Option<bool>,
    pub min_extracted_chars: Option<u32>,
}

/// `[tools.webfetch.robots]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRobots {
    pub fail_open: Option<bool>,
    pub user_agent_token: Option<String>,
    pub max_robots_bytes: Option<u64>,
    /// Extension: see [`RobotsSettings::normalize_paths`].
    pub normalize_paths: Option<bool>,
}

/// `[tools.webfetch.extraction]`: an extension of ours, not in SRD 5.3. Absent,
/// every page is extracted by FR-WF-13 exactly.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExtraction {
    pub mode: Option<String>,
}

/// `[tools.webfetch.serve]`: an extension of ours, read by `webfetch
/// serve` only.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServe {
    pub allowed_origins: Option<Vec<String>>,
}
