//! HTTP-mode throughput on loopback: a whole `fetch_document` (resolve through the
//! stub, connect, request, decode, cap, media type) and the pure sniffing step.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use async_compression::tokio::bufread::GzipEncoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::Formats;
use webfetch::internals::content::media_type;
use webfetch::internals::render::fetch_document;
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{LoadOptions, load_str};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn page(size: usize) -> Vec<u8> {
    let mut html = b"<!DOCTYPE html><html><body>".to_vec();
    while html.len() < size {
        html.extend_from_slice(
            b"<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n",
        );
    }
    html
}

fn fetch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = page(100 * 1024);
    let big = page(4 << 20);
    let (server, client) = runtime.block_on(async {
        let server = MockServer::start().await;
        let mut gz = Vec::new();
        GzipEncoder::new(&big[..])
            .read_to_end(&mut gz)
            .await
            .unwrap();
        Mock::given(path("/plain"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(plain.clone(), "text/html"))
            .mount(&server)
            .await;
        Mock::given(path("/gzip"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-encoding", "gzip")
                    .set_body_raw(gz, "text/html"),
            )
            .mount(&server)
            .await;
        let text = format!(
            "[tools.webfetch]\n[tools.webfetch.security]\nallow_insecure_overrides = true\n\
             block_loopback = false\nallowed_ports = [{}]\n",
            server.address().port()
        );
        let settings = Arc::new(load_str(&text, LoadOptions::default()).unwrap().settings);
        let validator = StubValidator::new(&settings.security)
            .with_host("bench.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        (server, HttpClient::new(settings, Arc::new(validator)))
    });
    let port = server.address().port();
    let mut group = c.benchmark_group("http");
    group
        .measurement_time(Duration::from_secs(5))
        .sample_size(30);
    for (name, size) in [("plain_100k", plain.len()), ("gzip_4m", big.len())] {
        let url = CanonicalUrl::parse(&format!(
            "http://bench.test:{port}/{}",
            name.split('_').next().unwrap()
        ))
        .unwrap();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("fetch_document_{name}"), |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let deadline = Instant::now() + Duration::from_secs(20);
                    black_box(
                        fetch_document(&client, &url, deadline, None, None)
                            .await
                            .unwrap(),
                    )
                })
            })
        });
    }
    group.finish();
}

fn sniff(c: &mut Criterion) {
    let mut body = b"\xEF\xBB\xBF   \r\n".to_vec();
    body.extend_from_slice(&page(4096));
    c.bench_function("media_type_select_sniffed", |b| {
        b.iter(|| media_type::select(black_box(None), black_box(&body), Formats::NONE))
    });
}

criterion_group!(benches, fetch, sniff);
criterion_main!(benches);
