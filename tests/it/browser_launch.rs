//! How Chromium is launched: its sandbox stays on, also when this
//! process is root (Chromium then runs as `nobody`), `--no-sandbox` only by
//! `allow_no_sandbox = true` with a warning, and the Chromium under test passes
//! FR-WF-11 step 3's minimum version. Real Chromium only: skipped unless
//! `FORGE_TEST_CHROMIUM_PATH` names one (T-WF-BR-ENV-01). The sandbox is proven
//! from `/proc`: while a render runs, every renderer of its browser has seccomp-BPF
//! on (`Seccomp: 2`), `NoNewPrivs`, user and network namespaces of its own, and
//! (run as root) no root ids and no groups.

#![cfg(target_os = "linux")]

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::time::Instant;
use tracing::instrument::WithSubscriber as _;
use webfetch::CanonicalUrl;
use webfetch::Settings;
use webfetch::internals::render::browser::{BrowserPage, RenderContext, render};
use webfetch::internals::transport::HttpClient;
use webfetch::testing::StubValidator;
use webfetch::{ErrorCode, FetchError};
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{
    BrowserTurn, Config, LogBuffer, browser_section, browser_turn, chromium,
    chromium_without_sandbox, html, live_processes_naming, serve, toml_string,
};

/// The uid and gid Chromium runs as when the tests run as root.
const NOBODY: u32 = 65534;

/// One browser at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn settings(chromium: &str, port: u16, browser: &str) -> Settings {
    Config::new(&[port])
        .timeout(15)
        .section(&browser_section(chromium, browser))
        .settings()
}

fn client(settings: Settings) -> HttpClient {
    let settings = Arc::new(settings);
    let ip = "127.0.0.1".parse::<IpAddr>().unwrap();
    let validator = Arc::new(StubValidator::new(&settings.security).with_host("page.test", &[ip]));
    HttpClient::new(settings, validator)
}

/// A profile root `nobody` can pass through (0711), RAM-backed where possible.
fn profile_root(mode: u32) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let root = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    root
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// What `/proc` says about one Chromium renderer.
#[derive(Debug)]
struct Renderer {
    pid: String,
    status: String,
    user_ns: String,
    net_ns: String,
}

impl Renderer {
    fn field(&self, name: &str) -> &str {
        self.status
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name}:")))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {name} in /proc/{}/status", self.pid))
    }
}

/// The live renderer processes whose command line names `root`.
fn renderers_under(root: &Path) -> Vec<Renderer> {
    let needle = root.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        // Zygote-forked processes rewrite their title: arguments joined by spaces.
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let renderer = cmdline.split(' ').any(|arg| arg == "--type=renderer");
        if !renderer || !cmdline.contains(&needle) {
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
        let user_ns = std::fs::read_link(format!("/proc/{pid}/ns/user"));
        let net_ns = std::fs::read_link(format!("/proc/{pid}/ns/net"));
        if let (Ok(status), Ok(user_ns), Ok(net_ns)) = (status, user_ns, net_ns) {
            found.push(Renderer {
                pid,
                status,
                user_ns: user_ns.display().to_string(),
                net_ns: net_ns.display().to_string(),
            });
        }
    }
    found
}

/// Renders `/page` of `server` under `settings` with profiles in `root`, and
/// meanwhile samples every renderer under `root` every 20 ms. Returns the result,
/// the last sample of each renderer and the `webfetch` logs.
async fn render_watching(
    settings: Settings,
    server: &MockServer,
    root: &Path,
) -> (Result<BrowserPage, FetchError>, Vec<Renderer>, String) {
    let client = client(settings);
    let url = CanonicalUrl::parse(&format!(
        "http://page.test:{}/page",
        server.address().port()
    ))
    .unwrap();
    let ctx = RenderContext::new(&client, &url, Instant::now() + client.settings().timeout())
        .with_profile_root(root.to_path_buf());
    let buffer = LogBuffer::default();
    let subscriber = buffer.subscriber("webfetch=debug");
    let rendering = render(&ctx).with_subscriber(subscriber);
    tokio::pin!(rendering);
    let mut seen: Vec<Renderer> = Vec::new();
    let result = loop {
        tokio::select! {
            result = &mut rendering => break result,
            () = tokio::time::sleep(Duration::from_millis(20)) => {
                // The latest sample of each renderer counts.
                for renderer in renderers_under(root) {
                    seen.retain(|r| r.pid != renderer.pid);
                    seen.push(renderer);
                }
            }
        }
    };
    let logs = buffer.text();
    (result, seen, logs)
}

/// A page whose script keeps a request open for a while, so the render lasts long
/// enough to be watched.
async fn slow_page() -> MockServer {
    let server = MockServer::start().await;
    serve(
        &server,
        "/page",
        html(
            "<html><body><p>sandboxed</p><script>fetch('/slow').then(r => r.text())\
             .then(t => { const p = document.createElement('p'); p.textContent = t; \
             document.body.append(p); });</script></body></html>",
        ),
    )
    .await;
    serve(
        &server,
        "/slow",
        ResponseTemplate::new(200)
            .set_body_string("slow-done")
            .set_delay(Duration::from_millis(1500)),
    )
    .await;
    server
}

fn namespace_of_self(kind: &str) -> String {
    std::fs::read_link(format!("/proc/self/ns/{kind}"))
        .unwrap()
        .display()
        .to_string()
}

/// The renderers are sandboxed, also when the tests run as root.
#[tokio::test]
async fn renderers_run_in_chromiums_sandbox_as_an_unprivileged_user() {
    let Some(chromium) = chromium() else { return };
    if chromium_without_sandbox() {
        eprintln!(
            "skipped: this machine gives Chromium no sandbox (FORGE_TEST_CHROMIUM_NO_SANDBOX)"
        );
        return;
    }
    let _serial = browser_turn(&SERIAL).await;
    let server = slow_page().await;
    let root = profile_root(0o711);
    let settings = settings(&chromium, server.address().port(), "");
    assert!(!settings.browser.allow_no_sandbox);
    let (result, renderers, logs) = render_watching(settings, &server, root.path()).await;
    let page = result.unwrap_or_else(|e| panic!("render failed: {}\n{logs}", e.to_json()));
    assert!(page.html.contains("slow-done"), "{}", page.html);
    assert!(!logs.contains("browser_no_sandbox"), "{logs}");
    // A renderer freshly forked by the zygote is single-threaded and enters
    // seccomp as it starts up; one that runs a page has threads.
    let running: Vec<&Renderer> = renderers
        .iter()
        .filter(|r| r.field("Threads") != "1")
        .collect();
    assert!(
        !running.is_empty(),
        "no running renderer seen: {renderers:?}"
    );
    let (our_user_ns, our_net_ns) = (namespace_of_self("user"), namespace_of_self("net"));
    for renderer in running {
        // seccomp-BPF (mode 2, "filter") and no way back to privileges.
        assert_eq!(renderer.field("Seccomp"), "2", "{renderer:?}");
        assert_eq!(renderer.field("NoNewPrivs"), "1", "{renderer:?}");
        // The namespace sandbox: a user and a network namespace of its own.
        assert_ne!(renderer.user_ns, our_user_ns, "{renderer:?}");
        assert_ne!(renderer.net_ns, our_net_ns, "{renderer:?}");
        if running_as_root() {
            let ids = format!("{NOBODY}\t{NOBODY}\t{NOBODY}\t{NOBODY}");
            // Seen from our namespace, the renderer's ids are nobody's.
            assert_eq!(renderer.field("Uid"), ids, "{renderer:?}");
            assert_eq!(renderer.field("Gid"), ids, "{renderer:?}");
            assert_eq!(renderer.field("Groups"), "", "{renderer:?}");
        }
    }
    assert!(std::fs::read_dir(root.path()).unwrap().next().is_none());
}

/// FR-WF-11 step 3: the Chromium under test reports a version of 100 or newer and
/// is accepted; the launch logs the version it checked.
#[tokio::test]
async fn fr_wf_11_real_chromium_passes_the_minimum_version() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let server = MockServer::start().await;
    serve(
        &server,
        "/page",
        html("<html><body><p>hello</p></body></html>"),
    )
    .await;
    let root = profile_root(0o711);
    let settings = settings(&chromium, server.address().port(), "");
    let (result, _, logs) = render_watching(settings, &server, root.path()).await;
    let page = result.unwrap_or_else(|e| panic!("render failed: {}\n{logs}", e.to_json()));
    assert!(page.html.contains("hello"));
    let line = logs
        .lines()
        .find(|l| l.contains("browser_launched"))
        .unwrap_or_else(|| panic!("no browser_launched event:\n{logs}"));
    let version = line
        .split_whitespace()
        .find_map(|field| field.strip_prefix("version="))
        .unwrap_or_else(|| panic!("no version in {line}"));
    let major: u32 = version
        .rsplit_once('/')
        .and_then(|(_, v)| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("unparsable version {version}"));
    assert!(major >= 100, "{version}");
    assert!(line.contains("sandbox=true"), "{line}");
}

/// `allow_no_sandbox = true` is the only way to `--no-sandbox`, and it is warned
/// about at each launch. It also shows that the `/proc` probe above tells the two
/// apart: unsandboxed renderers share our user namespace and have no seccomp
/// filter.
#[tokio::test]
async fn allow_no_sandbox_is_explicit_and_warned() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let server = slow_page().await;
    let root = profile_root(0o711);
    let settings = settings(
        &chromium,
        server.address().port(),
        "allow_no_sandbox = true",
    );
    assert!(settings.browser.allow_no_sandbox);
    let (result, renderers, logs) = render_watching(settings, &server, root.path()).await;
    let page = result.unwrap_or_else(|e| panic!("render failed: {}\n{logs}", e.to_json()));
    assert!(page.html.contains("slow-done"));
    let warning = logs
        .lines()
        .find(|l| l.contains("browser_no_sandbox"))
        .unwrap_or_else(|| panic!("no warning:\n{logs}"));
    assert!(warning.contains("WARN"), "{warning}");
    let our_user_ns = namespace_of_self("user");
    let running: Vec<&Renderer> = renderers
        .iter()
        .filter(|r| r.field("Threads") != "1")
        .collect();
    assert!(
        !running.is_empty(),
        "no running renderer seen: {renderers:?}"
    );
    for renderer in running {
        assert_eq!(renderer.field("Seccomp"), "0", "{renderer:?}");
        assert_eq!(renderer.user_ns, our_user_ns, "{renderer:?}");
    }
}

/// Run as root, a profile root `nobody` cannot pass through is refused before
/// Chromium starts, with a message that says why.
#[tokio::test]
async fn unreachable_profile_root_is_browser_unavailable_as_root() {
    let Some(chromium) = chromium() else { return };
    if !running_as_root() {
        eprintln!("skipped: only meaningful as root");
        return;
    }
    let server = MockServer::start().await;
    serve(&server, "/page", html("<html><body><p>x</p></body></html>")).await;
    let root = profile_root(0o700);
    let settings = settings(&chromium, server.address().port(), "");
    let (result, renderers, _) = render_watching(settings, &server, root.path()).await;
    let error = result.expect_err("render must fail");
    assert_eq!(error.code(), ErrorCode::BrowserUnavailable);
    let message = error.details().error().unwrap();
    assert!(message.contains("not reachable by uid 65534"), "{message}");
    assert!(renderers.is_empty());
    assert!(std::fs::read_dir(root.path()).unwrap().next().is_none());
}

/// The key defaults to `false`, is a boolean, and lives in the browser table.
#[test]
fn allow_no_sandbox_is_a_browser_key_defaulting_to_false() {
    assert!(!Config::new(&[80]).settings().browser.allow_no_sandbox);
    let on = Config::new(&[80])
        .section("[tools.webfetch.browser]\nallow_no_sandbox = true")
        .settings();
    assert!(on.browser.allow_no_sandbox);
    let bad = webfetch::load_str(
        "[tools.webfetch.browser]\nallow_no_sandbox = \"yes\"",
        webfetch::LoadOptions::default(),
    );
    assert!(bad.is_err());
}

/// A long-lived host's warm standby. The first render launches
/// cold and parks the next Chromium; the following renders take the parked one,
/// each Chromium serving exactly one call (a fresh profile every time), on a blank
/// page prepared while the host was idle. The same page renders the same way
/// whichever Chromium served it.
#[tokio::test]
async fn a_warm_standby_serves_the_next_render() {
    let Some(chromium) = chromium() else { return };
    let _serial = browser_turn(&SERIAL).await;
    let server = MockServer::start().await;
    serve(
        &server,
        "/page",
        html("<html><body><article><p>Rendered by a parked browser.</p></article></body></html>"),
    )
    .await;
    let settings = Config::new(&[server.address().port()])
        .timeout(15)
        .section(&browser_section(&chromium, ""))
        .settings();
    let validator = Arc::new(StubValidator::new(&settings.security));
    let tool = webfetch::WebFetchTool::builder(settings)
        .ssrf_validator(validator)
        .browser_standby(true)
        .build()
        .unwrap();
    let url = format!("http://127.0.0.1:{}/page", server.address().port());

    let buffer = LogBuffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_env_filter("webfetch::browser=debug")
        .with_writer(move || writer.clone())
        .finish();
    let calls = async {
        let mut texts = Vec::new();
        for _ in 0..3 {
            let args = serde_json::json!({ "url": url, "force_browser": true, "no_cache": true });
            let json = tool
                .call(&args, usize::MAX)
                .await
                .map(|built| built.json)
                .unwrap_or_else(|e| panic!("{}", e.to_json()));
            texts.push(json.contains("Rendered by a parked browser."));
        }
        texts
    };
    let texts = calls.with_subscriber(subscriber).await;
    assert_eq!(texts, [true, true, true]);
    // The host's exit: the parked Chromium (launched after the last render) and
    // its profile are gone when this returns.
    tool.shutdown_browser_standby().await;
    let logs = buffer.text();
    let renders: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["fields"]["event"] == "browser_render")
        .collect();
    let flag = |name: &str| -> Vec<bool> {
        renders
            .iter()
            .map(|line| line["fields"][name].as_bool().unwrap())
            .collect()
    };
    assert_eq!(flag("from_standby"), [false, true, true], "{logs}");
    // The parked Chromium's blank page was prepared while idle, too.
    assert_eq!(flag("page_prepared"), [false, true, true], "{logs}");
}

/// How a test ends the CLI mid-render.
#[derive(Clone, Copy)]
enum Kill {
    /// The signal to the CLI's whole process group (the watchdog has its own).
    Group(Signal),
    /// The signal to the watchdog, then to the CLI, each by pid.
    Both(Signal),
}

impl Kill {
    fn send(self, cli: Pid, watchdog: Pid) {
        match self {
            Kill::Group(signal) => nix::sys::signal::killpg(cli, signal).unwrap(),
            Kill::Both(signal) => {
                for pid in [watchdog, cli] {
                    nix::sys::signal::kill(pid, signal).unwrap();
                }
            }
        }
    }
}

/// BROWSER-ISO-01 step 2 when the host is killed with its whole process group,
/// as Ctrl-C in a terminal, `timeout` or an agent stopping its tool do: the
/// watchdog has a process group of its own, so it outlives the host, then kills
/// Chromium and deletes the profile. (Before, the signal killed the watchdog with
/// the host, and Chromium, in a group of its own, ran on with its profile.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_cli_with_its_process_group_mid_render_leaves_nothing() {
    let Some(killed) = kill_the_cli_mid_render(Kill::Group(Signal::SIGTERM)).await else {
        return;
    };
    // The watchdog works after the host is gone.
    killed.assert_nothing_left().await;
}

/// The same when one signal reaches the host and the watchdog by name, as
/// `pkill -f webfetch` does: the watchdog ignores it and cleans up after the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_the_cli_and_its_watchdog_mid_render_leaves_nothing() {
    let Some(killed) = kill_the_cli_mid_render(Kill::Both(Signal::SIGTERM)).await else {
        return;
    };
    killed.assert_nothing_left().await;
}

/// BROWSER-ISO-01 when nobody is left to clean up: the host and its watchdog both
/// SIGKILLed (`pkill -9 -f webfetch`, a service's cgroup killed). The profile (and
/// Chromium, unless it noticed) outlive them; the next launch in the same profile
/// root finds the profile's owner lock free, kills what still names the profile
/// and deletes it. Without that sweep, every such kill leaked a profile in RAM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_launch_sweeps_what_a_sigkilled_cli_and_watchdog_left() {
    let Some(killed) = kill_the_cli_mid_render(Kill::Both(Signal::SIGKILL)).await else {
        return;
    };
    serve(&killed.server, "/next", html("<p>next</p>")).await;
    let next = killed
        .cli(&format!("{}/next", killed.server.uri()))
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stdout)
    );
    killed.assert_nothing_left().await;
}

/// A CLI render ended from outside: what it left to check.
struct Killed {
    server: MockServer,
    /// The CLI's config (its file lives as long as this).
    config: tempfile::NamedTempFile,
    /// The killed render's profile directory.
    profile: PathBuf,
    /// The user agent on the killed Chromium's command line.
    marker: String,
    _turn: BrowserTurn,
}

impl Killed {
    /// `webfetch fetch --force-browser --no-cache` of `url` under the test's config.
    fn cli(&self, url: &str) -> std::process::Command {
        let mut cli = std::process::Command::new(env!("CARGO_BIN_EXE_webfetch"));
        cli.args(["fetch", "--force-browser", "--no-cache", "--config"])
            .arg(self.config.path())
            .arg(url)
            .stderr(std::process::Stdio::null());
        cli
    }

    /// Waits until no process names the profile or the Chromium's marker and the
    /// profile is gone; fails after a minute.
    async fn assert_nothing_left(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = live_processes_naming(&self.profile);
            let marked = live_processes_naming(Path::new(&self.marker));
            if left.is_empty() && marked.is_empty() && !self.profile.exists() {
                return;
            }
            // The pid and program of each, not Chromium's whole command line.
            let short = |processes: Vec<String>| -> Vec<String> {
                processes
                    .iter()
                    .map(|p| p.chars().take(60).collect())
                    .collect()
            };
            assert!(
                Instant::now() < deadline,
                "left behind after the kill: profile exists {}, processes {:?} {:?}",
                self.profile.exists(),
                short(left),
                short(marked)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Runs `webfetch fetch --force-browser` in a process group of its own on a page
/// that never reaches network idle and ends it with `kill` once Chromium renders.
/// `None` where no Chromium is configured.
async fn kill_the_cli_mid_render(kill: Kill) -> Option<Killed> {
    use std::io::Write as _;
    use std::os::unix::process::CommandExt as _;

    let chromium = chromium()?;
    let turn = browser_turn(&SERIAL).await;
    let server = MockServer::start().await;
    let port = server.address().port();
    // A request that never answers holds network idle open: the render waits.
    serve(
        &server,
        "/",
        html(r#"<p>x</p><script>fetch("/hang")</script>"#),
    )
    .await;
    let (asked, mut hanging) = tokio::sync::mpsc::unbounded_channel::<()>();
    wiremock::Mock::given(wiremock::matchers::path("/hang"))
        .respond_with(move |_: &wiremock::Request| {
            let _ = asked.send(());
            ResponseTemplate::new(200).set_delay(Duration::from_secs(600))
        })
        .mount(&server)
        .await;
    // Chromium's command line carries the user agent: how this test finds it.
    let marker = format!("webfetch-kill-test-{}-{port}", std::process::id());
    let config = Config::new(&[port])
        .timeout(120)
        .top(&format!("user_agent = {}", toml_string(&marker)))
        .section(&browser_section(&chromium, ""));
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(config.toml().as_bytes()).unwrap();
    let mut killed = Killed {
        server,
        config: file,
        profile: PathBuf::new(),
        marker,
        _turn: turn,
    };
    let mut cli = killed.cli(&format!("http://127.0.0.1:{port}/"));
    cli.stdout(std::process::Stdio::null()).process_group(0);
    let mut cli = tokio::process::Command::from(cli).spawn().unwrap();

    // The page's script asked for /hang: Chromium is up and rendering. A CLI
    // that ends first fails the test with its exit status.
    tokio::select! {
        asked = hanging.recv() => asked.expect("the page's server is alive"),
        status = cli.wait() => panic!("the CLI ended before the render reached /hang: {status:?}"),
    }
    killed.profile = live_processes_naming(Path::new(&killed.marker))
        .iter()
        .find_map(|process| {
            let dir = process
                .split(' ')
                .find_map(|arg| arg.strip_prefix("--user-data-dir="))?;
            Path::new(dir).parent().map(Path::to_path_buf)
        })
        .expect("a Chromium with the test's user agent and a --user-data-dir");
    assert!(killed.profile.exists());
    let watchdog = live_processes_naming(&killed.profile)
        .iter()
        .find(|process| process.contains("webfetch-chromium-watchdog"))
        .and_then(|process| process.split(':').next()?.parse::<i32>().ok())
        .expect("the watchdog, naming the profile");

    let cli_pid = Pid::from_raw(i32::try_from(cli.id().expect("still running")).unwrap());
    kill.send(cli_pid, Pid::from_raw(watchdog));
    let status = cli.wait().await.unwrap();
    assert!(!status.success(), "{status:?}");
    Some(killed)
}
