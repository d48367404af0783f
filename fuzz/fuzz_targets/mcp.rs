//! The MCP request decoder: any bytes as a JSON-RPC client message (rmcp's
//! decoding), and any JSON object as `web_fetch` arguments in both schemas, and any
//! query of `GET /v1/fetch`: a request or a structured error, never a panic. The
//! same bytes as an `Origin` header of `webfetch serve`: an origin or an
//! error, and an origin parses back to itself from its text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::Value;
use webfetch::{ArgsSchema, FetchArgs};
use webfetch::Origin;
use webfetch::internals::serve::args_from_query;

fn parse_args(args: &Value) {
    for schema in [ArgsSchema::Srd, ArgsSchema::Extended] {
        if let Err(error) = FetchArgs::parse(args, schema) {
            let envelope: Value = serde_json::from_str(&error.into_fetch_error().to_json())
                .expect("the error envelope is JSON");
            assert_eq!(envelope["code"], "bad_args");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(JsonRpcMessage::Request(request)) = serde_json::from_slice::<ClientJsonRpcMessage>(data) {
        if let ClientRequest::CallToolRequest(call) = request.request {
            let args = Value::Object(call.params.arguments.unwrap_or_default());
            parse_args(&args);
        }
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        parse_args(&value);
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(args) = args_from_query(&text) {
        parse_args(&args);
    }
    if let Ok(origin) = Origin::parse(&text) {
        assert_eq!(Origin::parse(&origin.to_string()), Ok(origin));
    }
});
