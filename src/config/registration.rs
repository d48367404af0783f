//! How a host registers and runs `web_fetch` (SRD 5.2): the registration rule
//! and the refusal of a configuration that would never fetch.

use super::{ConfigError, Loaded, ToolsMode};

/// How a host registers `web_fetch` (5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// Registered and executable.
    Registered,
    /// `parse_only`: never executes; advertised only when listed in
    /// `[[tools.definitions]]` (FR-WF-CFG-PREC-03).
    ParseOnly {
        /// Whether the definition is advertised to the model.
        advertised: bool,
    },
    /// Not registered.
    NotRegistered,
}

impl Loaded {
    /// The registration rule of 5.2 (FR-WF-CFG-PREC-01..03). `enabled` defaults to
    /// false, as in the SRD.
    pub fn registration(&self) -> Registration {
        match self.mode {
            ToolsMode::Disabled => Registration::NotRegistered,
            ToolsMode::ParseOnly => Registration::ParseOnly {
                advertised: self.defined_for_parse_only,
            },
            ToolsMode::Enabled if self.settings.enabled == Some(true) => Registration::Registered,
            ToolsMode::Enabled => Registration::NotRegistered,
        }
    }

    /// `requires_approval()` per FR-WF-OP-02 (see [`Settings::requires_approval`](super::Settings::requires_approval)).
    pub fn requires_approval(&self) -> bool {
        self.settings.requires_approval()
    }

    /// The configuration, unless it stops `web_fetch` from executing: a front door
    /// that exists only to run the tool (the CLI, the MCP server, the Python
    /// package) refuses `tools.mode = "disabled"` or `"parse_only"` and an explicit
    /// `enabled = false` rather than start a fetcher that never fetches. An absent
    /// `enabled` is accepted there: running the tool is the front door's request.
    pub fn runnable(self) -> Result<Loaded, ConfigError> {
        match (self.mode, self.settings.enabled) {
            (ToolsMode::Disabled, _) => Err(ConfigError::new(
                "tools.mode = \"disabled\" disables web_fetch",
            )),
            (ToolsMode::ParseOnly, _) => Err(ConfigError::new(
                "tools.mode = \"parse_only\": web_fetch does not execute",
            )),
            (ToolsMode::Enabled, Some(false)) => {
                Err(ConfigError::new("tools.webfetch.enabled = false"))
            }
            _ => Ok(self),
        }
    }
}
