//! Any response as a possible bot wall: the first two bytes choose the status,
//! the third which vendor headers it carries, the rest is the body's head.
//! `detect` answers a wall or none, never panics; a 402 is always pay per crawl.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::render::wall::{Wall, detect};

/// Headers a response may carry, one per bit of the third byte.
const HEADERS: [(&str, &str); 8] = [
    ("cf-mitigated", "challenge"),
    ("x-amzn-waf-action", "captcha"),
    ("x-vercel-mitigated", "deny"),
    ("x-datadome", "protected"),
    ("server", "cloudflare"),
    ("server", "AkamaiGHost"),
    ("crawler-price", "USD 0.01"),
    ("x-dd-b", "1"),
];

fuzz_target!(|data: &[u8]| {
    let [high, low, bits, body @ ..] = data else {
        return;
    };
    let status = u16::from_be_bytes([*high, *low]) % 600;
    let mut headers = http::HeaderMap::new();
    for (bit, (name, value)) in HEADERS.iter().enumerate() {
        if bits & (1 << bit) != 0 {
            headers.append(*name, http::HeaderValue::from_static(value));
        }
    }
    let wall = detect(status, &headers, body);
    if status == 402 {
        assert!(matches!(wall, Some(Wall::PaymentRequired { .. })));
    }
});
