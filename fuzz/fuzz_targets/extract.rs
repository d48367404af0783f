//! Any bytes through charset decoding and HTML extraction in both modes (SRD and
//! article): a document or a structured error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::content::charset;

fuzz_target!(|data: &[u8]| {
    let base = url::Url::parse("https://example.com/dir/page").expect("valid base");
    let decoded = charset::decode(data, None, true);
    let _ = webfetch::extract::extract_html(&decoded.text, &base);
    let _ = webfetch::extract::extract_html_with(
        &decoded.text,
        &base,
        webfetch::vocabulary::ExtractionMode::Article,
    );
    let _ = webfetch::extract::extract_plain(&decoded.text);
});
