//! Any bytes as a PDF. Reading never panics, never hangs (pages,
//! glyphs and operations are capped), and gives either Markdown or an
//! `extraction_failed` whose `details.reason` is a PDF reason; the page starts
//! (chunk-boundary hints) are increasing character boundaries inside the
//! Markdown. Seeded with real
//! PDFs (`fuzz/README.md`) so mutations reach fonts and content streams.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::content::pdf::{Limits, read};
use webfetch::ErrorCode;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_pages: 20,
    };
    match read(data, &limits) {
        Ok(read) => {
            assert!(read.page_count > 0);
            let doc = &read.document;
            assert!(doc.page_starts.windows(2).all(|w| w[0] < w[1]), "{:?}", doc.page_starts);
            assert!(
                doc.page_starts
                    .iter()
                    .all(|&at| at < doc.markdown.len() && doc.markdown.is_char_boundary(at)),
                "{:?}",
                doc.page_starts
            );
        }
        Err(error) => {
            assert_eq!(error.code(), ErrorCode::ExtractionFailed, "{}", error.message());
            let reason = error.details_json()["reason"].as_str().unwrap_or("").to_owned();
            assert!(reason.starts_with("pdf_"), "{reason}");
        }
    }
});
