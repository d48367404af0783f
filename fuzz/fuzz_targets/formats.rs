//! Any bytes as JSON, as a feed and as publisher Markdown, through the
//! page reader. Never panics; JSON that reads re-reads to the same fence (the
//! pretty form is a fixed point); sanitised publisher Markdown drops nothing
//! more when sanitised again (unless it was cut); every error is a registry
//! code.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pulldown_cmark::{Event, LinkType, Options, Tag};
use webfetch::ContentSettings;
use webfetch::ExtractionMode;
use webfetch::internals::content::json;
use webfetch::internals::content::markdown::sanitize;
use webfetch::internals::content::media_type::MediaKind;
use webfetch::internals::decode::{DecodedPage, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let kind = [MediaKind::Json, MediaKind::Feed, MediaKind::Markdown][usize::from(selector) % 3];
    let content = ContentSettings::default();
    let read = ReadOptions {
        mode: ExtractionMode::Srd,
        content: &content,
        pdf_worker: None,
    };
    let url = url::Url::parse("https://example.com/feed").unwrap();
    let _ = DecodedPage::read(body, kind, Some("utf-8"), &url, &read);
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    match kind {
        MediaKind::Json => {
            if let Ok(pretty) = json::pretty(text, usize::MAX) {
                assert_eq!(json::pretty(&pretty.text, usize::MAX).unwrap(), pretty);
            }
        }
        MediaKind::Markdown => {
            let sanitized = sanitize(text, &url);
            if !sanitized.cut {
                let again = sanitize(&sanitized.text, &url);
                assert!(!again.dropped, "{text:?} -> {:?} -> {:?}", sanitized.text, again.text);
            }
            // Read back whole by a CommonMark reader: no link but http(s) and
            // mailto, no image but http(s).
            for event in pulldown_cmark::Parser::new_ext(&sanitized.text, options()) {
                let (dest, image) = match event {
                    Event::Start(Tag::Link { dest_url, link_type, .. }) => {
                        if link_type == LinkType::Email {
                            continue;
                        }
                        (dest_url, false)
                    }
                    Event::Start(Tag::Image { dest_url, .. }) => (dest_url, true),
                    _ => continue,
                };
                let scheme = url.join(dest.trim()).map(|u| u.scheme().to_owned());
                let allowed: &[&str] = if image { &["http", "https"] } else { &["http", "https", "mailto"] };
                assert!(
                    scheme.as_deref().is_ok_and(|s| allowed.contains(&s)),
                    "{dest:?} in {:?} from {text:?}",
                    sanitized.text
                );
            }
        }
        _ => {}
    }
});

/// The sanitiser's reading: CommonMark with GFM tables and strikethrough.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}
