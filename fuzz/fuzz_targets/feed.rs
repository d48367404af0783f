//! Any bytes as an RSS or Atom feed through the page reader: never a panic, and
//! the Markdown follows the HTML path's rules: read back by a CommonMark reader,
//! it holds no raw HTML and no link or image but http(s) and mailto ones.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pulldown_cmark::{Event, Parser, Tag};
use webfetch::ContentSettings;
use webfetch::ExtractionMode;
use webfetch::internals::content::media_type::MediaKind;
use webfetch::internals::decode::{DecodedPage, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let content = ContentSettings::default();
    let options = ReadOptions {
        mode: ExtractionMode::Srd,
        content: &content,
        pdf_worker: None,
    };
    let url = url::Url::parse("https://example.com/feed").unwrap();
    let Ok(page) = DecodedPage::read(data, MediaKind::Feed, Some("utf-8"), &url, &options) else {
        return;
    };
    for event in Parser::new(&page.document.markdown) {
        match event {
            Event::Html(html) | Event::InlineHtml(html) => {
                panic!("raw HTML {html:?} in {:?}", page.document.markdown)
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                let scheme = url.join(&dest_url).map(|u| u.scheme().to_owned());
                assert!(
                    matches!(scheme.as_deref(), Ok("http" | "https" | "mailto")),
                    "{dest_url:?} in {:?}",
                    page.document.markdown
                );
            }
            _ => {}
        }
    }
});
