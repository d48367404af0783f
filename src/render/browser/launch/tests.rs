//! Launch's unit tests: arguments, the DevTools line, the sandbox message, version floors.

use super::*;

#[test]
fn devtools_url_is_taken_from_the_announcement_only() {
    let line = "DevTools listening on ws://127.0.0.1:41231/devtools/browser/3f0e-42";
    assert_eq!(
        devtools_url(line),
        Some("ws://127.0.0.1:41231/devtools/browser/3f0e-42")
    );
    assert_eq!(devtools_url("[1:2:ERROR:bus.cc] Failed to connect"), None);
    // A page can not print this, but a non-loopback endpoint is never used.
    assert_eq!(
        devtools_url("DevTools listening on ws://10.0.0.1:1/devtools/browser/x"),
        None
    );
}

#[test]
fn fr_wf_11a_missing_or_non_executable_path_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = resolve_executable(Some(&missing), None).unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::BrowserUnavailable);
    assert_eq!(
        err.details_json()["chromium_path"],
        missing.display().to_string()
    );
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"not a program").unwrap();
    assert!(resolve_executable(Some(&plain), None).is_err());
    let err = resolve_executable(None, Some(dir.path().as_os_str().to_owned())).unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::BrowserUnavailable);
}

#[cfg(unix)]
#[test]
fn fr_wf_11_path_search_finds_the_first_candidate() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("chromium-browser");
    std::fs::write(&exe, b"\x7fELF").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
    assert_eq!(resolve_executable(None, Some(path)).unwrap(), exe);
}

#[test]
fn flags_fail_closed_and_isolate() {
    let args = chromium_args(Path::new("/tmp/p/data"), "forge-webfetch/1.0", 4567, false);
    for expected in [
        "--proxy-server=http://127.0.0.1:4567",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--user-data-dir=/tmp/p/data",
        "--user-agent=forge-webfetch/1.0",
        "--disable-site-isolation-trials",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-gpu",
        "--headless",
    ] {
        assert!(args.iter().any(|a| a == expected), "{expected} missing");
    }
    let features = args
        .iter()
        .find(|a| a.starts_with("--disable-features="))
        .unwrap();
    for feature in ["IsolateOrigins", "site-per-process", "HttpsUpgrades"] {
        assert!(
            features.split([',', '=']).any(|f| f == feature),
            "{feature}"
        );
    }
    // Exactly one --disable-features: Chromium keeps only the last one.
    assert_eq!(
        args.iter()
            .filter(|a| a.starts_with("--disable-features"))
            .count(),
        1
    );
    // The sandbox is on unless `allow_no_sandbox` asks otherwise.
    assert!(!args.iter().any(|a| a.contains("sandbox")), "{args:?}");
    assert!(chromium_args(Path::new("/p"), "ua", 1, true).contains(&"--no-sandbox".to_owned()));
}

#[test]
fn fr_wf_11_chromium_major_version_is_parsed_from_the_product() {
    assert_eq!(chromium_major("HeadlessChrome/131.0.6778.85"), Some(131));
    assert_eq!(chromium_major("Chrome/99.0.4844.51"), Some(99));
    assert_eq!(chromium_major(" HeadlessChrome/100.0.4896.0 "), Some(100));
    assert_eq!(chromium_major("Chrome/1000"), Some(1000));
    for bad in [
        "",
        "HeadlessChrome",
        "Chrome/",
        "Chrome/.1",
        "Chrome/x1.0",
        "Chrome/+1.0",
    ] {
        assert_eq!(chromium_major(bad), None, "{bad}");
    }
    assert!(chromium_major("Chrome/99.0.4844.51").unwrap() < MIN_CHROMIUM_MAJOR);
}

#[test]
fn sandbox_failures_are_recognised() {
    assert!(sandbox_failed(
        "[1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! If you are running \
         on Ubuntu 23.10+ ..."
    ));
    assert!(sandbox_failed(
        "[2:2:FATAL:credentials.cc(127)] Check failed: . : Failed to move to new namespace: \
         PID namespaces supported, Network namespace supported, but failed: errno = \
         Operation not permitted"
    ));
    assert!(!sandbox_failed(
        "[3:3:ERROR:dbus/bus.cc:405] Failed to connect to the bus: No such file or directory"
    ));
    let message = sandbox_message("No usable sandbox!");
    assert!(message.contains("allow_no_sandbox = true"), "{message}");
    assert!(message.contains("max_user_namespaces"), "{message}");
}

#[cfg(unix)]
#[test]
fn profile_must_be_reachable_by_the_unprivileged_user() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let inner = root.path().join("profile");
    std::fs::create_dir(&inner).unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // Owned by us, 0700: another uid cannot pass through.
    assert!(!reachable_by(&inner, UNPRIVILEGED_ID));
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    assert!(reachable_by(&inner, UNPRIVILEGED_ID));
}
