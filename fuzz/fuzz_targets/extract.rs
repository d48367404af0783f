//! Any bytes through charset decoding and HTML extraction in every mode (SRD,
//! article and auto): a document or a structured error, never a panic. Auto mode
//! must also never fail on a page whose SRD reading has text. The
//! input's length picks the page's URL among shapes that lead auto mode to each
//! of its readings (a story, a thread, a product, a listing, documentation).
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::content::charset;
use webfetch::ExtractionMode;

/// URLs whose shape alone decides auto mode's page type.
const URLS: [&str; 6] = [
    "https://example.com/dir/page",
    "https://example.com/story/24/01/12/a-story",
    "https://forum.example.com/t/a-thread/42",
    "https://example.com/products/a-thing",
    "https://example.com/category/things",
    "https://docs.example.com/guide/start",
];

fuzz_target!(|data: &[u8]| {
    let base = url::Url::parse(URLS[data.len() % URLS.len()]).expect("valid base");
    let decoded = charset::decode(data, None, true);
    let srd = webfetch::internals::extract::extract_html(&decoded.text, &base, ExtractionMode::Srd);
    let _ = webfetch::internals::extract::extract_html(&decoded.text, &base, ExtractionMode::Article);
    let auto = webfetch::internals::extract::extract_html(&decoded.text, &base, ExtractionMode::Auto);
    if srd.is_ok() {
        let auto = auto.expect("auto mode answers whenever SRD mode does");
        assert!(auto.document.page_type.is_some());
        assert!(!auto.document.markdown.is_empty());
    }
    let _ = webfetch::internals::extract::extract_plain(&decoded.text);
});
