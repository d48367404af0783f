//! `GET /v1/fetch` and `POST /v1/fetch_batch`.
//!
//! `GET /v1/fetch`: the tool's parameters as a query string,
//! the CLI's response JSON as the body, the error envelope with an HTTP status
//! that says whose problem it is ([`status_of`]).
//!
//! The query is turned into the tool's JSON arguments with the extended schema's
//! types (`max_chunk_tokens`, `start_chunk` integers; `no_cache`, `force_browser`
//! booleans; the rest strings) and then validated by `FetchArgs::parse`, like
//! any other front door: an unknown parameter, a repeated one or a value of the
//! wrong type is `bad_args`. The response JSON is the tool's, byte for byte; when
//! the output budget cut the page, the headers [`NEXT_START_CHUNK_HEADER`] and
//! [`TOTAL_CHUNKS_HEADER`] say how to read on (as MCP's `_meta` does).

use http::StatusCode;
use serde_json::{Map, Value};

use crate::error::{ErrorCode, FetchError, TimeoutPhase};
use crate::executor::{ToolError, ToolExecutor, format_error, within_timeout};
use crate::tool::WebFetchTool;

/// Response header of a cut page: the `start_chunk` that reads on.
pub const NEXT_START_CHUNK_HEADER: &str = "x-webfetch-next-start-chunk";
/// Response header of a cut page: the page's chunk count.
pub const TOTAL_CHUNKS_HEADER: &str = "x-webfetch-total-chunks";

/// The parameters whose JSON type is an integer.
const INTEGER_PARAMS: [&str; 2] = ["max_chunk_tokens", "start_chunk"];
/// The parameters whose JSON type is a boolean.
const BOOLEAN_PARAMS: [&str; 2] = ["no_cache", "force_browser"];

/// What one `GET /v1/fetch` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ApiResponse {
    /// 200, or the status of the error's code ([`status_of`]).
    pub status: StatusCode,
    /// The response JSON or the error envelope.
    pub body: String,
    /// `(next_start_chunk, total_chunks)` when the output budget cut the page.
    pub continuation: Option<(usize, usize)>,
}

/// The HTTP status of an error envelope's code: 4xx for what the caller asked
/// (a bad request, a target refused by policy), 502 for what the target did,
/// 504 for a timeout, 503 for a browser this server does not have, 500 for a bug.
pub(super) fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::BadArgs
        | ErrorCode::InvalidUrl
        | ErrorCode::InvalidScheme
        | ErrorCode::InvalidHost => StatusCode::BAD_REQUEST,
        ErrorCode::PortBlocked | ErrorCode::SsrfBlocked | ErrorCode::RobotsDisallowed => {
            StatusCode::FORBIDDEN
        }
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::BrowserUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::DnsFailed
        | ErrorCode::RobotsUnavailable
        | ErrorCode::RedirectLimit
        | ErrorCode::Network
        | ErrorCode::ResponseTooLarge
        | ErrorCode::UnsupportedContentType
        | ErrorCode::Http4xx
        | ErrorCode::Http5xx
        | ErrorCode::BrowserCrashed
        | ErrorCode::ExtractionFailed => StatusCode::BAD_GATEWAY,
    }
}

/// The tool's JSON arguments of a query string (without the `?`). A repeated
/// parameter is `bad_args`; a value that is not of its parameter's type stays a
/// string, so the schema check names the parameter and the type.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn args_from_query(query: &str) -> Result<Value, FetchError> {
    let mut args = Map::new();
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let typed = if INTEGER_PARAMS.contains(&key.as_ref()) {
            value
                .parse::<i64>()
                .map_or_else(|_| Value::String(value.to_string()), Value::from)
        } else if BOOLEAN_PARAMS.contains(&key.as_ref()) {
            match value.as_ref() {
                "true" | "1" | "" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => Value::String(value.to_string()),
            }
        } else {
            Value::String(value.to_string())
        };
        if args.insert(key.to_string(), typed).is_some() {
            return Err(FetchError::schema_violation(format!(
                "query parameter `{key}` is given more than once"
            )));
        }
    }
    Ok(Value::Object(args))
}

/// Runs one `GET /v1/fetch` with `query` under the tool's own timeout, the
/// output fitted to `max_output_bytes`. `tool` has the extended schema.
pub(super) async fn fetch(
    tool: &WebFetchTool,
    query: &str,
    max_output_bytes: usize,
) -> ApiResponse {
    let args = match args_from_query(query) {
        Ok(args) => args,
        Err(error) => return failure(&error),
    };
    match within_timeout(tool, tool.answer(args, max_output_bytes)).await {
        Ok(built) => ApiResponse {
            status: StatusCode::OK,
            body: built.json,
            continuation: built
                .next_start_chunk
                .map(|next| (next, built.total_chunks)),
        },
        Err(ToolError::Timeout { after, .. }) => {
            let ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
            failure(&FetchError::timeout(ms, TimeoutPhase::unknown()))
        }
        Err(error) => {
            // `format_error` gives the envelope (FR-ERR-JSON-01 passthrough; schema
            // violations as `bad_args`); its code picks the status.
            let body = format_error(tool.name(), error).content;
            let status = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|v| v.get("code").and_then(Value::as_str).map(str::to_owned))
                .and_then(|code| ErrorCode::ALL.into_iter().find(|c| c.as_str() == code))
                .map_or(StatusCode::INTERNAL_SERVER_ERROR, status_of);
            ApiResponse {
                status,
                body,
                continuation: None,
            }
        }
    }
}

/// Runs one `POST /v1/fetch_batch` with `body` (the batch tool's arguments as
/// JSON): 200 with the batch's JSON (each item its own response or error), or
/// the whole batch's `bad_args` or `timeout` envelope with its status.
pub(super) async fn fetch_batch(
    tool: &WebFetchTool,
    body: &[u8],
    max_output_bytes: usize,
) -> ApiResponse {
    let args: Value = match serde_json::from_slice(body) {
        Ok(args) => args,
        Err(parse) => {
            return failure(&FetchError::schema_violation(format!(
                "the body is not JSON: {parse}"
            )));
        }
    };
    match tool.answer_batch(&args, max_output_bytes).await {
        Ok(json) => ApiResponse {
            status: StatusCode::OK,
            body: json,
            continuation: None,
        },
        Err(error) => failure(&error),
    }
}

fn failure(error: &FetchError) -> ApiResponse {
    ApiResponse {
        status: status_of(error.code),
        body: error.to_json(),
        continuation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_parameters_get_the_schema_types() {
        let args = args_from_query(
            "url=https%3A%2F%2Fexample.com%2F%3Fq%3D1&max_chunk_tokens=256&no_cache=true\
             &force_browser=0&extraction=article&start_chunk=3",
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"url": "https://example.com/?q=1", "max_chunk_tokens": 256,
                   "no_cache": true, "force_browser": false, "extraction": "article",
                   "start_chunk": 3})
        );
        // Wrong types stay strings for the schema check to name.
        let args = args_from_query("url=x&max_chunk_tokens=many&no_cache=maybe").unwrap();
        assert_eq!(args["max_chunk_tokens"], "many");
        assert_eq!(args["no_cache"], "maybe");
        let error = args_from_query("url=a&url=b").unwrap_err();
        assert_eq!(error.code, ErrorCode::BadArgs);
    }

    #[test]
    fn every_code_has_a_status_by_whose_problem_it_is() {
        for code in ErrorCode::ALL {
            let status = status_of(code);
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{code}"
            );
        }
        assert_eq!(status_of(ErrorCode::BadArgs), StatusCode::BAD_REQUEST);
        assert_eq!(
            status_of(ErrorCode::RobotsDisallowed),
            StatusCode::FORBIDDEN
        );
        assert_eq!(status_of(ErrorCode::Http4xx), StatusCode::BAD_GATEWAY);
        assert_eq!(status_of(ErrorCode::Timeout), StatusCode::GATEWAY_TIMEOUT);
    }
}
