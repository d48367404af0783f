//! Any bytes as a robots.txt and any path: parsing, group selection and matching
//! never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::robots::RobotsTxt;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (body, path) = data.split_at(split);
    let path = String::from_utf8_lossy(path);
    for truncated in [false, true] {
        let robots = RobotsTxt::parse(body, truncated);
        let rules = robots.rules_for("forge-webfetch");
        let _ = rules.is_allowed(&path);
    }
});
