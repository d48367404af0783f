//! The front-door profile: the one switch a front door sets, which decides the
//! arguments its tool accepts and the default of each extension key.

/// Who a tool answers for (docs/configuration.md, "Two contracts"). It decides
/// the two things front doors differ in, and nothing else: the arguments
/// accepted (FR-WF-02 exactly, or with our extension properties) and the value
/// of an extension key the configuration leaves unset (the SRD's answer, or what
/// serves a model best). A key set in the file means the same under every
/// profile, and no SRD key depends on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Profile {
    /// The SRD exactly: FR-WF-02's arguments (`additionalProperties: false`)
    /// and the SRD's answers byte for byte. The library's default and the
    /// `ToolExecutor` seam a host embeds.
    #[default]
    Srd,
    /// The SRD's answers, with our extension properties accepted as arguments
    /// (`extraction`, ...): `webfetch fetch`, `webfetch extract` and the Python
    /// package.
    Extended,
    /// What serves a model best: the extension properties, and the agent
    /// default of each extension key: `webfetch mcp` and `webfetch serve`.
    Agent,
}

impl Profile {
    /// An extension key's value: the file's when it sets one, else this
    /// profile's default (`srd`, or `agent` for [`Profile::Agent`]).
    pub fn pick<T>(self, set: Option<T>, srd: T, agent: T) -> T {
        set.unwrap_or(match self {
            Profile::Srd | Profile::Extended => srd,
            Profile::Agent => agent,
        })
    }

    /// Whether our extension properties are accepted as arguments.
    pub fn accepts_extensions(self) -> bool {
        self != Profile::Srd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_agent_profile_takes_the_agent_defaults_and_only_srd_refuses_extensions() {
        assert_eq!(Profile::default(), Profile::Srd);
        assert_eq!(Profile::Srd.pick(None, 1, 2), 1);
        assert_eq!(Profile::Extended.pick(None, 1, 2), 1);
        assert_eq!(Profile::Agent.pick(None, 1, 2), 2);
        for profile in [Profile::Srd, Profile::Extended, Profile::Agent] {
            assert_eq!(profile.pick(Some(3), 1, 2), 3, "{profile:?}");
        }
        assert!(!Profile::Srd.accepts_extensions());
        assert!(Profile::Extended.accepts_extensions());
        assert!(Profile::Agent.accepts_extensions());
    }
}
