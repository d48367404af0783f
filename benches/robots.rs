//! robots.txt parse and match speed (criterion). Run: `cargo bench --bench robots`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use webfetch::internals::robots::RobotsTxt;

/// A realistic file: several groups, ~300 rules, wildcards, comments.
fn realistic() -> String {
    let mut body = String::from("# robots.txt\nUser-agent: googlebot\nDisallow: /nogoogle\n\n");
    body.push_str("User-agent: *\n");
    for i in 0..300 {
        match i % 4 {
            0 => body.push_str(&format!("Disallow: /section{i}/\n")),
            1 => body.push_str(&format!("Disallow: /*?sort={i}\n")),
            2 => body.push_str(&format!("Allow: /section{i}/public/*.html$\n")),
            _ => body.push_str(&format!("Disallow: /tmp{i}/*/cache # cache\n")),
        }
    }
    body.push_str("\nUser-agent: forge-webfetch\nDisallow: /private/\nAllow: /private/ok\nSitemap: https://e.example/s.xml\n");
    body
}

fn bench(c: &mut Criterion) {
    let body = realistic();
    c.bench_function("parse_realistic_300_rules", |b| {
        b.iter(|| RobotsTxt::parse(black_box(body.as_bytes()), false))
    });
    let star_rules = RobotsTxt::parse(body.as_bytes(), false).rules_for("googlebot-news");
    c.bench_function("match_realistic_300_rules", |b| {
        b.iter(|| star_rules.is_allowed(black_box("/section77/public/page.html?sort=2")))
    });
    let big: String = body.repeat(50); // about the 512 KiB default cap
    c.bench_function("parse_512k", |b| {
        b.iter(|| RobotsTxt::parse(black_box(big.as_bytes()), false))
    });
    let path = format!("/{}", "a".repeat(100_000));
    let patho = RobotsTxt::parse(
        format!("User-agent: *\nDisallow: /{}b\n", "*a".repeat(1_000)).as_bytes(),
        false,
    )
    .rules_for("x");
    c.bench_function("match_1000_stars_100k_path", |b| {
        b.iter(|| patho.is_allowed(black_box(&path)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
