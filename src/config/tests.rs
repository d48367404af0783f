//! The configuration's unit tests.

use super::*;

fn robots_for_frames(toml: &str, profile: Profile) -> bool {
    load_str(
        toml,
        LoadOptions {
            profile,
            env: Some(&|_| None),
        },
    )
    .unwrap()
    .settings
    .browser
    .robots_for_frames
}

#[test]
fn robots_for_frames_defaults_by_profile_and_an_explicit_value_wins() {
    let unset = "[tools.webfetch]\n";
    let table_without = "[tools.webfetch.browser]\nenabled = true\n";
    let on = "[tools.webfetch.browser]\nrobots_for_frames = true\n";
    let off = "[tools.webfetch.browser]\nrobots_for_frames = false\n";
    for (toml, profile, expected) in [
        // The SRD profile: ROBOTS-SCOPE-01 as written unless the file asks.
        (unset, Profile::Srd, false),
        (table_without, Profile::Srd, false),
        (on, Profile::Srd, true),
        (off, Profile::Srd, false),
        // The agent profile: on unless the file says otherwise.
        (unset, Profile::Agent, true),
        (table_without, Profile::Agent, true),
        (on, Profile::Agent, true),
        (off, Profile::Agent, false),
    ] {
        assert_eq!(
            robots_for_frames(toml, profile),
            expected,
            "{profile:?}: {toml}"
        );
    }
}

#[test]
fn extraction_mode_defaults_by_profile_and_an_explicit_value_wins() {
    let mode = |toml: &str, profile| {
        load_str(
            toml,
            LoadOptions {
                profile,
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
    for (toml, profile, expected) in [
        (unset, Profile::Srd, ExtractionMode::Srd),
        (table_without, Profile::Srd, ExtractionMode::Srd),
        (unset, Profile::Agent, ExtractionMode::Auto),
        (table_without, Profile::Agent, ExtractionMode::Auto),
    ] {
        assert_eq!(mode(toml, profile), expected, "{profile:?}: {toml}");
    }
    for set in ["srd", "article", "auto"] {
        let toml = format!("[tools.webfetch.extraction]\nmode = \"{set}\"\n");
        for profile in [Profile::Srd, Profile::Extended, Profile::Agent] {
            assert_eq!(mode(&toml, profile).as_str(), set, "{profile:?}");
        }
    }
    assert_eq!(Settings::default().extraction.mode, ExtractionMode::Srd);
}

#[test]
fn the_library_defaults_are_the_srd_profile() {
    assert_eq!(Profile::default(), Profile::Srd);
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
                profile: Profile::Agent,
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
fn the_profile_changes_nothing_but_unset_extension_keys() {
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
            profile: Profile::Agent,
            env: Some(&|_| None),
        },
    )
    .unwrap();
    assert_eq!(srd.settings, agent.settings);
}
