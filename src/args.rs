//! The request schema of `web_fetch` (FR-WF-02, 02a, 02b, 02c) and its validation.
//!
//! Two kinds of failure, both `bad_args` envelopes: a schema violation (wrong type,
//! unknown or missing property; FR-ERR-JSON-02, `details.validation`) and a
//! tool-level rule (empty URL, `max_chunk_tokens` out of range;
//! FR-WF-ERR-BADARGS-01, `details.field` / `details.reason`).
//!
//! Two schemas ([`ArgsSchema`]). The executor seam a host embeds speaks FR-WF-02
//! exactly, so an extension property is refused there like any unknown key. MCP and
//! the CLI speak the extended schema: FR-WF-02 plus our extension properties (today
//! `extraction`), each optional, each absent meaning "as the SRD says". A new
//! extension is one entry in [`extension_properties`], one field on [`FetchArgs`]
//! and one line in [`FetchArgs::parse`].

use serde_json::{Map, Value, json};

use crate::config::Settings;
use crate::error::FetchError;
use crate::vocabulary::ExtractionMode;

/// Smallest accepted `max_chunk_tokens` (FR-WF-02a).
pub(crate) const MIN_CHUNK_TOKENS: u32 = 128;
/// Largest accepted `max_chunk_tokens` (FR-WF-02a).
pub(crate) const MAX_CHUNK_TOKENS: u32 = 2048;

/// The properties of FR-WF-02.
const SRD_PROPERTIES: [&str; 4] = ["url", "max_chunk_tokens", "no_cache", "force_browser"];
/// Our extension properties, accepted by [`ArgsSchema::Extended`] only.
const EXTENSION_PROPERTIES: [&str; 2] = ["extraction", "start_chunk"];

/// The accepted values of `extraction`, in the order the schema lists them.
const EXTRACTION_MODES: [ExtractionMode; 3] = [
    ExtractionMode::Auto,
    ExtractionMode::Srd,
    ExtractionMode::Article,
];

/// What `extraction` is for, told to a model choosing whether to set it (what
/// auto does, that `srd` gives the whole page, that `page_type` says what was
/// found).
const EXTRACTION_DESCRIPTION: &str = "Extension: how the content of an HTML page is chosen. \
\"auto\": works out what kind of page it is (article, forum, product, listing, \
documentation or service page) and keeps that kind's content: an article's text, every post \
of a thread with its author, a product's facts (those only its structured data holds are \
added under a line saying so), every item of a list as a list item, every section of a \
landing page, without navigation, sidebars, cookie banners or footers; the response's \
page_type says what it found. \"srd\": the whole readable page after boilerplate removal; use \
it when auto left out something you need. \"article\": only the single main article or post. \
Default from config. text/plain is the same in every mode.";

/// What `start_chunk` is for, told to a model that got a truncated page.
const START_CHUNK_DESCRIPTION: &str = "Extension: read a long page from this chunk on \
(0-based). When a response is cut to fit the output limit (truncated, note \
tool_output_limit), call again with url set to that response's final_url and start_chunk \
set to the next_start_chunk it gave: the page is cached under its final URL and served \
from there with the same chunks, so successive calls read every chunk once, in order.";

/// A validated `web_fetch` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchArgs {
    /// The URL exactly as given (FR-WF-RESP-URL-01 echoes it unchanged).
    pub url: String,
    /// Chunk budget, already checked against [128, 2048]; `None` = config default.
    pub max_chunk_tokens: Option<u32>,
    /// Skip the cache read (FR-WF-17).
    pub no_cache: bool,
    /// Skip HTTP mode (FR-WF-12a).
    pub force_browser: bool,
    /// Extension: how HTML pages are extracted; `None` = config default
    /// (`[tools.webfetch.extraction] mode`). Always `None` from [`ArgsSchema::Srd`].
    pub extraction: Option<ExtractionMode>,
    /// Extension: the first chunk to return (0-based, continuation); `None` = the
    /// SRD's response from the first chunk, with no continuation field. Always
    /// `None` from [`ArgsSchema::Srd`].
    pub start_chunk: Option<usize>,
    /// Extension for typed callers (the `webfetch extract` command): the page as
    /// saved from `url`, read instead of fetched: no SSRF check, robots.txt,
    /// fetch or cache, and the content stages as over HTTP (FR-WF-10e .. 10h,
    /// extraction, chunking, fitting). No JSON property sets it: `None` from
    /// [`FetchArgs::parse`].
    pub page: Option<SavedPage>,
}

/// A page saved from the web, for a request read offline ([`FetchArgs::page`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedPage {
    /// The body exactly as served.
    pub body: Vec<u8>,
    /// The `Content-Type` header it was served with, e.g.
    /// `text/plain; charset=windows-1252`; `None` or blank sniffs the body like a
    /// response without one (FR-WF-10h).
    pub content_type: Option<String>,
}

/// Which request schema a front door accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ArgsSchema {
    /// FR-WF-02 exactly, `additionalProperties: false`: the `ToolExecutor` seam.
    #[default]
    Srd,
    /// FR-WF-02 plus our extension properties, still `additionalProperties: false`:
    /// the MCP server and the CLI.
    Extended,
}

impl ArgsSchema {
    /// The JSON schema advertised for the tool in this dialect: FR-WF-02's
    /// ([`ArgsSchema::Srd`]), or FR-WF-02's plus our extension properties. One
    /// function for both.
    pub fn input_schema(self) -> Value {
        let mut schema = srd_input_schema();
        if self == ArgsSchema::Extended
            && let Some(Value::Object(properties)) = schema.get_mut("properties")
        {
            properties.extend(extension_properties());
        }
        schema
    }

    /// Whether `key` is a property of this schema.
    fn knows(self, key: &str) -> bool {
        SRD_PROPERTIES.contains(&key)
            || (self == ArgsSchema::Extended && EXTENSION_PROPERTIES.contains(&key))
    }
}

/// Why arguments were refused, split the way the executor reports them (Appendix E):
/// schema violations become `ToolError::BadArgs`, tool rules `ExecutionFailed`.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgsError {
    /// The arguments do not match the JSON schema.
    Schema(FetchError),
    /// The arguments match the schema but break a tool rule.
    Rule(FetchError),
}

impl ArgsError {
    /// The `bad_args` envelope either way.
    pub fn into_fetch_error(self) -> FetchError {
        match self {
            ArgsError::Schema(error) | ArgsError::Rule(error) => error,
        }
    }
}

/// FR-WF-02's JSON schema: `additionalProperties: false`, so `block_resources`
/// (config-only, FR-WF-02c) is refused like any unknown key.
fn srd_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "description": "The http(s) URL to fetch."
            },
            "max_chunk_tokens": {
                "type": "integer",
                "minimum": MIN_CHUNK_TOKENS,
                "maximum": MAX_CHUNK_TOKENS,
                "description": "Token budget per chunk (cl100k_base); default from config (600)."
            },
            "no_cache": {
                "type": "boolean",
                "description": "Bypass the cache read (the fresh result is still cached)."
            },
            "force_browser": {
                "type": "boolean",
                "description": "Render with headless Chromium instead of plain HTTP."
            }
        },
        "required": ["url"],
        "additionalProperties": false
    })
}

/// The schemas of our extension properties, keyed by name (not in FR-WF-02).
pub(crate) fn extension_properties() -> Map<String, Value> {
    let modes: Vec<&str> = EXTRACTION_MODES.iter().map(|m| m.as_str()).collect();
    let mut properties = Map::new();
    properties.insert(
        "extraction".to_owned(),
        json!({
            "type": "string",
            "enum": modes,
            "description": EXTRACTION_DESCRIPTION
        }),
    );
    properties.insert(
        "start_chunk".to_owned(),
        json!({
            "type": "integer",
            "minimum": 0,
            "description": START_CHUNK_DESCRIPTION
        }),
    );
    properties
}

impl FetchArgs {
    /// The chunk budget of this call: its own, else the config default (FR-WF-02a).
    pub fn chunk_tokens(&self, settings: &Settings) -> usize {
        self.max_chunk_tokens
            .unwrap_or(settings.default_max_chunk_tokens) as usize
    }

    /// Extension: the extraction mode of this call, its own or the config default.
    pub fn extraction_mode(&self, settings: &Settings) -> ExtractionMode {
        self.extraction.unwrap_or(settings.extraction.mode)
    }

    /// Validates raw tool arguments against `dialect`, then the tool rules: one
    /// function for both schemas. [`ArgsSchema::Srd`] is the executor
    /// seam's, where an extension property is an unknown property;
    /// [`ArgsSchema::Extended`] is MCP's and the CLI's.
    pub fn parse(args: &Value, dialect: ArgsSchema) -> Result<FetchArgs, ArgsError> {
        let object = args
            .as_object()
            .ok_or_else(|| schema("arguments must be a JSON object"))?;
        reject_unknown_properties(object, dialect)?;
        let url = match object.get("url") {
            Some(Value::String(url)) => url.clone(),
            Some(_) => return Err(schema("`url` must be a string")),
            None => return Err(schema("missing required property `url`")),
        };
        // FR-WF-02's types (`integer`, `boolean`, `string`) exclude null: an explicit
        // `null` is a wrong type like any other, not the property left out.
        let max_chunk_tokens = match object.get("max_chunk_tokens") {
            None => None,
            Some(value) => Some(chunk_tokens(value)?),
        };
        let no_cache = boolean(object, "no_cache")?;
        let force_browser = boolean(object, "force_browser")?;
        // Only the extended dialect gets here with extension properties present.
        let extraction = extraction(object)?;
        let start_chunk = match object.get("start_chunk") {
            None => None,
            Some(value) => Some(start_chunk(value)?),
        };
        if url.trim().is_empty() {
            return Err(ArgsError::Rule(FetchError::bad_args(
                "url",
                "must be non-empty and not only whitespace",
            )));
        }
        Ok(FetchArgs {
            url,
            max_chunk_tokens,
            no_cache,
            force_browser,
            extraction,
            start_chunk,
            page: None,
        })
    }
}

fn schema(description: &str) -> ArgsError {
    ArgsError::Schema(FetchError::schema_violation(description))
}

fn reject_unknown_properties(
    object: &Map<String, Value>,
    dialect: ArgsSchema,
) -> Result<(), ArgsError> {
    match object.keys().find(|key| !dialect.knows(key)) {
        None => Ok(()),
        Some(key) if key == "block_resources" => Err(schema(
            "`block_resources` is configuration-only (tools.webfetch.browser.block_resources) and not a request parameter",
        )),
        Some(key) => Err(schema(&format!(
            "unknown property `{key}` (additionalProperties is false)"
        ))),
    }
}

/// An integer in [128, 2048]. A non-integer is a schema violation; an integer out of
/// range is a tool rule and is never clamped (FR-WF-02a).
fn chunk_tokens(value: &Value) -> Result<u32, ArgsError> {
    // JSON Schema's "integer" accepts any number with a zero fraction (e.g. 600.0).
    let number = match (value.as_i64(), value.as_u64(), value.as_f64()) {
        (Some(n), _, _) => n,
        (None, Some(_), _) => i64::MAX,
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e18 => f as i64,
        _ => return Err(schema("`max_chunk_tokens` must be an integer")),
    };
    if !(i64::from(MIN_CHUNK_TOKENS)..=i64::from(MAX_CHUNK_TOKENS)).contains(&number) {
        let shown = value.to_string();
        return Err(ArgsError::Rule(FetchError::bad_args(
            "max_chunk_tokens",
            format!("{shown} is outside [{MIN_CHUNK_TOKENS}, {MAX_CHUNK_TOKENS}]"),
        )));
    }
    Ok(number as u32)
}

/// Extension: `extraction`, one of [`EXTRACTION_MODES`]; anything else is a schema
/// violation naming the accepted values.
fn extraction(object: &Map<String, Value>) -> Result<Option<ExtractionMode>, ArgsError> {
    let value = match object.get("extraction") {
        None => return Ok(None),
        Some(value) => value,
    };
    value
        .as_str()
        .and_then(|text| text.parse().ok())
        .map(Some)
        .ok_or_else(|| {
            let accepted: Vec<String> = EXTRACTION_MODES
                .iter()
                .map(|m| format!("\"{m}\""))
                .collect();
            schema(&format!(
                "`extraction` must be one of {}; got {value}",
                accepted.join(", ")
            ))
        })
}

/// Extension: `start_chunk`, a non-negative integer (JSON Schema's `integer`, so
/// `3.0` too). Whether it is in range depends on the page: the output stage says.
fn start_chunk(value: &Value) -> Result<usize, ArgsError> {
    let number = match (value.as_u64(), value.as_f64()) {
        (Some(n), _) => Some(n),
        (None, Some(f)) if f.fract() == 0.0 && (0.0..1e15).contains(&f) => Some(f as u64),
        _ => None,
    };
    number.and_then(|n| usize::try_from(n).ok()).ok_or_else(|| {
        schema(&format!(
            "`start_chunk` must be an integer >= 0; got {value}"
        ))
    })
}

fn boolean(object: &Map<String, Value>, key: &str) -> Result<bool, ArgsError> {
    match object.get(key) {
        None => Ok(false),
        Some(Value::Bool(value)) => Ok(*value),
        Some(_) => Err(schema(&format!("`{key}` must be a boolean"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn srd(args: &Value) -> Result<FetchArgs, ArgsError> {
        FetchArgs::parse(args, ArgsSchema::Srd)
    }

    fn extended(args: &Value) -> Result<FetchArgs, ArgsError> {
        FetchArgs::parse(args, ArgsSchema::Extended)
    }

    fn rule(args: Value) -> FetchError {
        match srd(&args) {
            Err(ArgsError::Rule(error)) => error,
            other => panic!("expected a rule error, got {other:?}"),
        }
    }

    fn schema_error(args: Value) -> FetchError {
        match srd(&args) {
            Err(ArgsError::Schema(error)) => error,
            other => panic!("expected a schema error, got {other:?}"),
        }
    }

    #[test]
    fn valid_arguments() {
        let args =
            srd(&json!({"url": " https://a.example/ ", "max_chunk_tokens": 128, "no_cache": true}))
                .unwrap();
        assert_eq!(args.url, " https://a.example/ ");
        assert_eq!(args.max_chunk_tokens, Some(128));
        assert!(args.no_cache && !args.force_browser);
    }

    #[test]
    fn empty_or_blank_url_is_bad_args() {
        for url in ["", "   ", "\t\n"] {
            let error = rule(json!({ "url": url }));
            assert_eq!(
                (error.code, error.details_json()["field"].as_str()),
                (ErrorCode::BadArgs, Some("url"))
            );
        }
    }

    #[test]
    fn chunk_tokens_out_of_range_is_rejected_not_clamped() {
        for n in [127, 2049, 0, -5, 5000] {
            let error = rule(json!({"url": "https://a.example/", "max_chunk_tokens": n}));
            assert_eq!(error.details_json()["field"], "max_chunk_tokens");
        }
        rule(json!({"url": "https://a.example/", "max_chunk_tokens": u64::MAX}));
        schema_error(json!({"url": "https://a.example/", "max_chunk_tokens": 600.5}));
        let args = srd(&json!({"url": "https://a.example/", "max_chunk_tokens": 600.0})).unwrap();
        assert_eq!(args.max_chunk_tokens, Some(600));
        schema_error(json!({"url": "https://a.example/", "max_chunk_tokens": "600"}));
    }

    #[test]
    fn unknown_and_config_only_properties_are_schema_errors() {
        let error =
            schema_error(json!({"url": "https://a.example/", "block_resources": ["image"]}));
        assert!(error.message.contains("configuration-only"));
        assert!(error.details_json()["validation"].is_string());
        schema_error(json!({"url": "https://a.example/", "extra": 1}));
        schema_error(json!({}));
        schema_error(json!(["https://a.example/"]));
        schema_error(json!({"url": 5}));
        schema_error(json!({"url": "https://a.example/", "no_cache": "yes"}));
    }

    /// FR-WF-02's property types exclude null, so an explicit `null` is a schema
    /// violation, not an absent property.
    #[test]
    fn null_for_an_optional_property_is_a_schema_error() {
        for key in ["max_chunk_tokens", "no_cache", "force_browser"] {
            let error = schema_error(json!({"url": "https://a.example/", key: null}));
            assert_eq!(error.code, ErrorCode::BadArgs, "{key}");
            assert!(error.message.contains(key), "{}", error.message);
            assert!(matches!(
                extended(&json!({"url": "https://a.example/", key: null})),
                Err(ArgsError::Schema(_))
            ));
        }
        schema_error(json!({ "url": null }));
        match extended(&json!({"url": "https://a.example/", "extraction": null})) {
            Err(ArgsError::Schema(error)) => assert_eq!(error.code, ErrorCode::BadArgs),
            other => panic!("expected a schema error, got {other:?}"),
        }
    }

    #[test]
    fn the_srd_schema_refuses_extension_properties_as_unknown() {
        let error = schema_error(json!({"url": "https://a.example/", "extraction": "article"}));
        assert_eq!(
            error.message,
            "unknown property `extraction` (additionalProperties is false)"
        );
        let schema = ArgsSchema::Srd.input_schema();
        assert!(schema["properties"].get("extraction").is_none());
        assert_eq!(schema, srd_input_schema());
        assert_eq!(
            srd(&json!({"url": "https://a.example/"}))
                .unwrap()
                .extraction,
            None
        );
    }

    #[test]
    fn the_extended_schema_adds_the_extensions_and_nothing_else() {
        let extended = ArgsSchema::Extended.input_schema();
        assert_eq!(extended["additionalProperties"], false);
        assert_eq!(extended["required"], json!(["url"]));
        assert_eq!(
            extended["properties"]["extraction"]["enum"],
            json!(["auto", "srd", "article"])
        );
        assert_eq!(extended["properties"]["start_chunk"]["minimum"], 0);
        let mut without = extended.clone();
        let properties = without["properties"].as_object_mut().unwrap();
        for extension in EXTENSION_PROPERTIES {
            properties.remove(extension);
        }
        assert_eq!(without, ArgsSchema::Srd.input_schema());
    }

    #[test]
    fn extended_arguments_parse_extraction() {
        let parse = |args: Value| extended(&args);
        for (value, expected) in [
            (json!("srd"), Some(ExtractionMode::Srd)),
            (json!("article"), Some(ExtractionMode::Article)),
            (json!("auto"), Some(ExtractionMode::Auto)),
        ] {
            let args = parse(json!({"url": "https://a.example/", "extraction": value})).unwrap();
            assert_eq!(args.extraction, expected, "{value}");
        }
        let plain = parse(json!({"url": "https://a.example/", "no_cache": true})).unwrap();
        assert_eq!(
            plain,
            srd(&json!({"url": "https://a.example/", "no_cache": true})).unwrap()
        );
        for bad in [
            json!("Article"),
            json!("readability"),
            json!(1),
            json!(["srd"]),
            Value::Null,
        ] {
            match parse(json!({"url": "https://a.example/", "extraction": bad})) {
                Err(ArgsError::Schema(error)) => {
                    assert_eq!(error.code, ErrorCode::BadArgs);
                    assert!(
                        error.message.contains(r#""srd", "article""#),
                        "{}",
                        error.message
                    );
                    assert!(
                        error.message.contains(&bad.to_string()),
                        "{}",
                        error.message
                    );
                }
                other => panic!("expected a schema error for {bad}, got {other:?}"),
            }
        }
        // Unknown keys stay unknown in the extended dialect too.
        assert!(matches!(
            parse(json!({"url": "https://a.example/", "start": 2})),
            Err(ArgsError::Schema(_))
        ));
    }

    #[test]
    fn start_chunk_is_an_extension_integer_at_least_zero() {
        let url = "https://a.example/";
        let with_start = |value: Value| extended(&json!({ "url": url, "start_chunk": value }));
        assert_eq!(with_start(json!(12)).unwrap().start_chunk, Some(12));
        assert_eq!(with_start(json!(3.0)).unwrap().start_chunk, Some(3));
        for bad in [json!(-1), json!(1.5), json!("2"), json!(null)] {
            assert!(
                matches!(with_start(bad.clone()), Err(ArgsError::Schema(_))),
                "{bad}"
            );
        }
        // The executor seam speaks FR-WF-02 exactly.
        let refused = srd(&json!({ "url": url, "start_chunk": 1 }));
        assert!(matches!(refused, Err(ArgsError::Schema(_))));
        assert_eq!(srd(&json!({ "url": url })).unwrap().start_chunk, None);
    }
}
