//! The config loader gives settings or a configuration error for any bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = webfetch::load_str(&String::from_utf8_lossy(data), webfetch::LoadOptions::default());
});
