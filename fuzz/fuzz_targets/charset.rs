//! Any bytes under any declared charset: decoding never panics, is deterministic,
//! and valid UTF-8 declared as UTF-8 comes back unchanged.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::content::charset;

/// Header charsets worth crossing with the body: supported, unsupported, odd.
const LABELS: [Option<&str>; 10] = [
    None,
    Some("utf-8"),
    Some("windows-1252"),
    Some("shift_jis"),
    Some("utf-16le"),
    Some("iso-2022-jp"),
    Some("x-user-defined"),
    Some("\"UTF-8\" "),
    Some(""),
    Some("no-such-charset"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let label = LABELS[usize::from(selector) % LABELS.len()];
    let is_html = selector & 0x80 != 0;
    let decoded = charset::decode(body, label, is_html);
    assert_eq!(decoded.text, charset::decode(body, label, is_html).text);
    if label == Some("utf-8") && !body.starts_with(b"\xEF\xBB\xBF") {
        if let Ok(text) = std::str::from_utf8(body) {
            assert_eq!(decoded.text, text);
        }
    }
});
