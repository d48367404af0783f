//! Issue 31: any bytes as JSON, as a feed and as publisher Markdown, through the
//! page reader. Never panics; JSON that reads re-reads to the same fence (the
//! pretty form is a fixed point); every error is a registry code.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::ContentSettings;
use webfetch::internals::content::json;
use webfetch::internals::content::media_type::MediaKind;
use webfetch::ExtractionMode;
use webfetch::internals::page::{DecodedPage, Reading};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let kind = [MediaKind::Json, MediaKind::Feed, MediaKind::Markdown][usize::from(selector) % 3];
    let content = ContentSettings::default();
    let reading = Reading {
        mode: ExtractionMode::Srd,
        content: &content,
    };
    let url = url::Url::parse("https://example.com/feed").unwrap();
    let _ = DecodedPage::read(body, kind, Some("utf-8"), &url, &reading);
    if let Ok(text) = std::str::from_utf8(body) {
        if let Ok(pretty) = json::pretty(text) {
            assert_eq!(json::pretty(&pretty).unwrap(), pretty);
        }
    }
});
