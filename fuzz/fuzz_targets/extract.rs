//! Any bytes through charset decoding and HTML extraction in every mode (SRD,
//! article and auto): a document or a structured error, never a panic. Auto mode
//! (issue 29) must also never fail on a page whose SRD reading has text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::content::charset;
use webfetch::ExtractionMode;

fuzz_target!(|data: &[u8]| {
    let base = url::Url::parse("https://example.com/dir/page").expect("valid base");
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
