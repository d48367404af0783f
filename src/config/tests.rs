//! The configuration's unit tests.

use super::*;

fn robots_for_frames(toml: &str, contract: Contract) -> bool {
    load_str(
        toml,
        LoadOptions {
            contract,
            env: Some(&|_| None),
        },
    )
    .unwrap()
    .settings
    .browser
    .robots_for_frames
}

#[test]
fn robots_for_frames_defaults_by_contract_and_an_explicit_value_wins() {
    let unset = "[tools.webfetch]\n";
    let table_without = "[tools.webfetch.browser]\nenabled = true\n";
    let on = "[tools.webfetch.browser]\nrobots_for_frames = true\n";
    let off = "[tools.webfetch.browser]\nrobots_for_frames = false\n";
    for (toml, contract, expected) in [
        // The SRD contract: ROBOTS-SCOPE-01 as written unless the file asks.
        (unset, Contract::Srd, false),
        (table_without, Contract::Srd, false),
        (on, Contract::Srd, true),
        (off, Contract::Srd, false),
        // The agent contract: on unless the file says otherwise.
        (unset, Contract::Agent, true),
        (table_without, Contract::Agent, true),
        (on, Contract::Agent, true),
        (off, Contract::Agent, false),
    ] {
        assert_eq!(
            robots_for_frames(toml, contract),
            expected,
            "{contract:?}: {toml}"
        );
    }
}

#[test]
fn extraction_mode_defaults_by_contract_and_an_explicit_value_wins() {
    let mode = |toml: &str, contract| {
        load_str(
            toml,
            LoadOptions {
                contract,
                env: Some(&|_| None),
            },
        )
        .unwrap()
        .settings
        .extraction
        .mode
    };
    let unset = "[tools.webfetch]\n";
    let table_without = "[tools.webfetch.extraction]\n";
    for (toml, contract, expected) in [
        (unset, Contract::Srd, ExtractionMode::Srd),
        (table_without, Contract::Srd, ExtractionMode::Srd),
        (unset, Contract::Agent, ExtractionMode::Auto),
        (table_without, Contract::Agent, ExtractionMode::Auto),
    ] {
        assert_eq!(mode(toml, contract), expected, "{contract:?}: {toml}");
    }
    for set in ["srd", "article", "auto"] {
        let toml = format!("[tools.webfetch.extraction]\nmode = \"{set}\"\n");
        for contract in [Contract::Srd, Contract::Agent] {
            assert_eq!(mode(&toml, contract).as_str(), set, "{contract:?}");
        }
    }
    assert_eq!(Settings::default().extraction.mode, ExtractionMode::Srd);
}

#[test]
fn the_library_defaults_are_the_srd_contract() {
    assert_eq!(Contract::default(), Contract::Srd);
    assert!(!Settings::default().browser.robots_for_frames);
    assert!(!BrowserSettings::default().robots_for_frames);
    assert!(
        !load_str("", LoadOptions::default())
            .unwrap()
            .settings
            .browser
            .robots_for_frames
    );
    assert!(
        load_str(
            "",
            LoadOptions {
                contract: Contract::Agent,
                ..Default::default()
            }
        )
        .unwrap()
        .settings
        .browser
        .robots_for_frames
    );
}

#[test]
fn the_contract_changes_nothing_but_unset_extension_keys() {
    let toml = "[tools.webfetch]\ntimeout_seconds = 7\n[tools.webfetch.browser]\nrobots_for_frames = false\n\
                [tools.webfetch.content]\nformats = []\n[tools.webfetch.extraction]\nmode = \"srd\"\n\
                [tools.webfetch.http]\ndetect_walls = false\n";
    let srd = load_str(
        toml,
        LoadOptions {
            env: Some(&|_| None),
            ..Default::default()
        },
    )
    .unwrap();
    let agent = load_str(
        toml,
        LoadOptions {
            contract: Contract::Agent,
            env: Some(&|_| None),
        },
    )
    .unwrap();
    assert_eq!(srd.settings, agent.settings);
}

#[test]
fn contract_pick_prefers_the_file() {
    assert_eq!(Contract::Srd.pick(None, 1, 2), 1);
    assert_eq!(Contract::Agent.pick(None, 1, 2), 2);
    assert_eq!(Contract::Srd.pick(Some(3), 1, 2), 3);
    assert_eq!(Contract::Agent.pick(Some(3), 1, 2), 3);
}
