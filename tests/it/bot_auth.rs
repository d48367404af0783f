//! Web Bot Auth (extension): with `[tools.webfetch.bot_auth]`, every request
//! webfetch sends arrives signed for its own authority, and each signature
//! verifies twice: with Cloudflare's `web-bot-auth` verifier, and with an RFC
//! 9421 verification written here (the signature base rebuilt from the received
//! headers, the signature checked by ring). Also: signing leaves the cache key
//! alone, a key that can not be used stops start-up, `webfetch bot-auth keygen`
//! and `directory`, and `webfetch serve`'s key directory.

use std::collections::HashSet;
use std::io::Write as _;
use std::process::{Command, Output};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{ED25519, UnparsedPublicKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParameters,
};
use web_bot_auth::keyring::{Algorithm, KeyRing};
use web_bot_auth::message_signatures::{MessageVerifier, SignedMessage};
use web_bot_auth::{SignatureAgentLink, WebBotAuthVerifier};
use webfetch::WebFetchTool;
use wiremock::{MockServer, ResponseTemplate};

use crate::serve::{Served, request};
use crate::support::deadline::{OutputWithin as _, WAIT};
use crate::support::{Config, html, robots, serve, toml_string};

/// The key directory's URL every test key names.
const AGENT: &str = "https://agent.example/.well-known/http-message-signatures-directory";

const PAGE: &str = "<html><head><title>Signed</title></head><body><main><h1>Signed</h1>\
<p>A page fetched with every request signed.</p></main></body></html>";

/// A signing key in a file only its owner can write, with its public key and
/// RFC 7638 thumbprint worked out here from the JWK.
pub(crate) struct TestKey {
    file: tempfile::NamedTempFile,
    /// The JWK's private part, to check no message ever shows it.
    d: String,
    public: Vec<u8>,
    thumbprint: String,
}

impl TestKey {
    /// A new key from [`webfetch::generate_key`], checked against its JWK.
    pub(crate) fn new() -> TestKey {
        let (jwk, printed) = webfetch::generate_key().unwrap();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(jwk.as_bytes()).unwrap();
        let key = TestKey::of_jwk(file, &jwk);
        assert_eq!(key.thumbprint, printed);
        key
    }

    fn of_jwk(file: tempfile::NamedTempFile, jwk: &str) -> TestKey {
        let jwk: Value = serde_json::from_str(jwk).unwrap();
        let x = jwk["x"].as_str().unwrap();
        TestKey {
            file,
            d: jwk["d"].as_str().unwrap().to_owned(),
            public: URL_SAFE_NO_PAD.decode(x).unwrap(),
            thumbprint: thumbprint(x),
        }
    }

    /// The `[tools.webfetch.bot_auth]` table naming this key and [`AGENT`].
    pub(crate) fn section(&self) -> String {
        format!(
            "[tools.webfetch.bot_auth]\nkey_file = {}\nsignature_agent = {}",
            toml_string(&self.file.path().display().to_string()),
            toml_string(AGENT)
        )
    }

    /// The key ring Cloudflare's verifier looks the `keyid` up in.
    fn keyring(&self) -> KeyRing {
        let mut keyring = KeyRing::default();
        keyring.import_raw(
            self.thumbprint.clone(),
            Algorithm::Ed25519,
            self.public.clone(),
        );
        keyring
    }
}

/// RFC 7638: SHA-256 over `{"crv","kty","x"}` in that order, no whitespace.
fn thumbprint(x: &str) -> String {
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// A request as an origin received it: its `@authority` (the `Host` it got) and
/// its header fields, names lowercase.
pub(crate) struct Received {
    pub(crate) path: String,
    authority: String,
    fields: Vec<(String, String)>,
}

impl Received {
    pub(crate) fn of(request: &wiremock::Request) -> Received {
        let fields: Vec<(String, String)> = request
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect();
        let authority = fields
            .iter()
            .find(|(name, _)| name == "host")
            .map(|(_, value)| value.to_ascii_lowercase())
            .unwrap_or_default();
        Received {
            path: request.url.path().to_owned(),
            authority,
            fields,
        }
    }

    /// Every value of field `name`, in order.
    fn values(&self, name: &str) -> Vec<String> {
        self.fields
            .iter()
            .filter(|(field, _)| field == name)
            .map(|(_, value)| value.trim().to_owned())
            .collect()
    }

    /// The field's values combined as RFC 9421 section 2.1 says.
    fn field(&self, name: &str) -> Option<String> {
        let values = self.values(name);
        (!values.is_empty()).then(|| values.join(", "))
    }
}

/// The member `key` of a Dictionary field, serialised (RFC 9421 section
/// 2.1.2): enough of RFC 8941 for members whose values hold no comma.
fn member(dictionary: &str, key: &str) -> Option<String> {
    dictionary
        .split(',')
        .filter_map(|entry| entry.trim().split_once('='))
        .find(|(name, _)| *name == key)
        .map(|(_, value)| value.to_owned())
}

/// Cloudflare's verifier reads the message through this.
struct Message<'a>(&'a Received);

impl SignedMessage for Message<'_> {
    fn lookup_component(&self, component: &CoveredComponent) -> Vec<String> {
        match component {
            CoveredComponent::HTTP(HTTPField { name, parameters }) => {
                let key = parameters.0.iter().find_map(|parameter| match parameter {
                    HTTPFieldParameters::Key(key) => Some(key),
                    _ => None,
                });
                let values = self.0.values(name);
                match key {
                    Some(key) => values.iter().filter_map(|v| member(v, key)).collect(),
                    None => values,
                }
            }
            CoveredComponent::Derived(DerivedComponent::Authority { .. }) => {
                vec![self.0.authority.clone()]
            }
            _ => Vec::new(),
        }
    }
}

/// Cloudflare's `web-bot-auth` verdict on `message`: a Web Bot Auth
/// signature naming [`AGENT`], not expired, by `key` (looked up by its
/// `keyid`).
fn crate_verifies(message: &Received, key: &TestKey) -> Result<(), String> {
    let verifier = WebBotAuthVerifier::parse(&Message(message)).map_err(|e| e.to_string())?;
    assert_eq!(
        verifier.get_signature_agents(),
        &vec![SignatureAgentLink::External(AGENT.to_owned())]
    );
    let advisory = verifier
        .get_parsed_label()
        .base
        .parameters
        .details
        .possibly_insecure(|_| false);
    assert_eq!(advisory.is_expired, Some(false));
    assert_eq!(advisory.nonce_is_invalid, Some(false));
    verifier
        .verify(&key.keyring(), None)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `Signature-Input`'s parameters, by name (values as sent: strings quoted).
type Params = std::collections::HashMap<String, String>;

/// RFC 9421 section 3.2, written out: the signature base rebuilt from the
/// received `Signature-Input` and fields, and `Signature` checked over it with
/// `key`. The signature's parameters on success.
fn rfc9421_verifies(
    message: &Received,
    label: &str,
    key: &[u8],
    authority_is_req: bool,
) -> Result<Params, String> {
    let input = message
        .field("signature-input")
        .ok_or("no Signature-Input")?;
    let signature_params = member_raw(&input, label).ok_or("no such label")?;
    let inner = signature_params
        .strip_prefix('(')
        .and_then(|rest| rest.split_once(')'))
        .ok_or("not an inner list")?;
    let (items, params) = inner;
    let mut base = String::new();
    for item in items.split(' ').filter(|item| !item.is_empty()) {
        let (name, parameters) = match item.split_once(';') {
            Some((name, parameters)) => (name, Some(parameters)),
            None => (item, None),
        };
        let name = name.trim_matches('"');
        let value = match (name, parameters) {
            ("@authority", None) if !authority_is_req => message.authority.clone(),
            ("@authority", Some("req")) if authority_is_req => message.authority.clone(),
            (field, None) if !field.starts_with('@') => {
                message.field(field).ok_or(format!("no {field}"))?
            }
            (field, Some(parameters)) if !field.starts_with('@') => {
                let key = parameters
                    .strip_prefix("key=\"")
                    .and_then(|rest| rest.strip_suffix('"'))
                    .ok_or(format!("unexpected parameters {parameters}"))?;
                let dictionary = message.field(field).ok_or(format!("no {field}"))?;
                member(&dictionary, key).ok_or(format!("no member {key} in {field}"))?
            }
            _ => return Err(format!("unexpected component {item}")),
        };
        base.push_str(&format!("{item}: {value}\n"));
    }
    base.push_str(&format!("\"@signature-params\": {signature_params}"));
    let signature = message.field("signature").ok_or("no Signature")?;
    let signature = member_raw(&signature, label)
        .and_then(|value| {
            value
                .strip_prefix(':')?
                .strip_suffix(':')
                .map(str::to_owned)
        })
        .ok_or("Signature is not a byte sequence")?;
    let signature = STANDARD.decode(signature).map_err(|e| e.to_string())?;
    UnparsedPublicKey::new(&ED25519, key)
        .verify(base.as_bytes(), &signature)
        .map_err(|_| format!("the signature does not verify over:\n{base}"))?;
    Ok(params
        .split(';')
        .filter_map(|param| param.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

/// The whole member `label` of a one-member Dictionary field (its value may
/// hold commas and `=`).
fn member_raw(dictionary: &str, label: &str) -> Option<String> {
    dictionary
        .trim()
        .strip_prefix(label)?
        .strip_prefix('=')
        .map(str::to_owned)
}

/// Unix seconds now.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Checks that `message` is signed by `key` per Web Bot Auth, for its own
/// authority `authority`, both ways; returns its nonce.
pub(crate) fn assert_signed(message: &Received, key: &TestKey, authority: &str) -> String {
    let at = &message.path;
    assert_eq!(message.authority, authority, "{at}: the Host it got");
    assert_eq!(
        message.field("signature-agent").as_deref(),
        Some(format!("sig1=\"{AGENT}\"").as_str()),
        "{at}"
    );
    crate_verifies(message, key).unwrap_or_else(|e| panic!("{at}: web-bot-auth: {e}"));
    let params = rfc9421_verifies(message, "sig1", &key.public, false)
        .unwrap_or_else(|e| panic!("{at}: RFC 9421: {e}"));
    assert!(
        message
            .field("signature-input")
            .unwrap()
            .starts_with("sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");"),
        "{at}: covers @authority and the signature-agent member"
    );
    let created: i64 = params["created"].parse().unwrap();
    let expires: i64 = params["expires"].parse().unwrap();
    // Generous bounds for a slow machine; the point is "short-lived".
    assert!(created <= now() + 5 && created >= now() - 300, "{at}");
    assert!(expires > created && expires - created <= 300, "{at}");
    assert_eq!(params["keyid"], format!("\"{}\"", key.thumbprint), "{at}");
    assert_eq!(params["alg"], "\"ed25519\"", "{at}");
    assert_eq!(params["tag"], "\"web-bot-auth\"", "{at}");
    let nonce = params["nonce"].trim_matches('"').to_owned();
    assert!(STANDARD.decode(&nonce).unwrap().len() >= 16, "{at}");
    nonce
}

/// A response that redirects to `to`.
fn redirect(to: &str) -> ResponseTemplate {
    ResponseTemplate::new(302).insert_header("location", to)
}

#[tokio::test]
async fn every_request_of_a_redirected_fetch_is_signed_for_its_own_authority() {
    let key = TestKey::new();
    let (first, second) = (MockServer::start().await, MockServer::start().await);
    let (a, b) = (first.address().port(), second.address().port());
    robots(&first, "User-agent: *\nAllow: /\n").await;
    robots(&second, "User-agent: *\nAllow: /\n").await;
    let to = format!("http://127.0.0.1:{b}/final");
    serve(&first, "/start", redirect(&to)).await;
    serve(&second, "/final", html(PAGE)).await;
    let tool = Config::new(&[a, b]).section(&key.section()).tool();

    let url = format!("http://127.0.0.1:{a}/start");
    let built = tool
        .call(&json!({ "url": url }), usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{}", e.to_json()));
    assert!(
        built
            .json
            .contains("A page fetched with every request signed")
    );

    let mut nonces = HashSet::new();
    let mut seen = Vec::new();
    for (server, port) in [(&first, a), (&second, b)] {
        for request in server.received_requests().await.unwrap() {
            let received = Received::of(&request);
            nonces.insert(assert_signed(&received, &key, &format!("127.0.0.1:{port}")));
            seen.push(format!("{port}{}", received.path));
        }
    }
    seen.sort();
    let mut want = vec![
        format!("{a}/robots.txt"),
        format!("{a}/start"),
        format!("{b}/robots.txt"),
        format!("{b}/final"),
    ];
    want.sort();
    assert_eq!(seen, want, "robots.txt of each origin, each hop, the page");
    assert_eq!(nonces.len(), 4, "a fresh nonce on every request");

    // Both verifiers are real: the first hop's signature does not pass for
    // the second origin's authority.
    let hop = first
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(Received::of)
        .find(|r| r.path == "/start")
        .unwrap();
    let moved = Received {
        authority: format!("127.0.0.1:{b}"),
        ..hop
    };
    assert!(crate_verifies(&moved, &key).is_err());
    assert!(rfc9421_verifies(&moved, "sig1", &key.public, false).is_err());
}

/// The cache key has exactly its inputs (FR-WF-CCH-KEY-01), no header among
/// them: a page cached by a signing tool is a hit for a tool that does not
/// sign on the same cache directory, and the other way round.
#[tokio::test]
async fn signing_leaves_the_cache_key_alone() {
    let key = TestKey::new();
    let server = MockServer::start().await;
    serve(&server, "/first", html(PAGE)).await;
    serve(&server, "/second", html(PAGE)).await;
    let port = server.address().port();
    let dir = tempfile::tempdir().unwrap();
    let plain = Config::new(&[port]).cache(dir.path());
    let signing = plain.clone().section(&key.section()).tool();
    let plain = plain.tool();
    let fetch = |tool: &WebFetchTool, at: &str| fetch_json(tool.clone(), port, at.to_owned());
    let pages = |at: &str| requests_for(&server, at.to_owned());

    let signed = fetch(&signing, "/first").await;
    let hit = fetch(&plain, "/first").await;
    assert_cache_hit_of(&hit, &signed);
    let fetched = pages("/first").await;
    assert_eq!(fetched.len(), 1, "the second call was a cache hit");
    assert!(fetched[0].field("signature").is_some());

    let unsigned = fetch(&plain, "/second").await;
    let hit = fetch(&signing, "/second").await;
    assert_cache_hit_of(&hit, &unsigned);
    let fetched = pages("/second").await;
    assert_eq!(fetched.len(), 1, "the second call was a cache hit");
    assert!(fetched[0].field("signature").is_none());
}

/// `hit` says `cache_hit` and is `fetched`'s content, `fetched_at` included.
fn assert_cache_hit_of(hit: &Value, fetched: &Value) {
    assert_eq!(hit["notes"], json!(["cache_hit"]), "{hit}");
    assert_eq!(fetched["notes"], json!([]), "{fetched}");
    for field in ["chunks", "fetched_at", "final_url", "title"] {
        assert_eq!(hit[field], fetched[field], "{field}");
    }
}

/// The response JSON of a fetch of `at` on loopback `port`.
async fn fetch_json(tool: WebFetchTool, port: u16, at: String) -> Value {
    let args = json!({ "url": format!("http://127.0.0.1:{port}{at}") });
    let built = tool
        .call(&args, usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{}", e.to_json()));
    serde_json::from_str(&built.json).unwrap()
}

/// The requests `server` received for `at`.
async fn requests_for(server: &MockServer, at: String) -> Vec<Received> {
    let requests = server.received_requests().await.unwrap();
    requests
        .iter()
        .map(Received::of)
        .filter(|r| r.path == at)
        .collect()
}

fn webfetch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(args)
        .env_remove("RUST_LOG")
        .output_within(WAIT, &format!("webfetch {}", args.join(" ")))
}

/// A config file: loopback port 9 allowed, then `bot_auth` (a whole table).
fn config_file(bot_auth: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let toml = Config::new(&[9]).section(bot_auth).toml();
    file.write_all(toml.as_bytes()).unwrap();
    file
}

/// A key that can not be used stops `fetch` (and `serve`) at start: exit 1,
/// nothing on stdout, a message naming `tools.webfetch.bot_auth` and the file,
/// never the key.
#[test]
fn an_unusable_key_is_a_config_error_at_start_naming_the_file_not_the_key() {
    let key = TestKey::new();
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str, text: &str, mode: u32| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        path.display().to_string()
    };
    let jwk = std::fs::read_to_string(key.file.path()).unwrap();
    let public: Value = {
        let mut value: Value = serde_json::from_str(&jwk).unwrap();
        value.as_object_mut().unwrap().remove("d");
        value
    };
    let table = |key_file: &str, agent: &str| {
        format!(
            "[tools.webfetch.bot_auth]\nkey_file = {}\nsignature_agent = {}",
            toml_string(key_file),
            toml_string(agent)
        )
    };
    let missing = dir.path().join("missing.jwk").display().to_string();
    let shared = at("shared.jwk", &jwk, 0o620);
    let garbage = at("garbage.jwk", "SECRET-GARBAGE-0123456789", 0o600);
    let no_d = at("public.jwk", &public.to_string(), 0o600);
    let good = key.file.path().display().to_string();
    let cases = [
        (
            table(&missing, AGENT),
            vec![missing.as_str(), "cannot be opened"],
        ),
        (
            table(&shared, AGENT),
            vec![shared.as_str(), "writable by group"],
        ),
        (
            table(&garbage, AGENT),
            vec![garbage.as_str(), "neither a JWK"],
        ),
        (table(&no_d, AGENT), vec![no_d.as_str(), "`d`"]),
        (
            table(&good, "http://agent.example/"),
            vec!["https URL of the key directory"],
        ),
        (
            format!(
                "[tools.webfetch.bot_auth]\nkey_file = {}",
                toml_string(&good)
            ),
            vec!["both key_file and signature_agent"],
        ),
        (
            format!(
                "[tools.webfetch.bot_auth]\nsignature_agent = {}",
                toml_string(AGENT)
            ),
            vec!["both key_file and signature_agent"],
        ),
    ];
    for (bot_auth, wants) in cases {
        let config = config_file(&bot_auth);
        let config = config.path().to_str().unwrap();
        let mut runs = vec![webfetch(&[
            "fetch",
            "http://127.0.0.1:9/",
            "--config",
            config,
        ])];
        if wants.contains(&"neither a JWK") {
            runs.push(webfetch(&[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--config",
                config,
            ]));
        }
        for output in runs {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{bot_auth}: {stderr}");
            assert!(output.stdout.is_empty(), "{bot_auth}");
            assert!(stderr.contains("tools.webfetch.bot_auth"), "{stderr}");
            for want in &wants {
                assert!(stderr.contains(want), "{bot_auth}: want {want:?}: {stderr}");
            }
            assert!(!stderr.contains(&key.d), "{stderr}");
            assert!(!stderr.contains("SECRET-GARBAGE"), "{stderr}");
        }
    }
}

/// The directory's response signature (RFC 9421 over `"@authority";req`, tag
/// `http-message-signatures-directory`), checked both ways, signed for the
/// authority of [`AGENT`] whoever asked.
fn assert_directory_signed(input: &str, signature: &str, key: &TestKey) {
    let message = Received {
        path: "directory".to_owned(),
        authority: "agent.example".to_owned(),
        fields: vec![
            ("signature-input".to_owned(), input.to_owned()),
            ("signature".to_owned(), signature.to_owned()),
        ],
    };
    let params = rfc9421_verifies(&message, "sig1", &key.public, true)
        .unwrap_or_else(|e| panic!("RFC 9421: {e}"));
    assert_eq!(params["tag"], "\"http-message-signatures-directory\"");
    assert_eq!(params["keyid"], format!("\"{}\"", key.thumbprint));
    let verifier = MessageVerifier::parse(&Message(&message), |_| true).unwrap();
    verifier.verify(&key.keyring(), None).unwrap();
}

/// The directory is a JWKS of the public key alone.
fn assert_public_jwks(body: &str, key: &TestKey) {
    let directory: Value = serde_json::from_str(body.trim_end()).unwrap();
    let keys = directory["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{body}");
    let jwk = keys[0].as_object().unwrap();
    let mut names: Vec<&str> = jwk.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["crv", "kid", "kty", "x"], "no private part: {body}");
    assert_eq!(jwk["x"], URL_SAFE_NO_PAD.encode(&key.public));
    assert_eq!(jwk["kid"], key.thumbprint);
}

/// `keygen` writes an owner-only JWK and prints its thumbprint, and never
/// replaces a file; `directory` prints the public key alone, and with
/// `--headers` the signed response a server sends.
#[test]
fn keygen_writes_an_owner_only_key_and_directory_prints_its_public_part() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("agent.jwk");
    let out_str = out.to_str().unwrap();
    let made = webfetch(&["bot-auth", "keygen", "--out", out_str]);
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let printed = String::from_utf8(made.stdout).unwrap();
    let jwk = std::fs::read_to_string(&out).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let parsed: Value = serde_json::from_str(&jwk).unwrap();
    assert_eq!(
        (&parsed["kty"], &parsed["crv"]),
        (&json!("OKP"), &json!("Ed25519"))
    );
    let key = TestKey::of_jwk(tempfile::NamedTempFile::new().unwrap(), &jwk);
    assert_eq!(
        printed,
        format!("{}\n", key.thumbprint),
        "only the thumbprint"
    );
    assert!(!String::from_utf8_lossy(&made.stderr).contains(&key.d));

    let again = webfetch(&["bot-auth", "keygen", "--out", out_str]);
    assert_eq!(again.status.code(), Some(1));
    assert!(again.stdout.is_empty());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), jwk, "not replaced");

    let config = config_file(&format!(
        "[tools.webfetch.bot_auth]\nkey_file = {}\nsignature_agent = {}",
        toml_string(out_str),
        toml_string(AGENT)
    ));
    let config = config.path().to_str().unwrap();
    let listed = webfetch(&["bot-auth", "directory", "--config", config]);
    assert_eq!(listed.status.code(), Some(0), "{listed:?}");
    let body = String::from_utf8(listed.stdout).unwrap();
    assert_public_jwks(&body, &key);

    let signed = webfetch(&["bot-auth", "directory", "--config", config, "--headers"]);
    assert_eq!(signed.status.code(), Some(0), "{signed:?}");
    let text = String::from_utf8(signed.stdout).unwrap();
    let (head, rest) = text.split_once("\n\n").unwrap();
    assert_eq!(rest, body, "the same directory after the headers");
    let header = |name: &str| {
        head.lines()
            .find_map(|line| line.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name}: {head}"))
    };
    assert_eq!(
        header("Content-Type"),
        "application/http-message-signatures-directory+json"
    );
    assert_directory_signed(header("Signature-Input"), header("Signature"), &key);

    let unset = config_file("");
    let none = webfetch(&[
        "bot-auth",
        "directory",
        "--config",
        unset.path().to_str().unwrap(),
    ]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
    assert!(String::from_utf8_lossy(&none.stderr).contains("bot_auth"));
}

/// `webfetch serve` serves the directory at the well-known path (GET, HEAD)
/// to anyone, token or not, but not to a cross-site page; `404` without a key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_publishes_the_key_directory_at_the_well_known_path() {
    const WELL_KNOWN: &str = "/.well-known/http-message-signatures-directory";
    let key = TestKey::new();
    let config = Config::new(&[9]).section(&key.section());
    let mut token_file = tempfile::NamedTempFile::new().unwrap();
    writeln!(token_file, "test-token-0123456789abcdef").unwrap();
    let token = ["--token-file", token_file.path().to_str().unwrap()];
    for served in [
        Served::start(&config, &[], &[]),
        Served::start(&config, &token, &[]),
    ] {
        let reply = request(served.addr, "GET", WELL_KNOWN, &[]).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            reply.header("content-type"),
            Some("application/http-message-signatures-directory+json")
        );
        assert_public_jwks(&reply.body, &key);
        assert_directory_signed(
            reply.header("signature-input").unwrap(),
            reply.header("signature").unwrap(),
            &key,
        );

        let head = request(served.addr, "HEAD", WELL_KNOWN, &[]).await;
        assert_eq!(head.status, 200);
        assert!(head.body.is_empty());
        assert!(head.header("signature").is_some());

        let post = request(served.addr, "POST", WELL_KNOWN, &[]).await;
        assert_eq!(post.status, 405);
        let cross = request(
            served.addr,
            "GET",
            WELL_KNOWN,
            &["Origin: https://evil.example"],
        )
        .await;
        assert_eq!(cross.status, 403);
    }

    let without = Served::start(&Config::new(&[9]), &[], &[]);
    let reply = request(without.addr, "GET", WELL_KNOWN, &[]).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"], "not_found");
}
