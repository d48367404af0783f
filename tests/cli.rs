//! The CLI contract: one JSON object on stdout; exit 0 success, 2 tool error (envelope
//! on stdout), 1 configuration or usage error (message on stderr, nothing on stdout).

use std::io::Write;
use std::process::{Command, Output};

fn webfetch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

fn stdout_json(output: &Output) -> serde_json::Value {
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(
        text.matches('\n').count(),
        1,
        "exactly one line on stdout: {text:?}"
    );
    serde_json::from_str(text.trim_end()).unwrap()
}

#[test]
fn tool_errors_print_the_envelope_and_exit_2() {
    for (url, code) in [
        ("ftp://example.com/", "invalid_scheme"),
        ("http://0x7f000001/", "invalid_host"),
        ("http://169.254.169.254/latest/meta-data/", "ssrf_blocked"),
        ("http://example.com:8080/", "port_blocked"),
        ("   ", "bad_args"),
    ] {
        let output = webfetch(&["fetch", url]);
        assert_eq!(output.status.code(), Some(2), "{url}");
        let envelope = stdout_json(&output);
        assert_eq!(envelope["code"], code, "{url}");
        assert!(envelope["message"].is_string() && envelope["retryable"].is_boolean());
        assert!(envelope["details"].is_object());
    }
}

#[test]
fn a_rule_breaking_value_is_bad_args_not_a_usage_error() {
    let output = webfetch(&[
        "fetch",
        "https://example.com/",
        "--max-chunk-tokens",
        "5000",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["details"]["field"], "max_chunk_tokens");
}

#[test]
fn usage_errors_exit_1_with_nothing_on_stdout() {
    for args in [
        vec!["fetch"],
        vec![
            "fetch",
            "https://example.com/",
            "--max-chunk-tokens",
            "many",
        ],
        vec!["fetch", "https://example.com/", "--bogus"],
        vec!["frobnicate"],
    ] {
        let output = webfetch(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!output.stderr.is_empty());
    }
}

#[test]
fn config_errors_exit_1_with_the_srd_message_on_stderr() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(file, "[tools.webfetch.security]\nblock_private_ips = false").unwrap();
    let output = webfetch(&[
        "fetch",
        "https://example.com/",
        "--config",
        file.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("SSRF protection cannot be disabled without allow_insecure_overrides=true"),
        "{stderr}"
    );
    let missing = webfetch(&[
        "fetch",
        "https://example.com/",
        "--config",
        "/nonexistent/webfetch.toml",
    ]);
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn pretty_output_keeps_field_order() {
    let output = webfetch(&["fetch", "gopher://x/", "--pretty"]);
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stdout).unwrap();
    let code = text.find("\"code\"").unwrap();
    let message = text.find("\"message\"").unwrap();
    let details = text.find("\"details\"").unwrap();
    assert!(code < message && message < details, "{text}");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["details"]["scheme"], "gopher");
}
