//! `[tools.webfetch.content]`: the extension formats and their limits.
//!
//! `formats` is an extension key with an agent default ([`Contract`]): unset, it is
//! `[]` under the SRD contract (every content type answers as FR-WF-10f/10g and
//! ERR-CT-01 say) and all four formats under the agent contract; a list the file
//! sets means the same under both.

use serde::Deserialize;

use super::{ConfigError, Contract, clamp};
use crate::vocabulary::{Format, Formats};

/// `[tools.webfetch.content]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawContent {
    pub formats: Option<Vec<String>>,
    pub max_pdf_bytes: Option<u64>,
    pub max_pdf_pages: Option<u32>,
}

/// Default of `max_pdf_bytes`: a PDF's own size cap, separate from
/// `max_download_bytes`.
pub(crate) const DEFAULT_MAX_PDF_BYTES: u64 = 32 << 20;

/// Default of `max_pdf_pages`: pages read from one PDF.
pub(crate) const DEFAULT_MAX_PDF_PAGES: u32 = 1000;

/// `[tools.webfetch.content]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContentSettings {
    /// The formats read beyond HTML and plain text.
    pub formats: Formats,
    /// Cap on the decompressed bytes of a response whose `Content-Type` is a
    /// PDF, 1 MiB..=256 MiB, default 32 MiB; other responses keep
    /// `max_download_bytes`.
    pub max_pdf_bytes: u64,
    /// Pages read from one PDF, 1..=10,000, default 1,000; the rest is left out
    /// with the note `pdf_page_limit`.
    pub max_pdf_pages: u32,
}

impl Default for ContentSettings {
    /// The SRD contract's: no extension format.
    fn default() -> Self {
        ContentSettings {
            formats: Formats::NONE,
            max_pdf_bytes: DEFAULT_MAX_PDF_BYTES,
            max_pdf_pages: DEFAULT_MAX_PDF_PAGES,
        }
    }
}

/// Resolves the table for `contract`; an unknown format name stops start-up.
pub(super) fn resolve_content(
    raw: RawContent,
    contract: Contract,
    w: &mut Vec<String>,
) -> Result<ContentSettings, ConfigError> {
    let set = match raw.formats {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|name| name.parse::<Format>())
                .collect::<Result<Formats, _>>()
                .map_err(|e| ConfigError::new(format!("tools.webfetch.content.formats: {e}")))?,
        ),
    };
    Ok(ContentSettings {
        formats: contract.pick(set, Formats::NONE, Formats::ALL),
        max_pdf_bytes: clamp(
            "max_pdf_bytes",
            raw.max_pdf_bytes,
            DEFAULT_MAX_PDF_BYTES,
            1 << 20,
            256 << 20,
            w,
        ),
        max_pdf_pages: clamp(
            "max_pdf_pages",
            raw.max_pdf_pages,
            DEFAULT_MAX_PDF_PAGES,
            1,
            10_000,
            w,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Contract, LoadOptions, load_str};
    use super::*;

    fn formats(toml: &str, contract: Contract) -> Formats {
        load_str(
            toml,
            LoadOptions {
                contract,
                ..Default::default()
            },
        )
        .unwrap()
        .settings
        .content
        .formats
    }

    #[test]
    fn formats_default_by_contract_and_an_explicit_list_wins() {
        let unset = "";
        let table_without = "[tools.webfetch.content]\nmax_pdf_pages = 10\n";
        let empty = "[tools.webfetch.content]\nformats = []\n";
        let pdf = "[tools.webfetch.content]\nformats = [\"pdf\"]\n";
        let cases = [
            (unset, Contract::Srd, Formats::NONE),
            (table_without, Contract::Srd, Formats::NONE),
            (empty, Contract::Srd, Formats::NONE),
            (pdf, Contract::Srd, Formats::NONE.with(Format::Pdf)),
            (unset, Contract::Agent, Formats::ALL),
            (table_without, Contract::Agent, Formats::ALL),
            (empty, Contract::Agent, Formats::NONE),
            (pdf, Contract::Agent, Formats::NONE.with(Format::Pdf)),
        ];
        for (toml, contract, expected) in cases {
            assert_eq!(formats(toml, contract), expected, "{toml:?} {contract:?}");
        }
    }

    #[test]
    fn unknown_format_is_a_config_error_and_limits_clamp() {
        let error = load_str(
            "[tools.webfetch.content]\nformats = [\"docx\"]\n",
            LoadOptions::default(),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("unknown format \"docx\""),
            "{error}"
        );
        let loaded = load_str(
            "[tools.webfetch.content]\nmax_pdf_bytes = 1\nmax_pdf_pages = 0\n",
            LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(loaded.settings.content.max_pdf_bytes, 1 << 20);
        assert_eq!(loaded.settings.content.max_pdf_pages, 1);
        assert_eq!(loaded.warnings.len(), 2);
    }
}
