//! The content formats read beyond the SRD's HTML and plain text: PDF,
//! publisher Markdown, JSON and feeds, each opt-in through
//! `[tools.webfetch.content] formats`.
//!
//! With no format enabled every response is the SRD's (FR-WF-10f, 10g,
//! ERR-CT-01): the set only widens which media types the content stage accepts
//! and, for Markdown, what a document request asks for.

use std::fmt;
use std::str::FromStr;

/// One extension format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Format {
    /// `application/pdf` (and `%PDF-` when sniffing): the text layer as Markdown.
    Pdf,
    /// `text/markdown`: the publisher's own Markdown, asked for first in `Accept`.
    Markdown,
    /// `application/json` and `+json` types: pretty-printed in a fence.
    Json,
    /// RSS 2.0 and Atom: the feed's title and entries as a Markdown list.
    Feed,
}

impl Format {
    /// Every format, in canonical order (the config's spelling order).
    pub const ALL: [Format; 4] = [Format::Pdf, Format::Markdown, Format::Json, Format::Feed];

    /// The config spelling: `pdf`, `markdown`, `json`, `feed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Pdf => "pdf",
            Format::Markdown => "markdown",
            Format::Json => "json",
            Format::Feed => "feed",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format \"{0}\"; expected one of \"pdf\", \"markdown\", \"json\", \"feed\"")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(text: &str) -> Result<Format, UnknownFormat> {
        Format::ALL
            .into_iter()
            .find(|format| format.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownFormat(text.to_owned()))
    }
}

/// A set of [`Format`]s. Empty is the SRD contract.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Formats(u8);

impl Formats {
    /// No extension format: the SRD's content types only.
    pub const NONE: Formats = Formats(0);
    /// All four formats: the agent contract's default.
    pub const ALL: Formats = Formats(0b1111);

    /// Whether `format` is in the set.
    pub fn contains(self, format: Format) -> bool {
        self.0 & format.bit() != 0
    }

    /// The set with `format` added.
    pub fn with(self, format: Format) -> Formats {
        Formats(self.0 | format.bit())
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The formats in canonical order.
    pub fn iter(self) -> impl Iterator<Item = Format> {
        Format::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

impl FromIterator<Format> for Formats {
    fn from_iter<I: IntoIterator<Item = Format>>(iter: I) -> Formats {
        iter.into_iter().fold(Formats::NONE, Formats::with)
    }
}

impl fmt::Display for Formats {
    /// The canonical comma-separated list (`pdf,markdown`), empty for none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Format::as_str).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sets_list_in_canonical_order() {
        for format in Format::ALL {
            assert_eq!(format.as_str().parse::<Format>().unwrap(), format);
        }
        assert_eq!(" PDF ".parse::<Format>().unwrap(), Format::Pdf);
        assert!("html".parse::<Format>().is_err());
        let set: Formats = [Format::Feed, Format::Pdf].into_iter().collect();
        assert_eq!(set.to_string(), "pdf,feed");
        assert!(set.contains(Format::Feed) && !set.contains(Format::Json));
        assert_eq!(Formats::ALL.to_string(), "pdf,markdown,json,feed");
        assert!(Formats::NONE.is_empty() && Formats::NONE.to_string().is_empty());
    }
}
