//! Bot challenges in browser mode (extension, `[tools.webfetch.http]
//! detect_walls`, FR-WF-11): a page that settles on a challenge is left to
//! complete it by itself within the call's navigation budget, as any browser
//! would. The challenge's own navigation is a main-chain document like any
//! other (robots.txt, SSRF), the User-Agent stays the configured one, and a
//! challenge that never completes is the `bot_challenge` wall, not a timeout.
//! Under the SRD contract the challenge page is read as the SRD says.
//!
//! The interstitials carry the Cloudflare challenge platform's markers (the
//! table of `render/wall.rs`) and navigate a moment after they load, by their
//! own script: after the first network idle, so the call succeeds only if
//! webfetch waited.

use serde_json::{Value, json};
use webfetch::WebFetchTool;

use super::*;
use crate::support::origin::Origin;
use crate::support::{chunk_texts, robots};

/// A Cloudflare-like interstitial with status 200 whose script runs `then`.
fn interstitial(then: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>\
         <h1>127.0.0.1</h1><p>Checking if the site connection is secure</p>\
         <script>window._cf_chl_opt={{cvId:'3',cType:'managed'}};{then}</script>\
         <script src=\"/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8a\"></script>\
         </body></html>"
    )
}

/// An interstitial that replaces itself with `target` 1.5 s after it ran: well
/// after the page's first network idle (500 ms without requests).
fn navigating_to(target: &str) -> String {
    interstitial(&format!(
        "setTimeout(() => location.replace('{target}'), 1500);"
    ))
}

const ARTICLE: &str = "<!DOCTYPE html><html><head><title>The article</title></head><body>\
    <article><h1>The real article</h1><p>The challenge passed by itself and the article \
    behind it was read: REAL-ARTICLE-TEXT.</p></article></body></html>";

/// A tool for `config` with walls detected, as the agent front doors default to.
fn detecting(config: Config) -> WebFetchTool {
    config
        .section("[tools.webfetch.http]\ndetect_walls = true")
        .tool()
}

/// `url` in browser mode, uncached: the response, or the call's error.
async fn fetch(tool: &WebFetchTool, url: &str) -> Result<Value, FetchError> {
    let args = json!({ "url": url, "force_browser": true, "no_cache": true });
    let built = tool.call(&args, usize::MAX).await?;
    Ok(serde_json::from_str(&built.json).unwrap())
}

fn text(response: &Value) -> String {
    chunk_texts(response).concat()
}

/// The `User-Agent` of every request the server got for `at`.
async fn user_agents(server: &MockServer, at: &str) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|request| request.url.path() == at)
        .map(|request| {
            request
                .headers
                .get("user-agent")
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_challenge_that_completes_by_itself_gives_the_page_behind_it() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    serve_html(server, "/guarded", &navigating_to("/real?token=t0k3n")).await;
    serve_html(server, "/real", ARTICLE).await;

    let read = fetch(&detecting(rig.config(&[], "")), &rig.url("/guarded"))
        .await
        .unwrap_or_else(|error| panic!("{}", error.to_json()));
    let text = text(&read);
    assert!(text.contains("REAL-ARTICLE-TEXT"), "{read}");
    assert!(!text.contains("Checking if the site"), "{read}");
    assert_eq!(read["rendering_method"], "browser");
    assert_eq!(read["final_url"], rig.url("/real?token=t0k3n"), "{read}");

    // webfetch never disguises itself: the origin saw the configured
    // User-Agent on the challenge and on the navigation it made.
    for at in ["/guarded", "/real"] {
        assert_eq!(user_agents(server, at).await, [UA], "{at}");
    }
}

#[tokio::test]
async fn a_challenge_that_never_completes_is_a_wall_at_the_deadline() {
    let Some(rig) = Rig::new().await else { return };
    serve_html(&rig.server, "/stuck", &interstitial("")).await;

    let tool = detecting(rig.config(&[], "").timeout(3));
    let error = fetch(&tool, &rig.url("/stuck")).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Http4xx, "{}", error.to_json());
    assert!(!error.is_retryable());
    let details = error.details_json();
    assert_eq!(details["reason"], "bot_challenge");
    assert_eq!(details["vendor"], "cloudflare");
    assert!(
        !error.to_json().contains("Checking if the site"),
        "{}",
        error.to_json()
    );
}

#[tokio::test]
async fn a_challenge_whose_navigation_is_not_answered_by_the_deadline_is_a_wall() {
    let Some(rig) = Rig::new().await else { return };
    // Holds every request under `/held` until it is dropped, after the call.
    let held = Origin::start(ARTICLE);
    // Later than the other interstitials, and a longer budget: the navigation
    // must start after the first network idle, well before the deadline.
    let late = interstitial(&format!(
        "setTimeout(() => location.replace('{}'), 2500);",
        held.url("/held/real")
    ));
    serve_html(&rig.server, "/to-held", &late).await;

    let tool = detecting(rig.config(&[held.port()], "").timeout(5));
    let error = fetch(&tool, &rig.url("/to-held")).await.unwrap_err();
    let details = error.details_json();
    assert_eq!(details["reason"], "bot_challenge", "{}", error.to_json());
    assert_eq!(details["vendor"], "cloudflare");
    assert_eq!(held.count("/held/real"), 1);
}

#[tokio::test]
async fn a_challenge_that_reloads_itself_past_the_redirect_limit_is_a_wall() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    // As a challenge waiting for a clearance cookie does: webfetch sends none,
    // so each reload is the challenge again.
    let reloading = interstitial("setTimeout(() => location.reload(), 1500);");
    serve_html(server, "/reloading", &reloading).await;

    let tool = detecting(rig.config(&[], "").top("max_redirects = 1"));
    let error = fetch(&tool, &rig.url("/reloading")).await.unwrap_err();
    let details = error.details_json();
    assert_eq!(details["reason"], "bot_challenge", "{}", error.to_json());
    assert_eq!(details["vendor"], "cloudflare");
    // The page and the one hop `max_redirects` allows; the next reload was
    // refused before any request.
    assert_eq!(user_agents(server, "/reloading").await.len(), 2);
}

#[tokio::test]
async fn a_challenges_navigation_passes_robots_and_ssrf_as_any_navigation() {
    let Some(rig) = Rig::new().await else { return };
    let server = &rig.server;
    let (internal, iport) = internal_server(Ipv4Addr::new(127, 0, 0, 2)).await;
    robots(server, "User-agent: *\nDisallow: /private\n").await;
    serve_html(server, "/to-private", &navigating_to("/private/real")).await;
    serve_html(server, "/private/real", ARTICLE).await;
    serve_html(
        server,
        "/to-internal",
        &navigating_to(&format!("http://127.0.0.2:{iport}/secret")),
    )
    .await;
    let tool = detecting(rig.config(&[iport], ""));

    let disallowed = fetch(&tool, &rig.url("/to-private")).await.unwrap_err();
    assert_eq!(
        disallowed.code(),
        ErrorCode::RobotsDisallowed,
        "{}",
        disallowed.to_json()
    );
    assert!(user_agents(server, "/private/real").await.is_empty());

    let blocked = fetch(&tool, &rig.url("/to-internal")).await.unwrap_err();
    assert_eq!(
        blocked.code(),
        ErrorCode::SsrfBlocked,
        "{}",
        blocked.to_json()
    );
    assert_eq!(blocked.details_json()["blocked_ip"], "127.0.0.2");
    assert_never_contacted(&internal).await;
}

#[tokio::test]
async fn under_the_srd_contract_a_challenge_page_is_read_as_rendered() {
    let Some(rig) = Rig::new().await else { return };
    serve_html(&rig.server, "/stuck", &interstitial("")).await;

    for walls in ["", "[tools.webfetch.http]\ndetect_walls = false"] {
        let tool = rig.config(&[], "").section(walls).tool();
        let read = fetch(&tool, &rig.url("/stuck"))
            .await
            .unwrap_or_else(|error| panic!("{walls:?}: {}", error.to_json()));
        assert_eq!(read["rendering_method"], "browser");
        assert!(
            text(&read).contains("Checking if the site connection is secure"),
            "{read}"
        );
        assert_eq!(read["notes"], json!([]), "{read}");
    }
}
