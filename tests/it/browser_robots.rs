//! robots.txt in browser mode (FR-WF-ROBOTS-SCOPE-01): the top frame's
//! chain is always checked; frame documents only with the extension switch
//! `[tools.webfetch.browser] robots_for_frames`, which `webfetch mcp` and `serve`
//! turn on when the config leaves it unset. Scripts' own requests (fetch, XHR) are
//! never robots-checked.
//!
//! Runs where `FORGE_TEST_CHROMIUM_PATH` names a Chromium, with real robots.txt
//! files on loopback servers: `site.test` and `other.test` (two ports, so two more
//! origins) through the stub resolver, `127.0.0.1` for the binary.

use std::io::Write as _;

use serde_json::{Value, json};
use tracing::instrument::WithSubscriber as _;
use wiremock::{MockServer, ResponseTemplate};

use crate::mcp::{call, start_server, text as mcp_text};
use crate::support::gate::Gate;
use crate::support::{
    Config, LogBuffer, browser_section, browser_turn, chromium, hits, html, json_files, robots,
    serve, site,
};

/// One browser at a time in this module: each test launches its own.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The robots.txt of every origin here that has one: `/private` is disallowed.
const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

/// The text of every chunk of a response.
fn chunks_text(response: &Value) -> String {
    response["chunks"]
        .as_array()
        .expect("a success response")
        .iter()
        .map(|chunk| chunk["text"].as_str().unwrap())
        .collect()
}

/// A frame document that writes `marker` into the page that embeds it (same
/// origin only), so its text reaches the output.
fn marking_frame(marker: &str) -> ResponseTemplate {
    html(&format!(
        "<html><body><script>parent.mark('{marker}');</script></body></html>"
    ))
}

/// The sites of [`robots_page`]: the page's own, another origin whose robots.txt
/// disallows `/private`, and a third whose robots.txt fails (HTTP 500).
struct Sites {
    main: MockServer,
    other: MockServer,
    broken: MockServer,
    gate: Gate,
}

impl Sites {
    async fn start() -> Sites {
        let sites = Sites {
            main: MockServer::start().await,
            other: MockServer::start().await,
            broken: MockServer::start().await,
            gate: Gate::start().await,
        };
        sites.mount().await;
        sites
    }

    /// The three sites' ports, then the gate's.
    fn ports(&self) -> [u16; 4] {
        let [main, other, broken] =
            [&self.main, &self.other, &self.broken].map(|s| s.address().port());
        [main, other, broken, self.gate.port()]
    }

    /// `/page` (allowed) frames: a disallowed same-origin path, an allowed one, an
    /// allowed path that redirects into a disallowed one, a disallowed and an
    /// allowed path of `other`, a path of `broken`, and (from its script) a
    /// disallowed same-origin path. Once every frame has loaded or failed, it
    /// fetches a disallowed path with `fetch()` and writes the text, then marks
    /// itself settled and releases the [`Gate`], which held the network busy
    /// until then: the rendered DOM has all of it, however slow the machine.
    async fn mount(&self) {
        let [_, other, broken, _] = self.ports();
        let gate = self.gate.script();
        let page = format!(
            r#"<html><head><title>Frames</title><script>
{gate}
function mark(t) {{ const p = document.createElement('p'); p.textContent = t; document.body.appendChild(p); }}
let pending = 7;
function loaded() {{
  if (--pending > 0) return;
  fetch('/private/data').then(r => r.text()).then(mark, () => mark('FETCH-FAILED'))
    .then(() => {{ mark('ALL-FRAMES-SETTLED'); gate_release(); }});
}}
</script></head><body><h1>Frames</h1><p>The page itself.</p>
<iframe src="/private/frame" onload="loaded()"></iframe>
<iframe src="/open/frame" onload="loaded()"></iframe>
<iframe src="/hop" onload="loaded()"></iframe>
<iframe src="http://other.test:{other}/private/frame" onload="loaded()"></iframe>
<iframe src="http://other.test:{other}/open/frame" onload="loaded()"></iframe>
<iframe src="http://other.test:{broken}/open/frame" onload="loaded()"></iframe>
<script>
const scripted = document.createElement('iframe');
scripted.onload = loaded;
scripted.src = '/private/scripted';
document.body.appendChild(scripted);
</script></body></html>"#
        );
        let main = &self.main;
        robots(main, ROBOTS).await;
        serve(main, "/page", html(&page)).await;
        serve(
            main,
            "/private/frame",
            marking_frame("SAME-ORIGIN-FRAME-TEXT"),
        )
        .await;
        serve(main, "/open/frame", marking_frame("OPEN-FRAME-TEXT")).await;
        serve(
            main,
            "/hop",
            ResponseTemplate::new(302).insert_header("location", "/private/hop-target"),
        )
        .await;
        serve(
            main,
            "/private/hop-target",
            marking_frame("HOP-TARGET-TEXT"),
        )
        .await;
        serve(
            main,
            "/private/scripted",
            marking_frame("SCRIPTED-FRAME-TEXT"),
        )
        .await;
        serve(
            main,
            "/private/data",
            ResponseTemplate::new(200).set_body_raw("FETCHED-PRIVATE-DATA", "text/plain"),
        )
        .await;
        robots(&self.other, ROBOTS).await;
        for at in ["/private/frame", "/open/frame"] {
            serve(&self.other, at, html("<p>other origin</p>")).await;
        }
        serve(&self.broken, "/robots.txt", ResponseTemplate::new(500)).await;
        serve(&self.broken, "/open/frame", html("<p>broken robots</p>")).await;
    }

    /// Every server's request log, emptied for the next render.
    async fn reset(&self) {
        for server in [&self.main, &self.other, &self.broken] {
            server.reset().await;
        }
        self.mount().await;
    }

    /// Renders `/page` with `force_browser` under the browser table `browser` and
    /// `robots_table`; the response and the captured `webfetch` logs.
    async fn render(&self, chromium: &str, browser: &str, robots_table: &str) -> (Value, String) {
        let mut config = Config::new(&self.ports()).section(&browser_section(chromium, browser));
        if !robots_table.is_empty() {
            config = config.section(robots_table);
        }
        let tool = config.tool();
        let args = json!({ "url": site(&self.main, "/page"), "force_browser": true });
        let buffer = LogBuffer::default();
        let result = tool
            .call(&args, usize::MAX)
            .with_subscriber(buffer.subscriber("webfetch=debug"))
            .await;
        let logs = buffer.text();
        let built = result.unwrap_or_else(|e| panic!("{}\nlogs:\n{logs}", e.to_json()));
        (serde_json::from_str(&built.json).unwrap(), logs)
    }
}

/// The markers the frames and the script write, and whether each must be in the
/// output.
fn assert_markers(response: &Value, expected: &[(&str, bool)]) {
    let text = chunks_text(response);
    assert!(text.contains("The page itself."), "{text}");
    assert!(text.contains("ALL-FRAMES-SETTLED"), "{text}");
    for (marker, present) in expected {
        assert_eq!(text.contains(marker), *present, "{marker}: {text}");
    }
}

/// The `robots_disallowed` count of the render's `browser_subrequests` line.
fn robots_disallowed_count(logs: &str) -> Option<u64> {
    let line = logs.lines().find(|l| l.contains("browser_subrequests"))?;
    let start = line.find(" robots_disallowed=")? + " robots_disallowed=".len();
    line[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// ROBOTS-SCOPE-01 as the SRD writes it (switch off, the library's default): frame
/// documents are not robots-checked, so a disallowed same-origin path, a redirect
/// into one, a script-made frame and a disallowed path of another origin all load
/// and the same-origin ones' text reaches the output. With `robots_for_frames =
/// true` each of them is failed at its URL or hop through the call's
/// robots check (each origin's robots.txt fetched once; a robots.txt that fails
/// follows `fail_open`), the servers never see the disallowed paths, and the call
/// still succeeds with the page. A `fetch()` of a disallowed path is served in
/// both settings.
#[tokio::test]
async fn robots_for_frames_checks_frame_documents_only_when_on() {
    let Some(chromium) = chromium() else { return };
    let _turn = browser_turn(&SERIAL).await;
    let sites = Sites::start().await;

    // Off (SRD): every frame loads; robots.txt is read for the page only.
    let (off, off_logs) = sites.render(&chromium, "", "").await;
    assert_eq!(off["notes"], json!([]), "{off}");
    assert_markers(
        &off,
        &[
            ("SAME-ORIGIN-FRAME-TEXT", true),
            ("OPEN-FRAME-TEXT", true),
            ("HOP-TARGET-TEXT", true),
            ("SCRIPTED-FRAME-TEXT", true),
            ("FETCHED-PRIVATE-DATA", true),
        ],
    );
    for at in [
        "/private/frame",
        "/hop",
        "/private/hop-target",
        "/private/scripted",
    ] {
        assert_eq!(hits(&sites.main, at).await, 1, "{at}");
    }
    assert_eq!(hits(&sites.main, "/robots.txt").await, 1);
    assert_eq!(hits(&sites.other, "/private/frame").await, 1);
    assert_eq!(hits(&sites.other, "/robots.txt").await, 0);
    assert_eq!(hits(&sites.broken, "/open/frame").await, 1);
    assert_eq!(hits(&sites.broken, "/robots.txt").await, 0);
    assert_eq!(robots_disallowed_count(&off_logs), Some(0), "{off_logs}");

    // On: the disallowed frames are failed before any request for them.
    sites.reset().await;
    let (on, on_logs) = sites
        .render(&chromium, "robots_for_frames = true\n", "")
        .await;
    assert_eq!(on["notes"], json!([]), "{on}");
    assert_eq!(on["rendering_method"], "browser");
    assert_markers(
        &on,
        &[
            ("SAME-ORIGIN-FRAME-TEXT", false),
            ("OPEN-FRAME-TEXT", true),
            ("HOP-TARGET-TEXT", false),
            ("SCRIPTED-FRAME-TEXT", false),
            ("FETCHED-PRIVATE-DATA", true),
        ],
    );
    for (at, served) in [
        ("/private/frame", 0),
        ("/open/frame", 1),
        // Blocked at the hop: the redirect was fetched, its target never.
        ("/hop", 1),
        ("/private/hop-target", 0),
        ("/private/scripted", 0),
        // Not a frame: never robots-checked.
        ("/private/data", 1),
        // One robots.txt fetch for the page and all its same-origin frames.
        ("/robots.txt", 1),
    ] {
        assert_eq!(hits(&sites.main, at).await, served, "{at}");
    }
    assert_eq!(hits(&sites.other, "/private/frame").await, 0);
    assert_eq!(hits(&sites.other, "/open/frame").await, 1);
    assert_eq!(hits(&sites.other, "/robots.txt").await, 1);
    // robots.txt unavailable and fail_open = false (the default): refused.
    assert_eq!(hits(&sites.broken, "/open/frame").await, 0);
    assert!(hits(&sites.broken, "/robots.txt").await >= 1);
    assert_eq!(robots_disallowed_count(&on_logs), Some(4), "{on_logs}");

    // On, failing open: the frame whose robots.txt failed loads, with the note the
    // top chain gets for the same failure.
    sites.reset().await;
    let (open, _) = sites
        .render(
            &chromium,
            "robots_for_frames = true\n",
            "[tools.webfetch.robots]\nfail_open = true",
        )
        .await;
    assert_eq!(
        open["notes"],
        json!(["robots_unavailable_fail_open"]),
        "{open}"
    );
    assert_markers(
        &open,
        &[("SAME-ORIGIN-FRAME-TEXT", false), ("OPEN-FRAME-TEXT", true)],
    );
    assert_eq!(hits(&sites.broken, "/open/frame").await, 1);
    assert_eq!(hits(&sites.other, "/private/frame").await, 0);
}

/// Mounts on `server` a robots.txt disallowing `/private` and `/page`, which
/// frames `/private/frame` (its text: `FRAME-ONLY-TEXT`) and marks `FRAME-SETTLED`
/// after the frame loaded or failed, then releases `gate` (see [`Gate`]).
async fn serve_framed_page(server: &MockServer, gate: &Gate) {
    robots(server, ROBOTS).await;
    serve(
        server,
        "/page",
        html(
            &format!(
                r#"<html><head><title>Framed</title><script>
{gate}
function mark(t) {{ const p = document.createElement('p'); p.textContent = t; document.body.appendChild(p); }}
function loaded() {{ mark('FRAME-SETTLED'); gate_release(); }}
</script></head><body><h1>Framed</h1><p>The page itself.</p>
<iframe src="/private/frame" onload="loaded()"></iframe></body></html>"#,
                gate = gate.script()
            ),
        ),
    )
    .await;
    serve(server, "/private/frame", marking_frame("FRAME-ONLY-TEXT")).await;
}

/// The text of a successful response of [`serve_framed_page`]'s page, and whether
/// the frame's text is in it.
fn frame_text_shown(response: &Value) -> bool {
    let text = chunks_text(response);
    assert!(text.contains("FRAME-SETTLED"), "{text}");
    text.contains("FRAME-ONLY-TEXT")
}

/// The front doors: with a config that leaves `robots_for_frames` unset,
/// `webfetch fetch` answers by the SRD (the disallowed frame's text is in the
/// output) and `webfetch mcp` by the agent contract (it is not, and the server
/// never served it); a config that sets it to `false` gives the SRD answer through
/// MCP too.
#[tokio::test]
async fn mcp_checks_frames_by_default_and_fetch_does_not() {
    let Some(chromium) = chromium() else { return };
    let _turn = browser_turn(&SERIAL).await;
    let server = MockServer::start().await;
    let port = server.address().port();
    let gate = Gate::start().await;
    serve_framed_page(&server, &gate).await;
    let config_file = |browser: &str| {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let toml = Config::new(&[port, gate.port()])
            .section(&browser_section(&chromium, browser))
            .toml();
        file.write_all(toml.as_bytes()).unwrap();
        file
    };
    let unset = config_file("");
    let url = format!("http://127.0.0.1:{port}/page");

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(["fetch", &url, "--force-browser", "--config"])
        .arg(unset.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let fetched: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(frame_text_shown(&fetched));
    assert_eq!(hits(&server, "/private/frame").await, 1);

    let client = start_server(&["--config", unset.path().to_str().unwrap()]).await;
    let result = call(&client, json!({ "url": url, "force_browser": true })).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert!(!frame_text_shown(&mcp_text(&result)));
    assert_eq!(hits(&server, "/private/frame").await, 1, "MCP never asked");
    client.cancel().await.unwrap();

    let off = config_file("robots_for_frames = false\n");
    let client = start_server(&["--config", off.path().to_str().unwrap()]).await;
    let result = call(&client, json!({ "url": url, "force_browser": true })).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert!(frame_text_shown(&mcp_text(&result)));
    assert_eq!(hits(&server, "/private/frame").await, 2);
    client.cancel().await.unwrap();
}

/// One cache directory, two settings: a browser document rendered without the
/// frame check is never served to a call with `robots_for_frames` on (which would
/// hand it a frame its settings refuse), nor the reverse; each hits its own entry.
#[tokio::test]
async fn the_cache_keeps_documents_rendered_with_and_without_the_check_apart() {
    let Some(chromium) = chromium() else { return };
    let _turn = browser_turn(&SERIAL).await;
    let server = MockServer::start().await;
    let gate = Gate::start().await;
    serve_framed_page(&server, &gate).await;
    let cache = tempfile::tempdir().unwrap();
    let tool = |browser: &str| {
        Config::new(&[server.address().port(), gate.port()])
            .cache(cache.path())
            .section(&browser_section(&chromium, browser))
            .tool()
    };
    let (srd, agent) = (tool(""), tool("robots_for_frames = true\n"));
    let args = json!({ "url": site(&server, "/page"), "force_browser": true });
    let fetch = |tool: &webfetch::WebFetchTool| {
        let (tool, args) = (tool.clone(), args.clone());
        async move {
            let json = tool
                .call(&args, usize::MAX)
                .await
                .map(|built| built.json)
                .unwrap_or_else(|e| panic!("{}", e.to_json()));
            serde_json::from_str::<Value>(&json).unwrap()
        }
    };

    let first = fetch(&srd).await;
    assert!(frame_text_shown(&first));
    assert_eq!(first["notes"], json!([]));
    let checked = fetch(&agent).await;
    assert_eq!(checked["notes"], json!([]), "not the SRD entry: {checked}");
    assert!(!frame_text_shown(&checked));
    assert_eq!(hits(&server, "/private/frame").await, 1);
    for (tool, shown) in [(&srd, true), (&agent, false)] {
        let again = fetch(tool).await;
        assert_eq!(again["notes"], json!(["cache_hit"]), "{again}");
        assert_eq!(frame_text_shown(&again), shown);
    }
    assert_eq!(hits(&server, "/page").await, 2);
    assert_eq!(json_files(cache.path()).len(), 2);
}
