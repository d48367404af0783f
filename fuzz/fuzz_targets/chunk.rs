//! Chunking and fitting never panic; the chunks are the input's text in order
//! (only whitespace lost at cuts) within the token budget; every fitted output is
//! valid JSON within its byte budget (or the tool_output_limit error), for several
//! budgets per input. With preferred cuts (a PDF's page starts, here
//! every other block start) the same holds, and there are never more chunks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::chunk::{SourcedChunk, chunk};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::internals::output::{self, ResponseMeta};
use webfetch::Timestamp;
use webfetch::{Cl100k, TokenCounter};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let max_tokens = 128 + usize::from(u16::from_le_bytes([data[0], data[1]]) % 1921);
    let budget = 64 + usize::from(data[2]) * 64;
    let markdown = String::from_utf8_lossy(&data[3..]).into_owned();

    let plain = chunk(&markdown, &[], max_tokens, &Cl100k);
    check(&markdown, max_tokens, &plain);
    let hints: Vec<usize> = markdown
        .match_indices("\n\n")
        .map(|(at, _)| at + 2)
        .skip(usize::from(data[0] & 1))
        .step_by(2)
        .collect();
    let hinted = chunk(&markdown, &hints, max_tokens, &Cl100k);
    check(&markdown, max_tokens, &hinted);
    assert!(hinted.len() <= plain.len());

    let doc = ExtractedDocument { markdown, title: None, language: None, page_type: None, page_starts: hints };
    for budget in [budget, budget / 3, budget * 7] {
        let meta = ResponseMeta {
            requested_url: "https://example.com/".into(),
            final_url: "https://example.com/".into(),
            fetched_at: Timestamp::from_unix_seconds(0).expect("epoch"),
            rendering_method: webfetch::RenderingMethod::Http,
            notes: Default::default(),
        };
        let options = output::BuildOptions {
            max_chunk_tokens: max_tokens,
            start_chunk: None,
            effective_max_bytes: budget,
        };
        match output::build(&doc, meta, options, &Cl100k).map(|built| built.json) {
            Ok(json) => {
                assert!(json.len() <= budget);
                serde_json::from_str::<serde_json::Value>(&json).expect("fitted output is JSON");
            }
            Err(error) => assert_eq!(error.code(), webfetch::ErrorCode::Internal),
        }
    }
});

/// Lossless: each chunk's core is its source span, spans in order, gaps blank.
fn check(markdown: &str, max_tokens: usize, chunks: &[SourcedChunk]) {
    let mut previous_end = 0;
    for sourced in chunks {
        let text = &sourced.chunk.text;
        assert!(sourced.chunk.token_count <= max_tokens);
        assert_eq!(sourced.chunk.token_count, Cl100k.count_str(text));
        let core = &text[sourced.prefix_len..text.len() - sourced.suffix_len];
        assert_eq!(core, &markdown[sourced.source.clone()]);
        assert!(sourced.source.start >= previous_end);
        assert!(markdown[previous_end..sourced.source.start].trim().is_empty());
        previous_end = sourced.source.end;
    }
    assert!(markdown[previous_end..].trim().is_empty());
}
