//! Any bytes as a robots.txt and any path: parsing, group selection and matching
//! never panic, literal or with the normalized path
//! (`normalize_paths`), and normalizing a path twice changes nothing.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::internals::robots::{RobotsTxt, normalize_path};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (body, path) = data.split_at(split);
    let path = String::from_utf8_lossy(path);
    let normalized = normalize_path(&path);
    assert!(normalized.starts_with('/'));
    assert_eq!(normalize_path(&normalized), normalized);
    for truncated in [false, true] {
        let robots = RobotsTxt::parse(body, truncated);
        let rules = robots.rules_for("forge-webfetch");
        let literal = rules.is_allowed(&path);
        let hardened = rules.is_allowed_normalized(&path);
        assert!(literal || !hardened, "normalizing allowed what the literal path refuses");
    }
});
