//! `[tools.webfetch.fleet]` (extension): the shared state of several
//! webfetch instances on one Redis, and the per-origin politeness limit.
//!
//! ```toml
//! [tools.webfetch.fleet]
//! redis_url = "rediss://:password@redis.internal:6380/0"  # or redis_url_file
//! share_robots = false        # share robots.txt across the fleet (opt-in)
//! per_origin_in_flight = 8    # requests in flight per origin
//! key_prefix = "webfetch:"    # namespace of every Redis key
//! tls_ca_file = "/etc/webfetch/redis-ca.pem"  # a private CA for rediss://
//! key_file = "/etc/webfetch/fleet.key"       # required: authenticates every value
//! # allow_unauthenticated = true  # instead of key_file: trust whoever can write to Redis
//! ```
//!
//! Whoever can write to the fleet's Redis would otherwise choose what every
//! agent reads: an entry served from Redis skips the fetch, so robots.txt (and
//! for a name, DNS and its address check) never runs for it. So every value the
//! fleet writes carries an HMAC-SHA256 tag under the key in `key_file`, bound to
//! the Redis key it is stored at, and a value without a valid tag is a miss
//! (`fleet::tag`). A fleet table without `key_file` is refused unless it says
//! `allow_unauthenticated = true`, the visible gate in the spirit of
//! `security.allow_insecure_overrides`, which is warned about at start.
//!
//! With no table every SRD answer is unchanged: the disk cache of SRD 3.6, the
//! process-local robots.txt cache of FR-WF-ROBOTS-CACHE-01, and a process-wide
//! politeness limit whose default changes no single call's answer.
//!
//! The Redis URL carries credentials, so it is a [`RedisUrl`]: its `Debug` and
//! `Display` show it with the userinfo replaced by `***`, and only the
//! connection code reads the real text. A `redis_url_file` or `tls_ca_file` is
//! read once, at start, and only if it is a regular file that this user (or
//! root) owns and that group and others can not write (`secret_file`).

use std::fmt;
use std::path::Path;

use serde::Deserialize;

use super::{ConfigError, EnvLookup, expand_env_vars, secret_file};

/// Default of `per_origin_in_flight`: more than a browser opens to one host (6),
/// so no single call, HTTP or browser mode, ever waits for itself.
pub(crate) const DEFAULT_PER_ORIGIN_IN_FLIGHT: u32 = 8;

/// Upper bound of `per_origin_in_flight`.
pub(super) const MAX_PER_ORIGIN_IN_FLIGHT: u32 = 1024;

/// Default namespace of every Redis key.
pub(crate) const DEFAULT_KEY_PREFIX: &str = "webfetch:";

/// Cap on a `redis_url_file` or `tls_ca_file`: a URL or a few PEM certificates.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Cap on a `key_file`: a key is a line of text.
const MAX_KEY_FILE_BYTES: u64 = 4096;

/// The shortest key accepted, in bytes after trimming: 32 random bytes in
/// base64 (44 characters) or hex (64) pass, a password-like word does not.
pub(crate) const MIN_KEY_BYTES: usize = 32;

/// `[tools.webfetch.fleet]` as written. `Debug` never shows `redis_url`.
#[derive(Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFleet {
    pub redis_url: Option<String>,
    pub redis_url_file: Option<String>,
    pub share_robots: Option<bool>,
    pub per_origin_in_flight: Option<u32>,
    pub key_prefix: Option<String>,
    pub tls_ca_file: Option<String>,
    pub key_file: Option<String>,
    pub allow_unauthenticated: Option<bool>,
}

impl fmt::Debug for RawFleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFleet")
            .field(
                "redis_url",
                &self.redis_url.as_deref().map(RedisUrl::redact),
            )
            .field("redis_url_file", &self.redis_url_file)
            .field("share_robots", &self.share_robots)
            .field("per_origin_in_flight", &self.per_origin_in_flight)
            .field("key_prefix", &self.key_prefix)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("key_file", &self.key_file)
            .field("allow_unauthenticated", &self.allow_unauthenticated)
            .finish()
    }
}

/// A Redis URL (`redis://` or `rediss://`), credentials included. Shown only
/// redacted: `rediss://***@host:6380/0`.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(String);

impl RedisUrl {
    /// Checks the scheme and that a host is named; the error never quotes the
    /// URL (it may hold a password).
    fn parse(text: &str, source: &str) -> Result<RedisUrl, ConfigError> {
        let text = text.trim();
        let url = url::Url::parse(text)
            .map_err(|e| ConfigError::new(format!("{source} is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "redis" | "rediss") {
            return Err(ConfigError::new(format!(
                "{source} must start with redis:// or rediss://, not {}://",
                url.scheme()
            )));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ConfigError::new(format!("{source} names no host")));
        }
        if url.fragment().is_some() {
            // redis-rs reads `#insecure` as "do not verify the server's
            // certificate": never by a URL; a private CA goes in tls_ca_file.
            return Err(ConfigError::new(format!(
                "{source} must not have a #fragment (#insecure is not accepted; \
                 set fleet.tls_ca_file for a private CA)"
            )));
        }
        Ok(RedisUrl(text.to_owned()))
    }

    /// The URL with credentials, for the redis-rs client only.
    #[cfg(feature = "fleet")]
    fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the connection is TLS (`rediss://`).
    pub fn is_tls(&self) -> bool {
        self.0.starts_with("rediss:")
    }

    /// `text` (an error of redis-rs or of the server) with every occurrence of
    /// the URL's password replaced by `***`, so that it may be logged.
    #[cfg(feature = "fleet")]
    pub(crate) fn scrub(&self, text: &str) -> String {
        let password = url::Url::parse(&self.0)
            .ok()
            .and_then(|url| url.password().map(str::to_owned));
        match password {
            Some(password) if !password.is_empty() => text.replace(&password, "***"),
            _ => text.to_owned(),
        }
    }

    /// The URL with any userinfo replaced by `***` (a URL that does not parse is
    /// `<redis url>`).
    fn redact(text: &str) -> String {
        match url::Url::parse(text.trim()) {
            Ok(mut url) => {
                if !url.username().is_empty() || url.password().is_some() {
                    let _ = url.set_password(None);
                    let _ = url.set_username("***");
                }
                url.to_string()
            }
            Err(_) => "<redis url>".to_owned(),
        }
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisUrl({})", RedisUrl::redact(&self.0))
    }
}

impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&RedisUrl::redact(&self.0))
    }
}

/// The fleet's secret (`key_file`): every value the fleet keeps in Redis is
/// tagged with HMAC-SHA256 under it. Never shown, in `Debug` either.
#[derive(Clone, PartialEq, Eq)]
pub struct FleetKey(Vec<u8>);

impl FleetKey {
    /// The key's bytes, for the code that computes tags only.
    #[cfg(feature = "fleet")]
    pub(crate) fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The key in `bytes` (a file's contents): surrounding whitespace trimmed,
    /// at least [`MIN_KEY_BYTES`] left.
    pub(crate) fn from_file_bytes(bytes: &[u8]) -> Result<FleetKey, String> {
        let key = bytes.trim_ascii();
        if key.len() < MIN_KEY_BYTES {
            return Err(format!(
                "holds {} bytes after trimming; a key needs at least {MIN_KEY_BYTES} \
                 (e.g. `head -c 32 /dev/urandom | base64`)",
                key.len()
            ));
        }
        Ok(FleetKey(key.to_vec()))
    }
}

impl fmt::Debug for FleetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FleetKey(***)")
    }
}

/// Where the fleet's shared state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisSettings {
    /// The server, credentials included.
    pub url: RedisUrl,
    /// PEM roots that replace the webpki roots for `rediss://` (a private CA).
    pub ca_pem: Option<Vec<u8>>,
    /// Namespace of every key (`{prefix}doc:…`, `{prefix}lock:…`, …).
    pub key_prefix: String,
    /// Share robots.txt outcomes through Redis (FR-WF-ROBOTS-CACHE-01 keeps them
    /// process-local unless this is set).
    pub share_robots: bool,
    /// The key every value in Redis is authenticated with (`key_file`);
    /// `None` only with `allow_unauthenticated = true`.
    pub key: Option<FleetKey>,
}

#[cfg(feature = "fleet")]
impl RedisSettings {
    /// The redis-rs client of these settings: the URL as redis-rs itself parses
    /// it, and for `rediss://` the webpki roots or the configured CA instead.
    /// Connects nothing, so loading the table checks what redis-rs would
    /// refuse; the error names the URL redacted and never quotes its password.
    pub(crate) fn client(&self) -> Result<redis::Client, ConfigError> {
        let client = match &self.ca_pem {
            Some(pem) => redis::Client::build_with_tls(
                self.url.expose(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem.clone()),
                },
            ),
            None => redis::Client::open(self.url.expose()),
        };
        client.map_err(|error| {
            let error = self.url.scrub(&error.to_string());
            ConfigError::new(format!("fleet.redis_url {}: {error}", self.url))
        })
    }
}

/// `[tools.webfetch.fleet]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FleetSettings {
    /// The shared Redis, when configured: then it holds the document cache.
    pub redis: Option<RedisSettings>,
    /// At most this many requests in flight per origin, process-wide, or
    /// fleet-wide with Redis; 1..=1024.
    pub per_origin_in_flight: u32,
}

impl Default for FleetSettings {
    fn default() -> Self {
        FleetSettings {
            redis: None,
            per_origin_in_flight: DEFAULT_PER_ORIGIN_IN_FLIGHT,
        }
    }
}

/// Resolves the table: one source of the URL, files read once and trusted only
/// if nobody else can write them, the limit clamped (5.4 style, with a warning).
pub(super) fn resolve(
    raw: RawFleet,
    env: EnvLookup<'_>,
    warnings: &mut Vec<String>,
) -> Result<FleetSettings, ConfigError> {
    let per_origin_in_flight = super::clamp(
        "per_origin_in_flight",
        raw.per_origin_in_flight,
        DEFAULT_PER_ORIGIN_IN_FLIGHT,
        1,
        MAX_PER_ORIGIN_IN_FLIGHT,
        warnings,
    );
    let url = match (raw.redis_url, raw.redis_url_file) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "fleet: set redis_url or redis_url_file, not both",
            ));
        }
        (Some(text), None) => Some(RedisUrl::parse(&text, "fleet.redis_url")?),
        (None, Some(path)) => {
            let path = expand_env_vars(&path, env)?;
            let bytes = read_trusted(Path::new(&path), "redis_url_file")?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ConfigError::new(format!("fleet.redis_url_file {path} is not UTF-8"))
            })?;
            Some(RedisUrl::parse(
                &text,
                &format!("the URL in fleet.redis_url_file {path}"),
            )?)
        }
        (None, None) => None,
    };
    let Some(url) = url else {
        for (key, set) in [
            ("share_robots", raw.share_robots.is_some()),
            ("key_prefix", raw.key_prefix.is_some()),
            ("tls_ca_file", raw.tls_ca_file.is_some()),
            ("key_file", raw.key_file.is_some()),
            ("allow_unauthenticated", raw.allow_unauthenticated.is_some()),
        ] {
            if set {
                return Err(ConfigError::new(format!(
                    "fleet.{key} needs fleet.redis_url or fleet.redis_url_file"
                )));
            }
        }
        return Ok(FleetSettings {
            redis: None,
            per_origin_in_flight,
        });
    };
    if !cfg!(feature = "fleet") {
        return Err(ConfigError::new(
            "fleet.redis_url: this build of webfetch has no Redis support (cargo feature `fleet`)",
        ));
    }
    let key_prefix = raw
        .key_prefix
        .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_owned());
    if key_prefix.len() > 64 || !key_prefix.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError::new(
            "fleet.key_prefix must be at most 64 printable ASCII characters without spaces",
        ));
    }
    let ca_pem = match raw.tls_ca_file {
        Some(path) => {
            let path = expand_env_vars(&path, env)?;
            if !url.is_tls() {
                return Err(ConfigError::new("fleet.tls_ca_file needs a rediss:// URL"));
            }
            Some(read_trusted(Path::new(&path), "tls_ca_file")?)
        }
        None => None,
    };
    let key = resolve_key(raw.key_file, raw.allow_unauthenticated, env, warnings)?;
    let redis = RedisSettings {
        url,
        ca_pem,
        key_prefix,
        share_robots: raw.share_robots.unwrap_or(false),
        key,
    };
    #[cfg(feature = "fleet")]
    redis.client()?;
    Ok(FleetSettings {
        redis: Some(redis),
        per_origin_in_flight,
    })
}

/// The fleet's key: read from `key_file` through the secret-file checks, or
/// none when the table opts out visibly (`allow_unauthenticated = true`, with a
/// warning); anything else is a configuration error that names `key_file`.
fn resolve_key(
    key_file: Option<String>,
    allow_unauthenticated: Option<bool>,
    env: EnvLookup<'_>,
    warnings: &mut Vec<String>,
) -> Result<Option<FleetKey>, ConfigError> {
    match (key_file, allow_unauthenticated.unwrap_or(false)) {
        (Some(_), true) => Err(ConfigError::new(
            "fleet: set key_file or allow_unauthenticated = true, not both",
        )),
        (Some(path), false) => {
            let path = expand_env_vars(&path, env)?;
            let bytes = read_trusted_capped(Path::new(&path), "key_file", MAX_KEY_FILE_BYTES)?;
            FleetKey::from_file_bytes(&bytes)
                .map(Some)
                .map_err(|why| ConfigError::new(format!("fleet.key_file {path} {why}")))
        }
        (None, true) => {
            warnings.push(
                "fleet.allow_unauthenticated = true: values in the fleet's Redis are not \
                 authenticated, so whoever can write to it chooses what every agent reads; \
                 set fleet.key_file instead"
                    .to_owned(),
            );
            Ok(None)
        }
        (None, false) => Err(ConfigError::new(
            "fleet.key_file is required with fleet.redis_url: every value the fleet keeps \
             in Redis is authenticated (HMAC-SHA256) with the key in that file (at least 32 \
             random bytes, e.g. `head -c 32 /dev/urandom | base64 > fleet.key`, mode 0600, \
             the same file on every instance); or set fleet.allow_unauthenticated = true to \
             trust whoever can write to this Redis",
        )),
    }
}

fn read_trusted(path: &Path, key: &str) -> Result<Vec<u8>, ConfigError> {
    read_trusted_capped(path, key, MAX_FILE_BYTES)
}

fn read_trusted_capped(path: &Path, key: &str, max: u64) -> Result<Vec<u8>, ConfigError> {
    secret_file::read(path, max)
        .map_err(|why| ConfigError::new(format!("fleet.{key} {}: {why}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_text(text: &str) -> Result<FleetSettings, ConfigError> {
        let raw: RawFleet = toml::from_str(text).unwrap();
        resolve(raw, &|_| None, &mut Vec::new())
    }

    /// `text` with the visible opt-out of authentication, for tests of
    /// other keys.
    fn unauthenticated(text: &str) -> Result<FleetSettings, ConfigError> {
        resolve_text(&format!("{text}\nallow_unauthenticated = true"))
    }

    /// A private key file of `contents` in `dir`, mode `mode`.
    #[cfg(unix)]
    fn key_file(dir: &Path, contents: &str, mode: u32) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("fleet.key");
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path.display().to_string()
    }

    #[cfg(unix)]
    #[test]
    fn a_fleet_without_a_key_is_refused_unless_it_opts_out_visibly() {
        let error = resolve_text("redis_url = \"redis://h/\"")
            .unwrap_err()
            .to_string();
        assert!(error.contains("fleet.key_file is required"), "{error}");
        assert!(error.contains("allow_unauthenticated"), "{error}");
        let error = resolve_text("redis_url = \"redis://h/\"\nallow_unauthenticated = false")
            .unwrap_err()
            .to_string();
        assert!(error.contains("fleet.key_file is required"), "{error}");

        let mut warnings = Vec::new();
        let raw: RawFleet =
            toml::from_str("redis_url = \"redis://h/\"\nallow_unauthenticated = true").unwrap();
        let fleet = resolve(raw, &|_| None, &mut warnings).unwrap();
        assert_eq!(fleet.redis.unwrap().key, None);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("allow_unauthenticated"),
            "{warnings:?}"
        );

        let dir = tempfile::tempdir().unwrap();
        let secret = "0123456789abcdef0123456789abcdef0123456789abcdef";
        let path = key_file(dir.path(), &format!("{secret}\n"), 0o600);
        let text = format!("redis_url = \"redis://h/\"\nkey_file = \"{path}\"");
        let mut warnings = Vec::new();
        let raw: RawFleet = toml::from_str(&text).unwrap();
        let redis = resolve(raw, &|_| None, &mut warnings)
            .unwrap()
            .redis
            .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(redis.key.as_ref().unwrap().expose(), secret.as_bytes());
        assert!(!format!("{redis:?}").contains(secret));
        let both = format!("{text}\nallow_unauthenticated = true");
        assert!(
            resolve_text(&both)
                .unwrap_err()
                .to_string()
                .contains("not both")
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_passes_the_secret_file_checks_and_holds_a_real_key() {
        let dir = tempfile::tempdir().unwrap();
        let text = |path: &str| format!("redis_url = \"redis://h/\"\nkey_file = \"{path}\"");
        let secret = "0123456789abcdef0123456789abcdef";
        let path = key_file(dir.path(), secret, 0o620);
        let error = resolve_text(&text(&path)).unwrap_err().to_string();
        assert!(error.contains("fleet.key_file"), "{error}");
        assert!(error.contains("writable by group or others"), "{error}");
        assert!(!error.contains(secret), "{error}");
        let path = key_file(dir.path(), "  short\n", 0o600);
        let error = resolve_text(&text(&path)).unwrap_err().to_string();
        assert!(error.contains("at least 32"), "{error}");
        let missing = dir.path().join("missing").display().to_string();
        assert!(resolve_text(&text(&missing)).is_err());
    }

    #[test]
    fn absent_means_no_redis_and_the_default_limit() {
        let fleet = resolve_text("").unwrap();
        assert_eq!(fleet, FleetSettings::default());
        assert_eq!(fleet.per_origin_in_flight, DEFAULT_PER_ORIGIN_IN_FLIGHT);
    }

    #[test]
    fn the_url_is_checked_and_never_shown_with_its_password() {
        let fleet =
            unauthenticated("redis_url = \"rediss://user:hunter2@cache.internal:6380/1\"").unwrap();
        let redis = fleet.redis.unwrap();
        assert!(redis.url.is_tls());
        assert_eq!(redis.url.scrub("auth hunter2 failed"), "auth *** failed");
        for shown in [format!("{:?}", redis), redis.url.to_string()] {
            assert!(
                !shown.contains("hunter2") && !shown.contains("user"),
                "{shown}"
            );
            assert!(shown.contains("cache.internal:6380"), "{shown}");
        }
        assert_eq!(redis.key_prefix, DEFAULT_KEY_PREFIX);
        assert!(!redis.share_robots);
        let raw: RawFleet = toml::from_str("redis_url = \"redis://:hunter2@h/\"").unwrap();
        assert!(!format!("{raw:?}").contains("hunter2"));
        for bad in [
            "redis_url = \"http://h/\"",
            "redis_url = \"redis://\"",
            "redis_url = \"not a url\"",
            "redis_url = \"rediss://h/#insecure\"",
            "redis_url = \"redis://h/notadb\"",
        ] {
            let error = unauthenticated(bad).unwrap_err().to_string();
            assert!(error.contains("redis_url"), "{error}");
        }
        let error = unauthenticated("redis_url = \"ftp://u:hunter2@h/\"")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn error_texts_lose_the_password() {
        let url = RedisUrl::parse("redis://:hunter2@h/", "t").unwrap();
        assert_eq!(
            url.scrub("auth failed for hunter2 at h"),
            "auth failed for *** at h"
        );
        let bare = RedisUrl::parse("redis://h/", "t").unwrap();
        assert_eq!(bare.scrub("x"), "x");
        let empty = RedisUrl::parse("redis://user:@h/", "t").unwrap();
        assert_eq!(empty.scrub("x"), "x");
    }

    #[test]
    fn one_source_and_no_fleet_keys_without_redis() {
        let both = "redis_url = \"redis://h/\"\nredis_url_file = \"/x\"";
        assert!(resolve_text(both).is_err());
        for orphan in [
            "share_robots = true",
            "key_prefix = \"x:\"",
            "tls_ca_file = \"/x\"",
            "key_file = \"/x\"",
            "allow_unauthenticated = true",
        ] {
            let error = resolve_text(orphan).unwrap_err().to_string();
            assert!(error.contains("needs fleet.redis_url"), "{error}");
        }
        assert!(unauthenticated("redis_url = \"redis://h/\"\ntls_ca_file = \"/x\"").is_err());
        assert!(unauthenticated("redis_url = \"redis://h/\"\nkey_prefix = \"a b\"").is_err());
    }

    #[test]
    fn the_limit_is_clamped_with_a_warning() {
        let mut warnings = Vec::new();
        let raw: RawFleet = toml::from_str("per_origin_in_flight = 0").unwrap();
        let fleet = resolve(raw, &|_| None, &mut warnings).unwrap();
        assert_eq!(fleet.per_origin_in_flight, 1);
        assert_eq!(warnings.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_url_file_is_read_only_when_nobody_else_can_write_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("url");
        std::fs::write(&path, "redis://:s3cret@127.0.0.1:6379/\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let text = format!("redis_url_file = \"{}\"", path.display());
        let fleet = unauthenticated(&text).unwrap();
        assert_eq!(fleet.redis.unwrap().url.scrub("s3cret"), "***");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o622)).unwrap();
        let error = unauthenticated(&text).unwrap_err().to_string();
        assert!(error.contains("writable by group or others"), "{error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
}
