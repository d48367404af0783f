//! Walls against loopback origins that answer as the vendors' walls do: with
//! `[tools.webfetch.http] detect_walls` (the agent front doors' default) each is
//! an `http_4xx` naming the wall and the vendor, never the interstitial as
//! content; a page that only mentions the walls is read; a 402 names its price;
//! an application shell read without a browser is noted; and under the SRD
//! contract every answer stays the SRD's.

use serde_json::{Value, json};
use webfetch::{ErrorCode, FetchError, WebFetchTool};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Config, html, serve};

const CLOUDFLARE_INTERSTITIAL: &str = "<!DOCTYPE html><html><head><title>Just a moment...</title>\
    </head><body><h1>127.0.0.1</h1><p>Checking if the site connection is secure</p>\
    <script>window._cf_chl_opt={cvId:'3',cType:'managed'};</script>\
    <script src=\"/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8a\"></script>\
    </body></html>";

fn tool(server: &MockServer, detect: Option<bool>) -> WebFetchTool {
    let mut config = Config::new(&[server.address().port()]);
    if let Some(detect) = detect {
        config = config.section(&format!("[tools.webfetch.http]\ndetect_walls = {detect}"));
    }
    config.tool()
}

async fn call(tool: &WebFetchTool, server: &MockServer, path: &str) -> Result<Value, FetchError> {
    let url = format!("http://127.0.0.1:{}{path}", server.address().port());
    let built = tool.call(&json!({ "url": url }), usize::MAX).await?;
    Ok(serde_json::from_str(&built.json).unwrap())
}

fn page(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.as_bytes().to_vec(), "text/html")
}

#[tokio::test]
async fn each_vendors_wall_is_an_error_naming_it_and_never_content() {
    let server = MockServer::start().await;
    let datadome = "<html><body><script>var dd={'rt':'c','cid':'AHrlqA'}</script>\
        <script src=\"https://ct.captcha-delivery.com/c.js\"></script></body></html>";
    let human = "<html><head><script>window._pxAppId='PXabc';</script></head>\
        <body><div id=\"px-captcha\"></div><p>Press and hold to confirm you are a human</p></body></html>";
    let akamai = "<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>\
        You don't have permission to access this server.</BODY></HTML>";
    let walls: [(&str, ResponseTemplate, &str); 8] = [
        (
            "/cloudflare-403",
            page(403, CLOUDFLARE_INTERSTITIAL).insert_header("cf-mitigated", "challenge"),
            "cloudflare",
        ),
        (
            "/cloudflare-200",
            page(200, CLOUDFLARE_INTERSTITIAL),
            "cloudflare",
        ),
        (
            "/datadome",
            page(403, datadome).insert_header("x-datadome", "protected"),
            "datadome",
        ),
        ("/human", page(403, human), "human"),
        (
            "/akamai",
            page(403, akamai).insert_header("server", "AkamaiGHost"),
            "akamai",
        ),
        (
            "/aws",
            page(405, "").insert_header("x-amzn-waf-action", "captcha"),
            "aws_waf",
        ),
        (
            "/vercel",
            page(429, "").insert_header("x-vercel-mitigated", "challenge"),
            "vercel",
        ),
        (
            "/captcha",
            page(
                200,
                "<html><title>Check</title><body><p>Please verify you are human to continue.</p>\
                 <div class=\"h-captcha\" data-sitekey=\"x\"></div></body></html>",
            ),
            "captcha",
        ),
    ];
    for (path, response, _) in &walls {
        serve(&server, path, response.clone()).await;
    }
    let tool = tool(&server, Some(true));
    for (path, _, vendor) in walls {
        let error = call(&tool, &server, path).await.unwrap_err();
        assert_eq!(error.code(), ErrorCode::Http4xx, "{path}");
        assert!(!error.is_retryable(), "{path}");
        let details = error.details_json();
        assert_eq!(details["reason"], "bot_challenge", "{path}");
        assert_eq!(details["vendor"], vendor, "{path}");
        assert!(
            error.message().contains("refused an automated client"),
            "{}",
            error.message()
        );
        let envelope = error.to_json();
        for words in [
            "Checking if the site",
            "Access Denied",
            "Press and hold",
            "verify you are human",
        ] {
            assert!(!envelope.contains(words), "{path}: {envelope}");
        }
    }
}

#[tokio::test]
async fn pay_per_crawl_is_payment_required_with_its_price() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/priced",
        page(402, "").insert_header("crawler-price", "USD 0.01"),
    )
    .await;
    let error = call(&tool(&server, Some(true)), &server, "/priced")
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::Http4xx);
    assert!(!error.is_retryable());
    assert_eq!(
        Value::Object(error.details_json()),
        json!({"price": "USD 0.01", "reason": "payment_required", "status": 402, "status_text": "Payment Required"})
    );
    assert!(
        error.message().contains("does not pay"),
        "{}",
        error.message()
    );
}

#[tokio::test]
async fn pages_that_mention_walls_and_plain_refusals_are_what_they_are() {
    let server = MockServer::start().await;
    let explainer = format!(
        "<html><head><title>What \"Just a moment...\" means</title></head><body><article>\
         <h1>Cloudflare's challenge page</h1><p>Sites behind Cloudflare may show \"Checking if \
         the site connection is secure\" while a script from /cdn-cgi/challenge-platform/ sets \
         window._cf_chl_opt. DataDome, HUMAN and AWS WAF do the same.</p>{}</article></body></html>",
        "<p>The rest of a long article about bot management.</p>".repeat(1_500)
    );
    serve(&server, "/explainer", html(&explainer)).await;
    serve(
        &server,
        "/forbidden",
        page(403, "<h1>Forbidden</h1>").insert_header("server", "cloudflare"),
    )
    .await;
    let tool = tool(&server, Some(true));
    let read = call(&tool, &server, "/explainer").await.unwrap();
    assert!(
        read["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Cloudflare's challenge page")
    );
    let refused = call(&tool, &server, "/forbidden").await.unwrap_err();
    assert_eq!(
        Value::Object(refused.details_json()),
        json!({"status": 403, "status_text": "Forbidden"})
    );
}

#[tokio::test]
async fn under_the_srd_contract_walls_are_answered_as_the_srd_says() {
    let server = MockServer::start().await;
    serve(
        &server,
        "/cloudflare-403",
        page(403, CLOUDFLARE_INTERSTITIAL).insert_header("cf-mitigated", "challenge"),
    )
    .await;
    serve(
        &server,
        "/cloudflare-200",
        page(200, CLOUDFLARE_INTERSTITIAL),
    )
    .await;
    serve(
        &server,
        "/priced",
        page(402, "").insert_header("crawler-price", "USD 0.01"),
    )
    .await;
    for detect in [None, Some(false)] {
        let tool = tool(&server, detect);
        let error = call(&tool, &server, "/cloudflare-403").await.unwrap_err();
        assert_eq!(
            error.to_json(),
            r#"{"code":"http_4xx","message":"HTTP 403 Forbidden","retryable":false,"details":{"status":403,"status_text":"Forbidden"}}"#
        );
        let read = call(&tool, &server, "/cloudflare-200").await.unwrap();
        assert!(
            read["chunks"][0]["text"]
                .as_str()
                .unwrap()
                .contains("Checking if the site")
        );
        let priced = call(&tool, &server, "/priced").await.unwrap_err();
        assert_eq!(
            Value::Object(priced.details_json()),
            json!({"status": 402, "status_text": "Payment Required"})
        );
    }
}

#[tokio::test]
async fn an_application_shell_read_without_a_browser_says_javascript_was_needed() {
    let server = MockServer::start().await;
    let shell = "<html><head><title>App</title></head><body><main><h1>Acme</h1>\
        <div id=\"root\"><p>Loading\u{2026}</p></div></main>\
        <script src=\"/static/app.js\"></script></body></html>";
    serve(&server, "/app", html(shell)).await;
    serve(&server, "/article", html("<html><body><main><p>An ordinary page with words enough to be a page and not a shell at all, which it is not.</p></main></body></html>")).await;
    let tool = tool(&server, Some(true));
    // The test config has the browser off: the SRD's own note says the
    // fallback was wanted and not had; ours says what that means.
    let read = call(&tool, &server, "/app").await.unwrap();
    assert_eq!(
        read["notes"],
        json!(["browser_unavailable_used_http", "javascript_required"]),
        "{read}"
    );
    let plain = call(&tool, &server, "/article").await.unwrap();
    assert_eq!(plain["notes"], json!([]));
    let srd = call(&self::tool(&server, None), &server, "/app")
        .await
        .unwrap();
    assert_eq!(srd["notes"], json!(["browser_unavailable_used_http"]));
}
