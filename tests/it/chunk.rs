//! Chunking (SRD 3.5.3) against the real cl100k_base counter: T-WF-CHK-01..04, 07..09,
//! T-WF-DET-03, golden chunk files (T-WF-INFRA-06) and property tests.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use webfetch::FetchChunk;
use webfetch::internals::chunk::{
    BlockKind, MAX_HEADING_BYTES, SourcedChunk, blocks, chunk, heading_text,
};

use crate::support::plain_chunks;
use webfetch::{Cl100k, TokenCounter};

/// Every property a chunking must have, checked against the source:
/// * T-WF-CHK-01: `token_count <= max` for every chunk (SRD-READINGS 18);
/// * T-WF-CHK-04: `token_count` is the count of `text` alone;
/// * provenance: `text` is the decoration, then `markdown[source]`, then the
///   decoration; sources are in order and do not overlap (FR-WF-15f); everything
///   between them, before the first and after the last is whitespace: the only text
///   ever lost is whitespace at a cut;
/// * the decoration is a repeated fence line or continuation indentation only;
/// * the heading is the heading in effect where the chunk begins (SRD-READINGS 17).
fn check(markdown: &str, max: usize, chunks: &[SourcedChunk]) -> Result<(), TestCaseError> {
    let headings = headings(markdown);
    let mut previous_end = 0;
    for (i, c) in chunks.iter().enumerate() {
        let FetchChunk {
            heading,
            text,
            token_count,
        } = &c.chunk;
        prop_assert!(
            *token_count <= max,
            "chunk {i}: {token_count} > {max}: {text:?}"
        );
        prop_assert_eq!(*token_count, Cl100k.count_str(text), "chunk {}", i);
        prop_assert!(!text.trim().is_empty(), "chunk {i} is blank");
        let core = &text[c.prefix_len..text.len() - c.suffix_len];
        prop_assert_eq!(core, &markdown[c.source.clone()], "chunk {}", i);
        prop_assert!(c.source.start >= previous_end, "chunk {i} overlaps");
        let gap = &markdown[previous_end..c.source.start];
        prop_assert!(gap.trim().is_empty(), "chunk {i}: lost {gap:?}");
        previous_end = c.source.end;
        let prefix = &text[..c.prefix_len];
        let suffix = &text[text.len() - c.suffix_len..];
        let fence_line = |s: &str| {
            let s = s.trim_start_matches(' ');
            s.starts_with("```") || s.starts_with("~~~")
        };
        prop_assert!(
            prefix.bytes().all(|b| b == b' ') || (fence_line(prefix) && prefix.ends_with('\n')),
            "chunk {i}: prefix {prefix:?}"
        );
        prop_assert!(
            suffix.is_empty() || (suffix.starts_with('\n') && fence_line(&suffix[1..])),
            "chunk {i}: suffix {suffix:?}"
        );
        let in_effect = headings
            .iter()
            .take_while(|(start, _)| *start <= c.source.start)
            .last()
            .map_or("", |(_, text)| text.as_str());
        prop_assert_eq!(heading, in_effect, "chunk {}", i);
    }
    let tail = &markdown[previous_end..];
    prop_assert!(tail.trim().is_empty(), "lost the tail {tail:?}");
    Ok(())
}

/// The heading lines of the document: where each starts and its text, cut to
/// `MAX_HEADING_BYTES` at a character boundary.
fn headings(markdown: &str) -> Vec<(usize, String)> {
    blocks(markdown)
        .into_iter()
        .filter(|b| b.kind == BlockKind::Heading)
        .map(|b| {
            let mut text = heading_text(&markdown[b.span.clone()]);
            while text.len() > MAX_HEADING_BYTES {
                text.pop();
            }
            (b.span.start, text)
        })
        .collect()
}

fn checked(markdown: &str, max: usize) -> Vec<FetchChunk> {
    let chunks = chunk(markdown, &[], max, &Cl100k);
    if let Err(e) = check(markdown, max, &chunks) {
        panic!("{e}");
    }
    chunks.into_iter().map(|c| c.chunk).collect()
}

fn sentence(i: usize) -> String {
    format!("Sentence number {i} says something about trains and timetables.")
}

#[test]
fn t_wf_chk_01_chunk_sizes_never_exceed_the_budget() {
    let paragraph = (0..60).map(sentence).collect::<Vec<_>>().join(" ");
    let markdown = format!(
        "# Budget\n\n{paragraph}\n\n- {paragraph}\n- short\n\n```\n{}\n```\n\n{}\n",
        (0..300)
            .map(|i| format!("let x{i} = {i};"))
            .collect::<Vec<_>>()
            .join("\n"),
        "x".repeat(50_000),
    );
    for max in [128, 129, 300, 600, 1000, 2048] {
        let chunks = checked(&markdown, max);
        assert!(chunks.len() > 1);
        assert!(chunks.iter().all(|c| c.token_count <= max));
    }
}

#[test]
fn t_wf_chk_02_oversized_paragraph_splits_at_sentence_boundaries() {
    let paragraph = (0..80).map(sentence).collect::<Vec<_>>().join(" ");
    let chunks = checked(&format!("{paragraph}\n"), 128);
    assert!(chunks.len() >= 5, "{}", chunks.len());
    for c in &chunks {
        assert!(c.text.starts_with("Sentence number "), "{:?}", c.text);
        assert!(c.text.ends_with("timetables."), "{:?}", c.text);
    }
    // Greedy: no chunk could have taken the next sentence too.
    for pair in chunks.windows(2) {
        let next_sentence = pair[1].text.split(". ").next().unwrap_or_default();
        let grown = format!("{} {next_sentence}.", pair[0].text);
        assert!(Cl100k.count_str(&grown) > 128, "{grown:?}");
    }
    let rejoined: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(rejoined.join(" "), paragraph);
}

#[test]
fn t_wf_chk_02_sentence_then_whitespace_then_character_boundaries() {
    // One "sentence" with no boundary: split at whitespace.
    let words = (0..400)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let chunks = checked(&format!("{words}\n"), 128);
    assert!(chunks.len() > 1);
    assert!(
        chunks
            .iter()
            .all(|c| !c.text.starts_with(' ') && !c.text.ends_with(' '))
    );
    assert_eq!(
        chunks
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        words
    );
    // No whitespace at all: split between characters, never inside one.
    let cjk = "吾輩は猫である。名前はまだ無い。🚆👨‍👩‍👧‍👦".repeat(200);
    let chunks = checked(&format!("{cjk}\n"), 128);
    assert!(chunks.len() > 1);
    assert_eq!(
        chunks.iter().map(|c| c.text.as_str()).collect::<String>(),
        cjk
    );
}

#[test]
fn t_wf_chk_03_heading_tracked_across_chunks() {
    let body = (0..40).map(sentence).collect::<Vec<_>>().join(" ");
    let markdown = format!(
        "Preamble without a heading.\n\n{body}\n\n## Getting   started ##\n\n{body}\n\n#### Deeper\n\n{body}\n\n# C# and F#\n\nEnd.\n"
    );
    let chunks = checked(&markdown, 128);
    assert_eq!(chunks[0].heading, "");
    assert!(chunks[0].text.starts_with("Preamble"));
    let started: Vec<&FetchChunk> = chunks
        .iter()
        .filter(|c| c.heading == "Getting started")
        .collect();
    assert!(started.len() >= 3, "{chunks:#?}");
    assert!(started[1..].iter().all(|c| c.text.starts_with("Sentence")));
    // CHK-HEAD-02: the chunk that begins with the heading line shows it first.
    assert!(
        chunks.iter().any(
            |c| c.text.starts_with("## Getting   started ##") && c.heading == "Getting started"
        )
    );
    // CHK-HEAD-01.3: the level is not tracked; the latest heading wins.
    assert!(chunks.iter().any(|c| c.heading == "Deeper"));
    assert_eq!(chunks.last().map(|c| c.heading.as_str()), Some("C# and F#"));
}

#[test]
fn t_wf_chk_03_heading_inside_a_chunk_names_the_next_chunk() {
    // SRD-READINGS 17: the heading in effect where the chunk begins.
    let markdown = "Intro.\n\n# First\n\nShort.\n";
    let chunks = checked(markdown, 128);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].heading, "");
    assert_eq!(chunks[0].text, "Intro.\n\n# First\n\nShort.");
}

#[test]
fn t_wf_chk_04_token_count_matches_text_only() {
    let markdown = format!(
        "# A heading long enough to weigh something in tokens\n\n{}\n",
        "Body text here. ".repeat(200).trim_end()
    );
    let chunks = checked(&markdown, 128);
    assert!(chunks.len() > 2);
    for c in &chunks[1..] {
        assert_eq!(
            c.heading,
            "A heading long enough to weigh something in tokens"
        );
        assert!(!c.text.contains("heading"));
        assert_eq!(c.token_count, Cl100k.count_str(&c.text));
    }
}

#[test]
fn t_wf_chk_07_oversized_list_splits_at_item_boundaries() {
    let items: Vec<String> = (0..60)
        .map(|i| format!("- Item {i}: a complete list item about platform {i} and its trains."))
        .collect();
    let markdown = format!("{}\n", items.join("\n"));
    let chunks = checked(&markdown, 128);
    assert!(chunks.len() > 3);
    let mut seen = Vec::new();
    for c in &chunks {
        for line in c.text.lines() {
            assert!(items.iter().any(|item| item == line), "split item {line:?}");
            seen.push(line.to_owned());
        }
    }
    assert_eq!(seen, items);
}

#[test]
fn chk_list_03_oversized_item_continues_with_indented_pieces() {
    let long = (0..60).map(sentence).collect::<Vec<_>>().join(" ");
    let markdown = format!("- short item\n- {long}\n  - nested {long}\n- after\n");
    let chunks = checked(&markdown, 128);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let first = texts
        .iter()
        .position(|t| t.starts_with("- Sentence"))
        .expect("first piece");
    assert!(texts[first + 1].starts_with("  Sentence"), "{texts:#?}");
    let nested = texts
        .iter()
        .position(|t| t.starts_with("  - nested"))
        .expect("nested piece");
    assert!(texts[nested + 1].starts_with("    Sentence"), "{texts:#?}");
    assert_eq!(texts.first(), Some(&"- short item"));
    assert_eq!(texts.last(), Some(&"- after"));
}

#[test]
fn t_wf_chk_08_oversized_code_splits_at_lines_with_repeated_fences() {
    let lines: Vec<String> = (0..400)
        .map(|i| format!("    let value_{i} = compute({i}, \"label {i}\");"))
        .collect();
    let markdown = format!("Intro.\n\n```rust\n{}\n```\n\nOutro.\n", lines.join("\n"));
    let chunks = checked(&markdown, 128);
    let code: Vec<&FetchChunk> = chunks
        .iter()
        .filter(|c| c.text.contains("let value_"))
        .collect();
    assert!(code.len() > 5);
    let mut seen = Vec::new();
    for c in &code {
        assert!(c.text.starts_with("```rust\n"), "{:?}", c.text);
        assert!(c.text.ends_with("\n```"), "{:?}", c.text);
        let inner = &c.text["```rust\n".len()..c.text.len() - "\n```".len()];
        seen.extend(inner.lines().map(str::to_owned));
    }
    assert_eq!(seen, lines, "every line once, whole, in order");
}

#[test]
fn chk_code_01_code_block_that_fits_is_never_split() {
    let code = (0..20)
        .map(|i| format!("x{i}()"))
        .collect::<Vec<_>>()
        .join("\n");
    let markdown = format!("Before.\n\n```\n{code}\n```\n\nAfter.\n");
    let chunks = checked(&markdown, 128);
    assert!(
        chunks
            .iter()
            .any(|c| c.text.contains(&format!("```\n{code}\n```")))
    );
}

#[test]
fn t_wf_chk_09_block_separators_preserved_exactly() {
    let markdown = "# Title\nText right under the heading.\n\n\nTwo blank lines above.\n- a\n- b\n\n- c\n\n```\ncode\n```\nLast line.\n";
    let chunks = checked(markdown, 2048);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].text, markdown.trim_end_matches('\n'));
}

#[test]
fn t_wf_chk_09_separator_at_a_cut_belongs_to_neither_chunk() {
    let para = |c: char| format!("{c} ").repeat(100);
    let markdown = format!("{}\n\n\n{}\n", para('a').trim_end(), para('b').trim_end());
    let chunks = checked(&markdown, 128);
    assert_eq!(chunks.len(), 2);
    assert!(!chunks[0].text.ends_with('\n') && !chunks[1].text.starts_with('\n'));
}

#[test]
fn empty_and_blank_documents_have_no_chunks() {
    assert!(plain_chunks("", 600, &Cl100k).is_empty());
    assert!(plain_chunks("\n\n   \n", 600, &Cl100k).is_empty());
}

#[test]
fn t_wf_det_03_chunking_is_deterministic() {
    for input in golden_inputs() {
        let markdown = fs::read_to_string(&input).expect("read input");
        for max in [128, 600] {
            let first = plain_chunks(&markdown, max, &Cl100k);
            let second = plain_chunks(&markdown, max, &Cl100k);
            assert_eq!(first, second, "{}", input.display());
        }
    }
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The extraction goldens (`tests/golden/*.md`) and this module's own inputs
/// (`tests/golden/chunk_inputs/*.md`).
fn golden_inputs() -> Vec<PathBuf> {
    let mut inputs = Vec::new();
    for dir in [golden_dir(), golden_dir().join("chunk_inputs")] {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md") {
                inputs.push(path);
            }
        }
    }
    inputs.sort();
    inputs
}

/// T-WF-INFRA-06: `tests/golden/chunks/<name>.<max>.json` for every golden Markdown
/// file at 128, 600 and 2048 tokens. `UPDATE_GOLDENS=1` rewrites them.
#[test]
fn golden_chunk_files() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some_and(|v| v == "1");
    let out_dir = golden_dir().join("chunks");
    let inputs = golden_inputs();
    assert!(inputs.len() >= 3, "no golden inputs found");
    let mut expected_files = BTreeSet::new();
    let mut failures = Vec::new();
    for input in &inputs {
        let name = input
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 name");
        let text = fs::read_to_string(input).expect("read input");
        // An extraction golden is a metadata header, `---`, then the Markdown (or
        // the error of a page with nothing to extract, which has no chunks).
        let markdown = match text.split_once("\n---\n") {
            Some((header, body)) if header.starts_with("url: ") => body.to_owned(),
            _ => text,
        };
        if markdown.starts_with("error: ") {
            continue;
        }
        for max in [128, 600, 2048] {
            let sourced = chunk(&markdown, &[], max, &Cl100k);
            if let Err(e) = check(&markdown, max, &sourced) {
                failures.push(format!("{name} at {max}: {e}"));
            }
            let chunks: Vec<FetchChunk> = sourced.into_iter().map(|c| c.chunk).collect();
            let json = serde_json::to_string_pretty(&chunks).expect("serialise") + "\n";
            let file = format!("{name}.{max}.json");
            assert!(
                expected_files.insert(file.clone()),
                "two inputs named {name}"
            );
            let path = out_dir.join(&file);
            if update {
                fs::create_dir_all(&out_dir).expect("create golden dir");
                fs::write(&path, &json).expect("write golden");
            } else {
                match fs::read_to_string(&path) {
                    Ok(golden) if golden == json => {}
                    Ok(_) => failures.push(format!("{file} differs (UPDATE_GOLDENS=1 to accept)")),
                    Err(_) => {
                        failures.push(format!("{file} is missing (UPDATE_GOLDENS=1 to write)"))
                    }
                }
            }
        }
    }
    for entry in fs::read_dir(&out_dir).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if !expected_files.contains(&file) {
            failures.push(format!("{file} has no input"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------- property tests ----------

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z]{1,10}",
        2 => "[A-Z][a-z]{0,8}[.!?]",
        1 => "[0-9]{1,6}[.)]?",
        1 => "[\u{4e00}-\u{4e40}]{1,40}",
        1 => prop::sample::select(vec!["😀", "👨\u{200d}👩\u{200d}👧", "é", "—", "**bold**", "`code`", "#tag", "C#", "'s"])
            .prop_map(str::to_owned),
        1 => "[A-Za-z0-9+/=]{40,600}",
    ]
}

fn line(max_words: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..max_words).prop_map(|w| w.join(" "))
}

fn block() -> impl Strategy<Value = String> {
    let heading = ("#{1,7}", line(12), prop::bool::ANY).prop_map(|(h, t, closing)| {
        if closing {
            format!("{h} {t} ##")
        } else {
            format!("{h} {t}")
        }
    });
    let paragraph = prop::collection::vec(line(120), 1..4).prop_map(|l| l.join("\n"));
    let item = (
        0usize..3,
        prop::sample::select(vec!["-", "*", "+", "1.", "12)"]),
        line(150),
        prop::bool::weighted(0.1),
    );
    let list = prop::collection::vec(item, 1..25).prop_map(|items| {
        items
            .into_iter()
            .map(|(depth, marker, text, blank)| {
                format!(
                    "{}{}{marker} {text}",
                    if blank { "\n" } else { "" },
                    "  ".repeat(depth)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
            .trim_start()
            .to_owned()
    });
    let code = (
        prop::sample::select(vec!["```", "~~~", "````"]),
        "[a-z]{0,6}",
        prop::collection::vec(
            prop_oneof![line(30), Just(String::new()), "[ ]{0,8}[a-z(){};=]{0,80}"],
            0..80,
        ),
        prop::bool::weighted(0.9),
    )
        .prop_map(|(fence, lang, lines, closed)| {
            let close = if closed {
                format!("\n{fence}")
            } else {
                String::new()
            };
            format!("{fence}{lang}\n{}{close}", lines.join("\n"))
        });
    let table = prop::collection::vec(prop::collection::vec("[a-z0-9 .]{0,12}", 3), 2..40)
        .prop_map(|rows| {
            rows.iter()
                .map(|r| format!("| {} |", r.join(" | ")))
                .collect::<Vec<_>>()
                .join("\n")
        });
    prop_oneof![2 => heading, 4 => paragraph, 2 => list, 1 => code, 1 => table]
}

fn markdown() -> impl Strategy<Value = String> {
    let separator = prop::sample::select(vec!["\n", "\n\n", "\n\n\n"]);
    prop::collection::vec((block(), separator), 0..14).prop_map(|blocks| {
        let mut md: String = blocks.into_iter().map(|(b, s)| b + s).collect();
        if !md.is_empty() && !md.ends_with('\n') {
            md.push('\n');
        }
        md
    })
}

/// Anything at all, biased towards Markdown's special characters.
fn noise() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        4 => any::<char>(),
        2 => prop::sample::select(vec!['\n', ' ', '#', '-', '`', '~', '.', '*', '1', '\t', '\r', 'a']),
    ];
    prop::collection::vec(ch, 0..4000).prop_map(|c| c.into_iter().collect())
}

/// cl100k_base without its span index: every span counted from scratch.
struct FromScratch;

impl TokenCounter for FromScratch {
    fn count_str(&self, text: &str) -> usize {
        Cl100k.count_str(text)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        Cl100k.count_up_to(text, limit)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The span index changes the speed of chunking, never its result.
    #[test]
    fn span_index_gives_the_same_chunks_as_counting_from_scratch(md in markdown(), max in 128usize..=2048) {
        prop_assert_eq!(plain_chunks(&md, max, &Cl100k), plain_chunks(&md, max, &FromScratch));
    }

    /// T-WF-CHK-01, 04, 15a1, 15f on generated Markdown, any budget in the tool's range.
    #[test]
    fn t_wf_chk_01_property_markdown_within_budget_and_lossless(md in markdown(), max in 128usize..=2048) {
        check(&md, max, &chunk(&md, &[], max, &Cl100k))?;
    }

    /// The same on arbitrary text (control characters, lone `\r`, any Unicode).
    #[test]
    fn t_wf_chk_01_property_any_text_within_budget_and_lossless(text in noise(), max in 128usize..=2048) {
        check(&text, max, &chunk(&text, &[], max, &Cl100k))?;
    }

    /// Preferred cuts (here block starts picked by `pick`) keep every
    /// chunk within budget and lossless, and never make more chunks.
    #[test]
    fn property_hints_keep_chunks_within_budget_lossless_and_no_more(
        md in markdown(),
        max in 128usize..=2048,
        pick in any::<u64>(),
    ) {
        let hints: Vec<usize> = md
            .match_indices("\n\n")
            .map(|(at, _)| at + 2)
            .enumerate()
            .filter(|(i, _)| (pick >> (i % 64)) & 1 == 1)
            .map(|(_, at)| at)
            .collect();
        let hinted = chunk(&md, &hints, max, &Cl100k);
        check(&md, max, &hinted)?;
        prop_assert!(hinted.len() <= chunk(&md, &[], max, &Cl100k).len());
    }

    /// T-WF-DET-03 on generated Markdown.
    #[test]
    fn t_wf_det_03_property_deterministic(md in markdown(), max in 128usize..=2048) {
        prop_assert_eq!(plain_chunks(&md, max, &Cl100k), plain_chunks(&md, max, &Cl100k));
    }
}
