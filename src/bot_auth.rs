//! Web Bot Auth (extension, opt-in): every request webfetch sends carries an
//! HTTP Message Signature (RFC 9421) by the operator's Ed25519 key, so a site
//! can recognise the agent by identity, not by guesswork about its address or
//! its User-Agent (draft-ietf-webbotauth-httpsig-protocol; Cloudflare's
//! "signed agents").
//!
//! Each request is signed for its own authority: the signature covers
//! `@authority` and `signature-agent`, with `created`, `expires` (a minute
//! later), `keyid` (the key's RFC 7638 JWK thumbprint), `alg="ed25519"`, a fresh
//! `nonce` and `tag="web-bot-auth"`. `Signature-Agent` is a Structured Field
//! Dictionary naming the key directory's https URL under the signature's label,
//! and the covered component is that member (`"signature-agent";key="sig1"`), as
//! the current draft has it, so a verifier can fetch the key.
//!
//! ring (already built for rustls) signs; the signature base is written here,
//! component by component as RFC 9421 section 2.5 says. The key is read once,
//! at configuration time: a key that can not be read stops start-up, so no
//! request is ever sent unsigned by mistake.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The signature label of every request.
const LABEL: &str = "sig1";

/// How long a request's signature stays valid.
const LIFETIME_SECONDS: u64 = 60;

/// The media type of a key directory.
pub const DIRECTORY_MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";

/// Where a key directory is served.
pub const DIRECTORY_PATH: &str = "/.well-known/http-message-signatures-directory";

/// An agent's signing identity: its Ed25519 key and the URL of its key
/// directory. Cheap to clone; its `Debug` shows the key id only.
#[derive(Clone)]
pub struct BotAuth {
    key: Arc<Ed25519KeyPair>,
    key_id: String,
    signature_agent: String,
    /// `host[:port]` of `signature_agent`: where the key directory is served.
    directory_authority: String,
}

impl fmt::Debug for BotAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BotAuth")
            .field("key_id", &self.key_id)
            .field("signature_agent", &self.signature_agent)
            .finish_non_exhaustive()
    }
}

impl PartialEq for BotAuth {
    fn eq(&self, other: &BotAuth) -> bool {
        self.key_id == other.key_id && self.signature_agent == other.signature_agent
    }
}

impl Eq for BotAuth {}

/// The three headers of a signed request, in the order they are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignedHeaders {
    /// `Signature-Agent`.
    pub signature_agent: String,
    /// `Signature-Input`.
    pub signature_input: String,
    /// `Signature`.
    pub signature: String,
}

impl BotAuth {
    /// The identity of `key` (a JWK of an Ed25519 key with its private part
    /// `d`, or a PKCS#8 PEM) whose key directory is at `signature_agent`, an
    /// https URL. The message says what is wrong, never the key.
    pub fn from_key(key: &[u8], signature_agent: &str) -> Result<BotAuth, String> {
        let directory_authority = url::Url::parse(signature_agent)
            .ok()
            .filter(|url| url.scheme() == "https")
            .and_then(|url| {
                let host = url.host_str()?.to_ascii_lowercase();
                Some(match url.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                })
            })
            .filter(|_| !signature_agent.contains('"') && !signature_agent.contains('\\'));
        let Some(directory_authority) = directory_authority else {
            return Err(format!(
                "signature_agent must be the https URL of the key directory, not {signature_agent:?}"
            ));
        };
        let key = parse_key(key)?;
        let key_id = thumbprint(key.public_key().as_ref());
        Ok(BotAuth {
            key: Arc::new(key),
            key_id,
            signature_agent: signature_agent.to_owned(),
            directory_authority,
        })
    }

    /// The key's RFC 7638 JWK thumbprint: the `keyid` of every signature.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The key directory's URL, as `Signature-Agent` names it.
    pub fn signature_agent(&self) -> &str {
        &self.signature_agent
    }

    /// `host[:port]` of the key directory's URL (the port only when not 443):
    /// the authority its response is signed for, whoever asks. Signing for
    /// the asker's `Host` would hand anyone a signature for a mirror of the
    /// directory on their own domain.
    pub fn directory_authority(&self) -> &str {
        &self.directory_authority
    }

    /// The headers that sign a request to `authority` (`host[:port]`, the port
    /// only when not the scheme's default) at `now` (Unix seconds).
    pub(crate) fn sign(&self, authority: &str, now: u64) -> SignedHeaders {
        let agent = format!("\"{}\"", self.signature_agent);
        let params = format!(
            "(\"@authority\" \"signature-agent\";key=\"{LABEL}\");created={now};expires={};\
             keyid=\"{}\";alg=\"ed25519\";nonce=\"{}\";tag=\"web-bot-auth\"",
            now + LIFETIME_SECONDS,
            self.key_id,
            nonce(),
        );
        let base = format!(
            "\"@authority\": {}\n\"signature-agent\";key=\"{LABEL}\": {agent}\n\"@signature-params\": {params}",
            authority.to_ascii_lowercase()
        );
        let signature = STANDARD.encode(self.key.sign(base.as_bytes()).as_ref());
        SignedHeaders {
            signature_agent: format!("{LABEL}={agent}"),
            signature_input: format!("{LABEL}={params}"),
            signature: format!("{LABEL}=:{signature}:"),
        }
    }

    /// The key directory (a JWKS of the public key, `kid` its thumbprint) and
    /// the `Signature-Input` and `Signature` its response carries when served
    /// from `authority` at `now`: signed by the same key over
    /// `"@authority";req`, tag `http-message-signatures-directory`.
    pub fn directory(&self, authority: &str, now: u64) -> (String, String, String) {
        // `kid` (the thumbprint, which it does not change) lets a verifier pick
        // the key by a signature's `keyid` without computing thumbprints.
        let mut jwk = public_jwk(self.key.public_key().as_ref());
        jwk["kid"] = Value::String(self.key_id.clone());
        let body = json!({ "keys": [jwk] }).to_string();
        let params = format!(
            "(\"@authority\";req);created={now};expires={};keyid=\"{}\";alg=\"ed25519\";\
             tag=\"http-message-signatures-directory\"",
            now + LIFETIME_SECONDS,
            self.key_id
        );
        let base = format!(
            "\"@authority\";req: {}\n\"@signature-params\": {params}",
            authority.to_ascii_lowercase()
        );
        let signature = STANDARD.encode(self.key.sign(base.as_bytes()).as_ref());
        (
            body,
            format!("{LABEL}={params}"),
            format!("{LABEL}=:{signature}:"),
        )
    }
}

/// A new Ed25519 key as a JWK with its private part, and its thumbprint.
pub fn generate_key() -> Result<(String, String), String> {
    let mut seed = [0u8; 32];
    SystemRandom::new()
        .fill(&mut seed)
        .map_err(|_| "the system's random source failed".to_owned())?;
    let key = Ed25519KeyPair::from_seed_unchecked(&seed)
        .map_err(|_| "ring refused a fresh seed".to_owned())?;
    let public = key.public_key().as_ref();
    let mut jwk = public_jwk(public);
    jwk["d"] = Value::String(URL_SAFE_NO_PAD.encode(seed));
    Ok((format!("{jwk:#}\n"), thumbprint(public)))
}

/// The public JWK of an Ed25519 key.
fn public_jwk(public: &[u8]) -> Value {
    json!({ "kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode(public) })
}

/// RFC 7638: SHA-256 over the required members in lexicographic order, no
/// whitespace, base64url without padding.
fn thumbprint(public: &[u8]) -> String {
    let canonical = format!(
        r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
        URL_SAFE_NO_PAD.encode(public)
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// 32 random bytes, base64: a nonce a verifier may keep to refuse replays.
fn nonce() -> String {
    let mut bytes = [0u8; 32];
    // The system source does not fail on Linux; were it to, the time-bound
    // signature is still valid without a unique nonce.
    let _ = SystemRandom::new().fill(&mut bytes);
    STANDARD.encode(bytes)
}

/// An Ed25519 key pair from a JWK (`kty: OKP`, `crv: Ed25519`, `x`, `d`) or a
/// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
fn parse_key(key: &[u8]) -> Result<Ed25519KeyPair, String> {
    let text = std::str::from_utf8(key).map_err(|_| "the key file is not text".to_owned())?;
    let text = text.trim();
    if text.starts_with('{') {
        return parse_jwk(text);
    }
    if let Some(body) = text
        .strip_prefix("-----BEGIN PRIVATE KEY-----")
        .and_then(|rest| rest.strip_suffix("-----END PRIVATE KEY-----"))
    {
        let der: String = body.split_whitespace().collect();
        let der = STANDARD
            .decode(der)
            .map_err(|_| "the PEM's body is not base64".to_owned())?;
        return Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
            .map_err(|_| "the PEM is not an Ed25519 private key (PKCS#8)".to_owned());
    }
    Err("the key file is neither a JWK (JSON) nor a PKCS#8 PEM".to_owned())
}

fn parse_jwk(text: &str) -> Result<Ed25519KeyPair, String> {
    let jwk: Value =
        serde_json::from_str(text).map_err(|_| "the key file is not valid JSON".to_owned())?;
    if jwk["kty"] != "OKP" || jwk["crv"] != "Ed25519" {
        return Err("the JWK is not an Ed25519 key (kty OKP, crv Ed25519)".to_owned());
    }
    let part = |name: &str| {
        jwk[name]
            .as_str()
            .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
            .ok_or_else(|| format!("the JWK has no valid `{name}` (base64url)"))
    };
    let (d, x) = (part("d")?, part("x")?);
    Ed25519KeyPair::from_seed_and_public_key(&d, &x)
        .map_err(|_| "the JWK's `d` and `x` are not one Ed25519 key".to_owned())
}

#[cfg(test)]
mod tests {
    use ring::signature::{ED25519, UnparsedPublicKey};

    use super::*;

    /// RFC 9421 appendix B.1.4's Ed25519 test key as a JWK.
    const RFC_JWK: &str = r#"{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519",
        "d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU",
        "x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}"#;

    #[test]
    fn the_rfc_key_has_the_thumbprint_web_bot_auth_examples_use() {
        let auth = BotAuth::from_key(RFC_JWK.as_bytes(), "https://agent.example").unwrap();
        assert_eq!(auth.key_id(), "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U");
    }

    #[test]
    fn a_signature_verifies_over_the_base_it_names() {
        let auth = BotAuth::from_key(RFC_JWK.as_bytes(), "https://agent.example").unwrap();
        let signed = auth.sign("Shop.Example:8443", 1_735_689_600);
        assert_eq!(signed.signature_agent, "sig1=\"https://agent.example\"");
        let params = signed.signature_input.strip_prefix("sig1=").unwrap();
        assert!(params.starts_with(
            "(\"@authority\" \"signature-agent\";key=\"sig1\");created=1735689600;expires=1735689660;"
        ));
        assert!(params.ends_with(";tag=\"web-bot-auth\""));
        let base = format!(
            "\"@authority\": shop.example:8443\n\"signature-agent\";key=\"sig1\": \"https://agent.example\"\n\"@signature-params\": {params}"
        );
        let signature = signed
            .signature
            .strip_prefix("sig1=:")
            .unwrap()
            .strip_suffix(':')
            .unwrap();
        let public = URL_SAFE_NO_PAD
            .decode("JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs")
            .unwrap();
        UnparsedPublicKey::new(&ED25519, public)
            .verify(base.as_bytes(), &STANDARD.decode(signature).unwrap())
            .expect("the signature verifies");
        // A fresh nonce every time.
        assert_ne!(
            auth.sign("a", 1).signature_input,
            auth.sign("a", 1).signature_input
        );
    }

    #[test]
    fn generated_keys_read_back_and_pkcs8_pems_read_too() {
        let (jwk, thumb) = generate_key().unwrap();
        let auth = BotAuth::from_key(jwk.as_bytes(), "https://agent.example/dir").unwrap();
        assert_eq!(auth.key_id(), thumb);
        // RFC 8410's example Ed25519 private key.
        let pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n";
        assert!(BotAuth::from_key(pem.as_bytes(), "https://agent.example").is_ok());
    }

    #[test]
    fn bad_keys_and_agents_are_refused_without_quoting_the_key() {
        let agent = "https://agent.example";
        for (key, want) in [
            ("not a key", "neither a JWK"),
            ("{", "not valid JSON"),
            (r#"{"kty":"RSA"}"#, "not an Ed25519 key"),
            (
                r#"{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}"#,
                "`d`",
            ),
            (
                "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----",
                "not base64",
            ),
        ] {
            let error = BotAuth::from_key(key.as_bytes(), agent).unwrap_err();
            assert!(error.contains(want), "{key}: {error}");
        }
        for agent in [
            "http://agent.example",
            "agent.example",
            "https://",
            "https://a.example/\"",
        ] {
            let error = BotAuth::from_key(RFC_JWK.as_bytes(), agent).unwrap_err();
            assert!(error.contains("https URL"), "{agent}: {error}");
        }
        let auth = BotAuth::from_key(RFC_JWK.as_bytes(), agent).unwrap();
        assert!(!format!("{auth:?}").contains("n4Ni"));
        assert_eq!(auth.directory_authority(), "agent.example");
        let auth = BotAuth::from_key(RFC_JWK.as_bytes(), "https://Agent.Example:8443/d").unwrap();
        assert_eq!(auth.directory_authority(), "agent.example:8443");
    }

    #[test]
    fn the_directory_lists_the_public_key_and_is_signed_by_it() {
        let auth = BotAuth::from_key(RFC_JWK.as_bytes(), "https://agent.example").unwrap();
        let (body, input, signature) = auth.directory("agent.example", 1_735_689_600);
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            body["keys"][0]["x"],
            "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
        );
        assert!(body["keys"][0].get("d").is_none());
        assert_eq!(body["keys"][0]["kid"], auth.key_id());
        assert!(input.contains("tag=\"http-message-signatures-directory\""));
        assert!(signature.starts_with("sig1=:"));
    }
}
