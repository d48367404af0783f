//! The inner stages this crate's own integration tests, benches, examples and fuzz
//! targets drive directly (feature `internals`, which they enable through the
//! dev-dependency). Not an API: nothing here is covered by semver, and an
//! embedder's build has none of it.
//!
//! Each item below is `pub(crate)` where it is declared and becomes `pub` only
//! under the feature (`#[cfg_attr(feature = "internals", visibility::make(pub))]`
//! at the declaration), so the list is the whole of what tests reach past the API.
//! The modules mirror the crate's own paths. Test doubles live in [`crate::testing`].

/// The call's time budget (FR-WF-07d).
pub mod budget {
    pub use crate::budget::Budget;
}

/// The response cache (extension).
pub mod cache {
    pub use crate::cache::{CacheKey, CacheWriteError, CachedDocument, DiskCache, Fresh, Variant};
}

/// The chunker (FR-WF-15).
pub mod chunk {
    pub use crate::chunk::{
        Block, BlockKind, MAX_HEADING_BYTES, SourcedChunk, blocks, chunk, heading_text,
    };
}

/// Content handling past the transport: charsets, media types and the extension formats.
pub mod content {
    /// Charset decoding (FR-WF-10c).
    pub mod charset {
        pub use crate::content::charset::{Charset, Decoded, decode};
    }
    /// JSON bodies (extension).
    pub mod json {
        pub use crate::content::json::{MAX_INDENT_LEVELS, Pretty, SyntaxError, pretty};
    }
    /// Publisher Markdown (extension).
    pub mod markdown {
        pub use crate::content::markdown::{Sanitized, sanitize};
    }
    /// Media types (FR-WF-10g).
    pub mod media_type {
        pub use crate::content::media_type::{MediaKind, select};
    }
    /// The PDF reader (extension).
    pub mod pdf {
        pub use crate::content::pdf::{Limits, PdfRead, read};
    }
}

/// HTML extraction (FR-WF-12).
pub mod extract {
    pub use crate::extract::{Extraction, extract_html, extract_plain, normalize_whitespace};

    /// The HTML parser.
    pub mod dom {
        pub use crate::extract::dom::{
            Document, Node, Scripting, outlines_of_both_tokenizers, parse,
        };
    }
    /// The HTML-to-Markdown converter.
    pub mod markdown {
        pub use crate::extract::markdown::convert;
    }
    /// Content-root selection.
    pub mod root {
        pub use crate::extract::root::{Survey, select_root, survey};
    }
    /// `auto` extraction (extension).
    pub mod auto {
        pub use crate::extract::auto::{block_rows, extract_as};

        /// The page-type classifier.
        pub mod classify {
            pub use crate::extract::auto::classify::describe;
        }
    }
}

/// The response builder and fitter (FR-WF-14, FR-WF-16).
pub mod output {
    pub use crate::output::{BuildOptions, ResponseMeta, build};
}

/// A decoded page and its reading (extension).
pub mod page {
    pub use crate::page::{DecodedPage, Reading};
}

/// The robots.txt pass of a call (FR-WF-08).
pub mod pass {
    pub use crate::pass::Pass;
}

/// Fetching a document over HTTP or Chromium (FR-WF-09, FR-WF-11).
pub mod render {
    pub use crate::render::{FetchedDocument, fetch_document};

    /// The Chromium renderer.
    pub mod browser {
        pub use crate::render::browser::standby::Standby;
        pub use crate::render::browser::{BrowserPage, RenderContext, render};
    }
    /// Bot walls and pay per crawl, told from a response (extension).
    pub mod wall {
        pub use crate::render::wall::{HEAD_BYTES, Vendor, Wall, detect};
    }
    /// Choosing the renderer, and the HTTP fallback (FR-WF-11).
    pub mod select {
        pub use crate::render::select::{RenderPlan, extracted_chars, plan, should_fall_back};
    }
}

/// robots.txt (FR-WF-08).
pub mod robots {
    pub use crate::robots::RobotsChecker;
    pub use crate::robots::cache::RobotsCache;
    pub use crate::robots::checker::{RobotsRequest, RobotsSource};
    pub use crate::robots::http_source::RobotsHopCheck;
    pub use crate::robots::matcher::{MAX_RULES_PER_FILE, Rules};
    pub use crate::robots::parse::{Group, RobotsTxt};
    pub use crate::robots::path::normalize_path;
    pub use crate::robots::policy::{CROSS_ORIGIN_REDIRECT, FetchOutcome};
}

/// The HTTP server's query-string arguments (`GET /v1/fetch`).
pub mod serve {
    pub use crate::serve::http_api::args_from_query;
}

/// The SSRF policy (FR-WF-05).
pub mod ssrf {
    pub use crate::ssrf::{authorize, sort_addresses};
}

/// The HTTP client (FR-WF-09, FR-WF-10).
pub mod transport {
    pub use crate::transport::{GetOptions, HopHook, HttpClient, HttpResponse, OverLimit};
}

/// The extracted document every stage passes on.
pub mod vocabulary {
    pub use crate::vocabulary::ExtractedDocument;
}
