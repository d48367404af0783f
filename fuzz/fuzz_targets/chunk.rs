//! Chunking and fitting never panic, and every fitted output is valid JSON within
//! its budget (or the tool_output_limit error).
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::document::ExtractedDocument;
use webfetch::output::{self, ResponseMeta, Timestamp};
use webfetch::tokens::Cl100k;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let max_tokens = 128 + usize::from(u16::from_le_bytes([data[0], data[1]]) % 1921);
    let budget = 64 + usize::from(data[2]) * 64;
    let markdown = String::from_utf8_lossy(&data[3..]).into_owned();
    let doc = ExtractedDocument { markdown, title: None, language: None };
    let meta = ResponseMeta {
        requested_url: "https://example.com/".into(),
        final_url: "https://example.com/".into(),
        fetched_at: Timestamp::from_unix_seconds(0).expect("epoch"),
        rendering_method: webfetch::document::RenderingMethod::Http,
        notes: Default::default(),
    };
    if let Ok(json) = output::build(&doc, meta, max_tokens, budget, &Cl100k) {
        assert!(json.len() <= budget);
        serde_json::from_str::<serde_json::Value>(&json).expect("fitted output is JSON");
    }
});
