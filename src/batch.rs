//! Several pages in one call (extension of the agent front doors: the MCP tool
//! `web_fetch_batch`, `POST /v1/fetch_batch`, Python's `fetch_many`). A research
//! agent reads five to twenty pages at once; one call with one output budget
//! serves it better than twenty calls with twenty.
//!
//! Each URL is one `web_fetch` call with the batch's options, with every rule of
//! a single call (SSRF, robots.txt, politeness, caps, the cache): the batch adds
//! no path of its own. At most [`CONCURRENCY`] calls run at once, and the
//! per-origin politeness limits (`per_origin_in_flight`, holds, the fleet's
//! budget) apply to them as to any calls; the same URL twice is fetched once.
//!
//! The output budget is shared fairly ([`share`]): an item that fits in an even
//! share keeps its whole answer and leaves the rest to the others, and each
//! longer one is cut at a chunk boundary to its share and says where to read
//! on (`next_start_chunk`, for `web_fetch` with `start_chunk`).

use std::collections::HashMap;

use futures_util::StreamExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::args::{ArgsSchema, FetchArgs};
use crate::budget::millis;
use crate::canonical_url::CanonicalUrl;
use crate::error::{ErrorEnvelope, FetchError, TimeoutPhase};
use crate::output::{self, Built, FetchResponse};
use crate::progress::{self, Stage};
use crate::tokens::TokenCounter;
use crate::tool::WebFetchTool;

/// The most URLs one batch reads.
pub const MAX_BATCH_URLS: usize = 20;

/// Calls of one batch in flight at once: twenty loopback pages answering in
/// 200 ms each take two rounds, and no origin sees more than its politeness
/// allows whatever this is.
pub(crate) const CONCURRENCY: usize = 10;

/// The batch tool's name.
pub const BATCH_TOOL_NAME: &str = "web_fetch_batch";

/// A validated batch: the same options for every URL, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchArgs {
    items: Vec<FetchArgs>,
}

impl BatchArgs {
    /// Validates raw arguments: `urls` (1 to [`MAX_BATCH_URLS`] strings) and
    /// `web_fetch`'s extended options but `url` and `start_chunk` (a batch reads
    /// every page from its start). A wrong option is a `bad_args` for the whole
    /// batch; a URL that can not be fetched is that item's error.
    pub fn parse(args: &Value) -> Result<BatchArgs, FetchError> {
        let object = args
            .as_object()
            .ok_or_else(|| FetchError::schema_violation("arguments must be a JSON object"))?;
        for refused in ["url", "start_chunk"] {
            if object.contains_key(refused) {
                return Err(FetchError::schema_violation(format!(
                    "`{refused}` is not a property of {BATCH_TOOL_NAME}: give the pages as \
                     `urls`; read on past a cut page with web_fetch and start_chunk"
                )));
            }
        }
        let urls = match object.get("urls") {
            Some(Value::Array(urls)) => urls,
            Some(_) => return Err(FetchError::schema_violation("`urls` must be an array")),
            None => {
                return Err(FetchError::schema_violation(
                    "missing required property `urls`",
                ));
            }
        };
        if urls.is_empty() || urls.len() > MAX_BATCH_URLS {
            return Err(FetchError::bad_args(
                "urls",
                format!("must hold 1 to {MAX_BATCH_URLS} URLs, not {}", urls.len()),
            ));
        }
        let mut options: Map<String, Value> = object.clone();
        options.remove("urls");
        let items = urls
            .iter()
            .map(|url| {
                if !url.is_string() {
                    return Err(FetchError::schema_violation(
                        "each of `urls` must be a string",
                    ));
                }
                let mut one = options.clone();
                one.insert("url".to_owned(), url.clone());
                FetchArgs::parse(&Value::Object(one), ArgsSchema::Extended)
                    .map_err(crate::args::ArgsError::into_fetch_error)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BatchArgs { items })
    }

    /// One request per URL, with the batch's options.
    pub fn items(&self) -> &[FetchArgs] {
        &self.items
    }
}

/// The batch tool's input schema: `web_fetch`'s extended one with `urls`
/// instead of `url` and without `start_chunk`.
pub(crate) fn input_schema() -> Value {
    let mut schema = ArgsSchema::Extended.input_schema();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.remove("url");
        properties.remove("start_chunk");
        properties.insert(
            "urls".to_owned(),
            json!({
                "type": "array",
                "items": { "type": "string", "format": "uri" },
                "minItems": 1,
                "maxItems": MAX_BATCH_URLS,
                "description": "The http(s) pages to read, 1 to 20; the same URL twice is read once."
            }),
        );
    }
    schema["required"] = json!(["urls"]);
    schema
}

/// What a batch answers: one item per URL, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct BatchResponse {
    /// The items, in the order of `urls`.
    pub results: Vec<BatchItem>,
}

/// One URL's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct BatchItem {
    /// The URL as given.
    pub url: String,
    /// The page read, when it could be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<FetchResponse>,
    /// Where to read on with `web_fetch` and `start_chunk`, when this item was
    /// cut to its share of the output budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_start_chunk: Option<usize>,
    /// Why the page could not be read: the error envelope `web_fetch` gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorEnvelope>,
}

impl WebFetchTool {
    /// A batch front door's whole call: `args` validated ([`BatchArgs::parse`]),
    /// then [`fetch_batch`](Self::fetch_batch) under the tool's own timeout once
    /// per round of [`CONCURRENCY`] calls. The batch's JSON, or the `bad_args`
    /// or `timeout` envelope of the whole batch.
    pub(crate) async fn answer_batch(
        &self,
        args: &Value,
        max_output_bytes: usize,
    ) -> Result<String, FetchError> {
        let batch = BatchArgs::parse(args)?;
        // Boxed: a batch holds up to ten pipelines' futures.
        let work = Box::pin(self.fetch_batch(&batch, max_output_bytes));
        let Some(timeout) = crate::executor::ToolExecutor::timeout(self) else {
            return Ok(work.await);
        };
        let rounds = batch.items().len().div_ceil(CONCURRENCY);
        let after = timeout * u32::try_from(rounds).unwrap_or(u32::MAX);
        tokio::time::timeout(after, work).await.map_err(|_| {
            let mut error = FetchError::timeout(millis(after), TimeoutPhase::unknown());
            error.message = format!(
                "{BATCH_TOOL_NAME} timed out after {} s; its pages are cached as they \
                 finish: try fewer at once",
                after.as_secs()
            );
            error
        })
    }

    /// Reads every URL of `batch`, at most ten at once and the same
    /// URL once, each within the whole `max_output_bytes`; then shares that
    /// budget among them (water-filling) and writes the batch's JSON, at most
    /// `max_output_bytes` long when the budget can hold every item at all.
    /// Each finished item is told as progress; dropping the future stops every
    /// call in flight.
    pub async fn fetch_batch(&self, batch: &BatchArgs, max_output_bytes: usize) -> String {
        let outcomes = self.fetch_each(batch, max_output_bytes).await;
        let urls: Vec<&str> = batch.items().iter().map(|a| a.url.as_str()).collect();
        share(&urls, outcomes, max_output_bytes, self.counter())
    }

    /// Every URL of `batch` as its own call, each answer at most
    /// `effective_max_bytes` long, in the order given: at most
    /// ten calls at once, the same URL once (its answer repeated),
    /// each finished page told as progress, each within the tool's own
    /// timeout (as [`call`](Self::call)). `webfetch fetch` with several URLs
    /// prints these one per line.
    pub async fn fetch_each(
        &self,
        batch: &BatchArgs,
        effective_max_bytes: usize,
    ) -> Vec<Result<Built, FetchError>> {
        let items = batch.items();
        // The same page (by canonical URL; as given when it is not one) once.
        let mut first_of: HashMap<String, usize> = HashMap::new();
        let mut unique: Vec<usize> = Vec::new();
        let of_item: Vec<usize> = items
            .iter()
            .enumerate()
            .map(|(index, args)| {
                let key = CanonicalUrl::parse(&args.url)
                    .map(|url| url.as_str().to_owned())
                    .unwrap_or_else(|_| args.url.clone());
                *first_of.entry(key).or_insert_with(|| {
                    unique.push(index);
                    unique.len() - 1
                })
            })
            .collect();
        let total = unique.len();
        let calls: Vec<_> = unique
            .iter()
            .copied()
            .enumerate()
            .map(|(slot, index)| {
                let args = &items[index];
                async move {
                    let call = self.fetch(args, effective_max_bytes);
                    let outcome = progress::quiet(self.within_own_timeout(call)).await;
                    (slot, outcome)
                }
            })
            .collect();
        let mut done = 0;
        let mut read: Vec<Option<Result<Built, FetchError>>> = vec![None; total];
        let mut stream = futures_util::stream::iter(calls).buffer_unordered(CONCURRENCY);
        while let Some((slot, outcome)) = stream.next().await {
            done += 1;
            progress::report(Stage::BatchItem {
                done,
                total,
                url: CanonicalUrl::parse(&items[unique[slot]].url)
                    .map(|url| url.redacted())
                    .unwrap_or_default(),
            });
            read[slot] = Some(outcome);
        }
        of_item
            .into_iter()
            .map(|slot| {
                read[slot]
                    .clone()
                    .unwrap_or_else(|| Err(FetchError::internal("the call did not end")))
            })
            .collect()
    }
}

/// The batch's JSON for `outcomes` (in the order of `urls`) within
/// `max_output_bytes`: errors whole; responses that fit an even share of what
/// is left whole, the rest of the room shared evenly again among the longer
/// ones (water-filling), each cut to its share at a chunk boundary with its
/// `next_start_chunk`. A response whose share can not hold even its first
/// chunk's heading becomes that item's `tool_output_limit` error.
pub(crate) fn share(
    urls: &[&str],
    outcomes: Vec<Result<Built, FetchError>>,
    max_output_bytes: usize,
    counter: &dyn TokenCounter,
) -> String {
    let url_json: Vec<String> = urls.iter().map(|url| json_string(url)).collect();
    // The bytes of everything but the responses themselves, a cut item's
    // `next_start_chunk` (at most 21 bytes) included.
    let mut fixed = r#"{"results":[]}"#.len() + urls.len().saturating_sub(1);
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for (index, outcome) in outcomes.iter().enumerate() {
        match outcome {
            Ok(built) => {
                fixed += r#"{"url":,"response":}"#.len() + url_json[index].len();
                fixed += r#","next_start_chunk":"#.len() + 20;
                sizes.push((index, built.json.len()));
            }
            Err(error) => {
                fixed += r#"{"url":,"error":}"#.len() + url_json[index].len();
                fixed += error.to_json().len();
            }
        }
    }
    let room = max_output_bytes.saturating_sub(fixed);
    let shares = water_fill(&sizes, room);
    let mut out = String::from(r#"{"results":["#);
    for (index, outcome) in outcomes.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(r#"{"url":"#);
        out.push_str(&url_json[index]);
        let fitted = match outcome {
            Ok(built) => match shares.get(&index) {
                Some(&share) if share < built.json.len() => {
                    output::refit(&built, 0, share, counter)
                }
                _ => Ok(built),
            },
            Err(error) => Err(error),
        };
        match fitted {
            Ok(built) => {
                out.push_str(r#","response":"#);
                out.push_str(&built.json);
                if let Some(next) = built.next_start_chunk {
                    out.push_str(r#","next_start_chunk":"#);
                    out.push_str(&next.to_string());
                }
            }
            Err(error) => {
                out.push_str(r#","error":"#);
                out.push_str(&error.to_json());
            }
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// Each response's share of `room` bytes: sizes ascending, each takes its
/// size while that is no more than an even share of what is left among those
/// left, and the rest split `room` evenly.
fn water_fill(sizes: &[(usize, usize)], room: usize) -> HashMap<usize, usize> {
    let mut order: Vec<(usize, usize)> = sizes.to_vec();
    order.sort_by_key(|&(index, size)| (size, index));
    let mut left = room;
    let mut shares = HashMap::new();
    for (position, &(index, size)) in order.iter().enumerate() {
        let even = left / (order.len() - position);
        let share = size.min(even);
        shares.insert(index, share);
        left -= share;
    }
    shares
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_answers_keep_their_size_and_the_rest_share_what_is_left() {
        let shares = water_fill(&[(0, 100), (1, 5_000), (2, 9_000), (3, 300)], 6_000);
        assert_eq!(shares[&0], 100);
        assert_eq!(shares[&3], 300);
        // 5,600 left for two: 2,800 each.
        assert_eq!(shares[&1], 2_800);
        assert_eq!(shares[&2], 2_800);
        let roomy = water_fill(&[(0, 100), (1, 200)], 10_000);
        assert_eq!((roomy[&0], roomy[&1]), (100, 200));
    }

    #[test]
    fn a_batch_names_its_urls_and_takes_options_but_url_and_start_chunk() {
        let batch = BatchArgs::parse(&json!({
            "urls": ["https://a.example/", "https://b.example/x"],
            "extraction": "srd",
            "max_chunk_tokens": 256
        }))
        .unwrap();
        let items = batch.items();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].url, "https://b.example/x");
        assert!(items.iter().all(|a| a.max_chunk_tokens == Some(256)));
        for (args, why) in [
            (json!({"urls": []}), "1 to 20"),
            (json!({"urls": vec!["https://a.example/"; 21]}), "1 to 20"),
            (json!({"urls": "https://a.example/"}), "array"),
            (json!({"urls": [1]}), "string"),
            (json!({"urls": ["https://a.example/"], "url": "x"}), "`url`"),
            (
                json!({"urls": ["https://a.example/"], "start_chunk": 1}),
                "start_chunk",
            ),
            (
                json!({"urls": ["https://a.example/"], "colour": 1}),
                "colour",
            ),
            (
                json!({"urls": ["https://a.example/"], "max_chunk_tokens": 1}),
                "max_chunk_tokens",
            ),
            (json!({}), "urls"),
        ] {
            let error = BatchArgs::parse(&args).unwrap_err();
            assert_eq!(error.code.as_str(), "bad_args", "{args}");
            assert!(error.to_json().contains(why), "{args}: {}", error.to_json());
        }
    }

    #[test]
    fn the_input_schema_asks_for_urls_and_keeps_the_options() {
        let schema = input_schema();
        assert_eq!(schema["required"], json!(["urls"]));
        assert_eq!(schema["properties"]["urls"]["maxItems"], MAX_BATCH_URLS);
        assert!(schema["properties"].get("url").is_none());
        assert!(schema["properties"].get("start_chunk").is_none());
        assert!(schema["properties"]["extraction"].is_object());
        assert_eq!(schema["additionalProperties"], false);
    }
}
