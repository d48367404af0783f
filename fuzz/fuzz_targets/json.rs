//! Any bytes as a JSON body: the page reader never panics; valid JSON's pretty
//! form is a fixed point, keeps the indentation cap, and a pretty form cut at a
//! limit is the uncut one's whole lines up to that limit.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::ContentSettings;
use webfetch::ExtractionMode;
use webfetch::internals::content::json::{MAX_INDENT_LEVELS, pretty};
use webfetch::internals::content::media_type::MediaKind;
use webfetch::internals::decode::{DecodedPage, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let content = ContentSettings::default();
    let options = ReadOptions {
        mode: ExtractionMode::Srd,
        content: &content,
        pdf_worker: None,
    };
    let url = url::Url::parse("https://example.com/api").unwrap();
    let _ = DecodedPage::read(data, MediaKind::Json, Some("utf-8"), &url, &options);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(whole) = pretty(text, usize::MAX) else {
        return;
    };
    assert!(!whole.cut);
    assert_eq!(pretty(&whole.text, usize::MAX).unwrap(), whole, "not a fixed point");
    for line in whole.text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        assert!(indent <= 2 * MAX_INDENT_LEVELS + 2, "{line:?}");
    }
    let limit = usize::from(data.first().copied().unwrap_or(0)) * 4;
    let cut = pretty(text, limit).unwrap();
    if whole.text.len() <= limit {
        assert_eq!(cut, whole);
    } else {
        assert!(cut.cut && cut.text.len() <= limit);
        assert!(whole.text.starts_with(&cut.text));
        // Whole lines, unless the first line alone is over the limit.
        let rest = &whole.text[cut.text.len()..];
        assert!(rest.starts_with('\n') || !cut.text.contains('\n'), "{:?}", cut.text);
    }
});
