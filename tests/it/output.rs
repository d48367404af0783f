//! The response and output enforcement (SRD 3.1, 3.5.4): T-WF-CHK-05, 06,
//! T-WF-OUT-01..05, FR-WF-OUT-02/02a/03, with property tests over byte budgets.

use crate::support::plain_chunks;
use proptest::prelude::*;
use serde_json::Value;
use webfetch::ErrorCode;
use webfetch::RenderingMethod;
use webfetch::Timestamp;
use webfetch::internals::output::{BuildOptions, ResponseMeta, build};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::{Cl100k, TokenCounter};
use webfetch::{FetchChunk, FetchResponse, TruncationReason};
use webfetch::{Note, Notes};

/// [`build`] without a window: the SRD's response JSON.
fn build_json(
    doc: &ExtractedDocument,
    meta: ResponseMeta,
    max_chunk_tokens: usize,
    effective_max_bytes: usize,
    counter: &dyn webfetch::TokenCounter,
) -> Result<String, webfetch::FetchError> {
    windowed(
        doc,
        meta,
        max_chunk_tokens,
        None,
        effective_max_bytes,
        counter,
    )
    .map(|built| built.json)
}

/// [`build`] with its options as positional arguments, for the tables.
fn windowed(
    doc: &ExtractedDocument,
    meta: ResponseMeta,
    max_chunk_tokens: usize,
    start_chunk: Option<usize>,
    effective_max_bytes: usize,
    counter: &dyn webfetch::TokenCounter,
) -> Result<webfetch::Built, webfetch::FetchError> {
    let options = BuildOptions {
        max_chunk_tokens,
        start_chunk,
        effective_max_bytes,
    };
    build(doc, meta, options, counter)
}

fn meta(notes: &[Note]) -> ResponseMeta {
    ResponseMeta {
        requested_url: "HTTPS://Example.com/a b?q=1#frag".to_owned(),
        final_url: "https://example.com/a%20b?q=1".to_owned(),
        fetched_at: Timestamp::parse("2026-01-10T12:00:00Z").expect("timestamp"),
        rendering_method: RenderingMethod::Http,
        notes: notes.iter().copied().collect(),
    }
}

fn doc(markdown: &str) -> ExtractedDocument {
    ExtractedDocument {
        markdown: markdown.to_owned(),
        title: Some("Title \"quoted\"".to_owned()),
        language: Some("en-GB".to_owned()),
        page_type: None,
        page_starts: Vec::new(),
    }
}

fn sections(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "## Section {i}\n\n{}\n",
                "Trains run through the night and arrive in the morning. "
                    .repeat(12)
                    .trim_end()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).expect("valid JSON")
}

/// The JSON length of the response with `chunks` and the output-limit note (what the
/// fitting must stay within once it truncates).
fn truncated_len(doc: &ExtractedDocument, notes: &[Note], chunks: Vec<FetchChunk>) -> usize {
    let mut response = FetchResponse::new(doc, meta(notes), chunks);
    response.add_note(Note::ToolOutputLimit);
    response.to_json().len()
}

#[test]
fn page_type_follows_the_notes_and_only_in_auto_mode() {
    let mut d = doc("# Hi\n\nBody.\n");
    let srd = build_json(&d, meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert!(!srd.contains("page_type"), "{srd}");
    d.page_type = Some(webfetch::PageType::Product);
    let auto = build_json(&d, meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert!(
        auto.ends_with(r#""truncated":false,"notes":[],"page_type":"product"}"#),
        "{auto}"
    );
    let back: FetchResponse = serde_json::from_str(&auto).expect("reads back");
    assert_eq!(back.page_type, Some(webfetch::PageType::Product));
    // Fitting counts it: a budget cut still fits, with the field kept.
    let long = ExtractedDocument {
        markdown: sections(40),
        ..d.clone()
    };
    let cut = build_json(&long, meta(&[]), 128, 4_000, &Cl100k).expect("fits");
    assert!(
        cut.len() <= 4_000 && cut.contains(r#""page_type":"product""#),
        "{cut}"
    );
}

#[test]
fn t_wf_out_05_compact_json_in_canonical_field_order() {
    let d = doc("# Hi\n\nBody.\n");
    let json = build_json(&d, meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert_eq!(
        json,
        concat!(
            r#"{"requested_url":"HTTPS://Example.com/a b?q=1#frag","#,
            r#""final_url":"https://example.com/a%20b?q=1","#,
            r#""fetched_at":"2026-01-10T12:00:00Z","#,
            r#""title":"Title \"quoted\"","language":"en-GB","#,
            r##""chunks":[{"heading":"Hi","text":"# Hi\n\nBody.","token_count":5}],"##,
            r#""rendering_method":"http","truncated":false,"notes":[]}"#,
        )
    );
    assert_eq!(Cl100k.count_str("# Hi\n\nBody."), 5);
    // Optional fields are omitted, never null.
    let bare = ExtractedDocument {
        markdown: "x\n".to_owned(),
        title: None,
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    };
    let json = build_json(&bare, meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert!(!json.contains("null") && !json.contains("title") && !json.contains("language"));
    assert!(!json.contains("truncation_reason"));
}

#[test]
fn fr_wf_resp_url_01_requested_url_is_passed_through_unchanged() {
    let json = build_json(&doc("x\n"), meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert_eq!(
        parse(&json)["requested_url"],
        "HTTPS://Example.com/a b?q=1#frag"
    );
}

#[test]
fn t_wf_out_04_notes_always_present() {
    let json = build_json(&doc("x\n"), meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert!(json.ends_with(r#""notes":[]}"#));
    assert_eq!(parse(&json)["notes"], Value::Array(vec![]));
}

#[test]
fn t_wf_out_01_notes_in_pipeline_stage_order() {
    let notes = [
        Note::CacheWriteFailed,
        Note::CharsetFallback,
        Note::BrowserBlockedNonGet,
        Note::BrowserDomTruncated,
        Note::BrowserUnavailableUsedHttp,
        Note::RobotsUnavailableFailOpen,
        Note::CacheHit,
    ];
    let d = doc(&sections(20));
    let full = build_json(&d, meta(&notes), 128, 1 << 20, &Cl100k).expect("fits");
    let json = build_json(&d, meta(&notes), 128, full.len() / 2, &Cl100k).expect("fits truncated");
    assert_eq!(
        parse(&json)["notes"],
        serde_json::json!([
            "cache_hit",
            "robots_unavailable_fail_open",
            "browser_unavailable_used_http",
            "browser_dom_truncated",
            "browser_blocked_non_get",
            "charset_fallback",
            "cache_write_failed",
            "tool_output_limit"
        ])
    );
}

#[test]
fn t_wf_out_03_truncation_reason_precedence() {
    let d = doc(&sections(20));
    let full_len = build_json(&d, meta(&[]), 128, 1 << 20, &Cl100k)
        .expect("fits")
        .len();
    let cases: [(&[Note], usize, Option<&str>); 4] = [
        (&[], 1 << 20, None),
        (
            &[Note::BrowserDomTruncated],
            1 << 20,
            Some("browser_dom_truncated"),
        ),
        (&[], full_len / 2, Some("tool_output_limit")),
        (
            &[Note::BrowserDomTruncated],
            full_len / 2,
            Some("tool_output_limit"),
        ),
    ];
    for (notes, budget, reason) in cases {
        let v = parse(&build_json(&d, meta(notes), 128, budget, &Cl100k).expect("fits"));
        assert_eq!(v["truncated"], reason.is_some(), "{notes:?} {budget}");
        assert_eq!(v.get("truncation_reason").and_then(Value::as_str), reason);
    }
    let both: Notes = [Note::BrowserDomTruncated, Note::ToolOutputLimit]
        .into_iter()
        .collect();
    assert_eq!(
        TruncationReason::from_notes(&both),
        Some(TruncationReason::ToolOutputLimit)
    );
}

#[test]
fn t_wf_chk_05_output_fits_by_dropping_trailing_chunks() {
    let d = doc(&sections(12));
    let chunks = plain_chunks(&d.markdown, 128, &Cl100k);
    assert!(chunks.len() >= 12);
    for keep in 1..chunks.len() {
        let exact = truncated_len(&d, &[], chunks[..keep].to_vec());
        for budget in [exact, exact + 1] {
            let json = build_json(&d, meta(&[]), 128, budget, &Cl100k).expect("fits");
            assert!(json.len() <= budget);
            let v = parse(&json);
            let kept: Vec<FetchChunk> =
                serde_json::from_value(v["chunks"].clone()).expect("chunks");
            assert_eq!(
                kept,
                chunks[..keep],
                "budget {budget}: whole chunks, untouched"
            );
            assert_eq!(v["truncation_reason"], "tool_output_limit");
        }
        // One byte less: one chunk fewer (or the first cut short).
        let json = build_json(&d, meta(&[]), 128, exact - 1, &Cl100k).expect("fits");
        let v = parse(&json);
        let n = v["chunks"].as_array().map_or(0, Vec::len);
        assert!(
            n == keep - 1 || (keep == 1 && n == 1),
            "keep {keep}: got {n}"
        );
    }
}

#[test]
fn t_wf_chk_06_first_chunk_over_budget_is_cut_not_dropped() {
    let d = doc(&sections(3));
    let chunks = plain_chunks(&d.markdown, 2048, &Cl100k);
    assert_eq!(chunks.len(), 1);
    let whole = truncated_len(&d, &[], chunks.clone());
    let json = build_json(&d, meta(&[]), 2048, whole - 100, &Cl100k).expect("fits");
    let v = parse(&json);
    let kept = v["chunks"].as_array().expect("chunks");
    assert_eq!(kept.len(), 1, "a cut chunk, not zero chunks");
    let text = kept[0]["text"].as_str().expect("text");
    assert!(chunks[0].text.starts_with(text) && text.len() < chunks[0].text.len());
    assert!(json.len() <= whole - 100);
    assert_eq!(v["truncated"], true);
}

#[test]
fn t_wf_out_02_utf8_cut_recounts_tokens_and_keeps_heading() {
    let body =
        "日本語のテキスト😀 with ASCII, \"quotes\", back\\slashes and\ttabs\u{1}. ".repeat(30);
    let markdown = format!("# 見出し\n\n{body}\n");
    let d = doc(&markdown);
    let chunk = plain_chunks(&markdown, 2048, &Cl100k).remove(0);
    let empty = FetchChunk {
        heading: chunk.heading.clone(),
        text: String::new(),
        token_count: 0,
    };
    let floor = truncated_len(&d, &[], vec![empty]);
    // From this budget on the whole response fits and nothing is cut.
    let whole = FetchResponse::new(&d, meta(&[]), vec![chunk.clone()])
        .to_json()
        .len();
    assert!(floor < whole);
    let mut previous = 0;
    for budget in floor..whole {
        let json = build_json(&d, meta(&[]), 2048, budget, &Cl100k).expect("fits");
        assert!(json.len() <= budget, "budget {budget}");
        let v = parse(&json);
        let cut: FetchChunk = serde_json::from_value(v["chunks"][0].clone()).expect("chunk");
        // FR-WF-OUT-03: the heading stays even when its line is cut away.
        assert_eq!(cut.heading, "見出し");
        assert!(
            chunk.text.starts_with(&cut.text),
            "a prefix at a char boundary"
        );
        assert_eq!(cut.token_count, Cl100k.count_str(&cut.text));
        assert!(
            cut.text.len() >= previous,
            "more budget never gives less text"
        );
        previous = cut.text.len();
        // The cut is the longest that fits: one more character would not.
        let next = chunk.text[cut.text.len()..]
            .chars()
            .next()
            .expect("cut short");
        let longer = format!("{}{next}", cut.text);
        let grown = FetchChunk {
            heading: cut.heading.clone(),
            token_count: Cl100k.count_str(&longer),
            text: longer,
        };
        assert!(
            truncated_len(&d, &[], vec![grown]) > budget,
            "budget {budget}"
        );
    }
}

#[test]
fn fr_wf_out_02_tool_output_limit_error_when_nothing_fits() {
    let d = doc(&sections(2));
    let chunks = plain_chunks(&d.markdown, 128, &Cl100k);
    let empty = FetchChunk {
        heading: chunks[0].heading.clone(),
        text: String::new(),
        token_count: 0,
    };
    let floor = truncated_len(&d, &[], vec![empty]);
    assert!(build_json(&d, meta(&[]), 128, floor, &Cl100k).is_ok());
    let error = build_json(&d, meta(&[]), 128, floor - 1, &Cl100k).expect_err("nothing fits");
    assert_eq!(error.code(), ErrorCode::Internal);
    assert_eq!(
        parse(&error.to_json()),
        serde_json::json!({
            "code": "internal",
            "message": "tool_output_limit",
            "retryable": false,
            "details": {"error": "tool_output_limit", "effective_max_bytes": floor - 1}
        })
    );
    let zero = build_json(&d, meta(&[]), 128, 0, &Cl100k).expect_err("nothing fits");
    assert_eq!(zero.details_json()["effective_max_bytes"], 0);
}

#[test]
fn a_document_without_chunks_still_answers_or_errors_cleanly() {
    let d = doc("\n");
    let json = build_json(&d, meta(&[]), 600, 1 << 20, &Cl100k).expect("fits");
    assert!(json.contains(r#""chunks":[]"#));
    assert!(build_json(&d, meta(&[]), 600, json.len() - 1, &Cl100k).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// T-WF-CHK-05 / FR-WF-OUT-01, 02: for any byte budget, valid JSON no larger than
    /// the budget whose chunks are the full chunks' leading run (the last possibly cut
    /// short), or exactly the `tool_output_limit` error, and the error only when an
    /// empty first chunk does not fit.
    #[test]
    fn t_wf_chk_05_property_any_budget_fits_or_errors_exactly(
        paragraphs in prop::collection::vec("[a-zé日😀\"\\\\\n .]{0,400}", 0..12),
        budget in 0usize..12_000,
        max in 128usize..=2048,
    ) {
        let d = doc(&paragraphs.join("\n\n"));
        let full = plain_chunks(&d.markdown, max, &Cl100k);
        match build_json(&d, meta(&[]), max, budget, &Cl100k) {
            Ok(json) => {
                prop_assert!(json.len() <= budget);
                let v = parse(&json);
                let got: Vec<FetchChunk> = serde_json::from_value(v["chunks"].clone()).expect("chunks");
                prop_assert!(got.len() <= full.len());
                let truncated = v["truncated"] == true;
                prop_assert_eq!(truncated, got != full);
                for (i, c) in got.iter().enumerate() {
                    if i + 1 < got.len() || !truncated {
                        prop_assert_eq!(c, &full[i]);
                    } else {
                        prop_assert!(full[i].text.starts_with(&c.text));
                        prop_assert_eq!(&c.heading, &full[i].heading);
                        prop_assert_eq!(c.token_count, Cl100k.count_str(&c.text));
                    }
                }
            }
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::Internal);
                prop_assert_eq!(&e.details_json()["effective_max_bytes"], &Value::from(budget));
                let floor = match full.first() {
                    Some(c) => truncated_len(&d, &[], vec![FetchChunk { heading: c.heading.clone(), text: String::new(), token_count: 0 }]),
                    None => FetchResponse::new(&d, meta(&[]), vec![]).to_json().len(),
                };
                prop_assert!(floor > budget);
            }
        }
    }
}

// ---------------------------------------------------------------- continuation

/// Windows over the document's chunking. No window is exactly `build`;
/// a window that fits whole says nothing more; cut windows say where to go on,
/// and reading on from there returns every chunk once, in order, at any budget.
#[test]
fn continuation_windows_read_every_chunk_once_in_order() {
    let d = doc(&sections(12));
    let all = plain_chunks(&d.markdown, 256, &Cl100k);
    assert!(all.len() >= 12, "{}", all.len());
    let roomy = 1 << 20;
    let srd = build_json(&d, meta(&[]), 256, roomy, &Cl100k).unwrap();
    let unwindowed = windowed(&d, meta(&[]), 256, None, roomy, &Cl100k).unwrap();
    assert_eq!(unwindowed.json, srd);
    assert_eq!(unwindowed.next_start_chunk, None);
    assert_eq!(unwindowed.total_chunks, all.len());
    // A window from 0 that fits is the SRD response, byte for byte.
    let whole = windowed(&d, meta(&[]), 256, Some(0), roomy, &Cl100k).unwrap();
    assert_eq!(whole.json, srd);

    let one_chunk = serde_json::to_string(&all[0]).unwrap().len();
    for budget in [one_chunk + 600, 3 * one_chunk + 700, 4000] {
        let mut read: Vec<FetchChunk> = Vec::new();
        let mut start = 0;
        loop {
            let built = windowed(&d, meta(&[]), 256, Some(start), budget, &Cl100k).unwrap();
            assert!(built.json.len() <= budget);
            let value: Value = serde_json::from_str(&built.json).unwrap();
            let chunks: Vec<FetchChunk> = serde_json::from_value(value["chunks"].clone()).unwrap();
            assert!(!chunks.is_empty());
            read.extend(chunks);
            match built.next_start_chunk {
                Some(next) => {
                    assert_eq!(value["next_start_chunk"], next, "{budget}");
                    assert_eq!(value["truncation_reason"], "tool_output_limit");
                    assert!(next > start);
                    start = next;
                }
                None => {
                    assert!(value.get("next_start_chunk").is_none());
                    break;
                }
            }
        }
        assert_eq!(read, all, "budget {budget}");
    }
}

#[test]
fn continuation_field_is_absent_without_a_window_even_when_cut() {
    let d = doc(&sections(12));
    let built = windowed(&d, meta(&[]), 256, None, 3000, &Cl100k).unwrap();
    assert!(
        built.next_start_chunk.is_some(),
        "the caller still learns it"
    );
    assert!(!built.json.contains("next_start_chunk"), "{}", built.json);
    assert_eq!(
        built.json,
        build_json(&d, meta(&[]), 256, 3000, &Cl100k).unwrap()
    );
}

#[test]
fn continuation_start_past_the_end_is_bad_args_with_the_chunk_count() {
    let d = doc(&sections(3));
    let total = plain_chunks(&d.markdown, 256, &Cl100k).len();
    let error = windowed(&d, meta(&[]), 256, Some(total), 1 << 20, &Cl100k).unwrap_err();
    assert_eq!(error.code(), ErrorCode::BadArgs);
    assert_eq!(error.details_json()["field"], "start_chunk");
    assert_eq!(error.details_json()["chunk_count"], total);
    let last = windowed(&d, meta(&[]), 256, Some(total - 1), 1 << 20, &Cl100k).unwrap();
    assert_eq!(last.next_start_chunk, None);
}
