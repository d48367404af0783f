//! Browser mode, launch included: the wall time of one render of a local page
//! (wiremock on loopback: HTML, one script, one XHR). Needs Chromium: set
//! `FORGE_TEST_CHROMIUM_PATH` (skipped otherwise, like the tests).
//!
//! Before measuring, five renders print their phase breakdown (the
//! `browser_render` / `browser_page` debug events) so the report can say what
//! dominates.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tokio::time::Instant;
use webfetch::CanonicalUrl;
use webfetch::internals::render::browser::{RenderContext, render};
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{LoadOptions, load_str};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn browser(c: &mut Criterion) {
    let Ok(chromium) = std::env::var("FORGE_TEST_CHROMIUM_PATH") else {
        eprintln!("skipped: FORGE_TEST_CHROMIUM_PATH is not set");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        let page = "<!doctype html><html><head><title>Bench</title><script src=\"/app.js\"></script></head>\
                    <body><main id=\"root\"><h1>Local page</h1><p>Static text.</p></main>\
                    <script>fetch('/api').then(r => r.text()).then(t => { document.getElementById('root').insertAdjacentHTML('beforeend', '<p>' + t + '</p>'); });</script>\
                    </body></html>";
        for (at, body, mime) in [
            ("/", page, "text/html"),
            ("/app.js", "document.title = 'Rendered';", "text/javascript"),
            ("/api", "from the api", "text/plain"),
        ] {
            Mock::given(path(at))
                .respond_with(ResponseTemplate::new(200).set_body_raw(body, mime))
                .mount(&server)
                .await;
        }
        server
    });
    let port = server.address().port();
    let settings = load_str(&format!(
        "[tools.webfetch.security]\nallow_insecure_overrides = true\nblock_loopback = false\nallowed_ports = [{port}]\n\
         [tools.webfetch.browser]\nchromium_path = \"{chromium}\"\n"
    ), LoadOptions::default())
    .unwrap()
    .settings;
    let settings = Arc::new(settings);
    let validator = Arc::new(StubValidator::new(&settings.security));
    let client = HttpClient::new(Arc::clone(&settings), validator);
    let url = CanonicalUrl::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let once = || {
        let ctx = RenderContext::new(&client, &url, Instant::now() + settings.timeout());
        runtime.block_on(async { render(&ctx).await.expect("render succeeds") })
    };

    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("webfetch::browser=debug")
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..5 {
            let started = std::time::Instant::now();
            once();
            eprintln!("render wall time: {:?}", started.elapsed());
        }
    });

    let mut group = c.benchmark_group("browser");
    group.sample_size(10);
    group.bench_function("render_local_page_launch_included", |b| b.iter(once));
    group.finish();
}

criterion_group!(benches, browser);
criterion_main!(benches);
