//! robots.txt: the SRD's RFC 9309 variant, its origin cache and fetch policy (SRD 3.3).
//!
//! - [`parse`]: bytes to groups, and the one group that applies to our token.
//! - [`matcher`]: `*`/`$` patterns in linear time and the rule precedence.
//! - [`path`]: the path as a normalizing server routes it, for the opt-in
//!   hardening `normalize_paths`.
//! - [`policy`]: what a retrieval outcome means (rules, fail-open, error), whether it
//!   may be cached, and the robots origin scope for redirects.
//! - [`cache`]: the process-local per-origin LRU with a TTL.
//! - [`checker`]: the gate the pipeline calls for the document URL and every
//!   redirect hop.
//! - [`http_source`]: robots.txt over the shared HTTP client with the robots origin
//!   scope, and the redirect hook that checks each hop of a document fetch.
//! - [`shared`]: the outcomes a fleet shares (`share_robots`), as a trait the
//!   fleet implements.
//!
//! The parser, matcher and policy do no I/O; only the checker awaits a
//! [`checker::RobotsSource`] (the shared HTTP client).
//!
//! # Where this departs from RFC 9309 (and from Google's robotstxt)
//!
//! - **One group, never merged** (FR-WF-ROBOTS-UA-01, 08b). RFC 9309 2.2.1 merges all
//!   groups that match the crawler; we pick the single group whose matching
//!   `User-agent` value is longest (first in file order on a tie), else the first
//!   `User-agent: *` group (ROBOTS-WILDCARD-01), else allow-all.
//! - **Substring user-agent match** (FR-WF-08e): a group matches when one of its
//!   `User-agent` values contains the configured token, ASCII case-insensitively. RFC
//!   9309 compares the crawler's product token with the value instead.
//! - **Inline comments need whitespace** (ROBOTS-PARSE-01, LINE-01): `#` starts a
//!   comment only at the start of a line or after a space or tab; in
//!   `Disallow: /a#b` the `#b` is part of the pattern. RFC 9309 makes every `#` a
//!   comment.
//! - **Rule length counts `*` and `$`** (ROBOTS-RULE-01), measured on the
//!   percent-normalised pattern (so `/%7Ea` and `/~a` are the same rule, RFC 9309
//!   2.2.2's equivalence); RFC 9309 leaves "most octets" to the implementation.
//! - **Failures** (FR-WF-09a, 09c; SRD-READINGS 13): every 4xx is allow-all; 5xx,
//!   other non-200 statuses, timeouts and network failures are "unavailable", which
//!   fails the fetch unless `fail_open`. RFC 9309 2.3.1.4 instead has crawlers assume
//!   complete disallow for unreachable files.
//! - **Undecodable files are allow-all** (FR-WF-09b step 3, ROBOTS-BOM-01): a body
//!   that is not valid UTF-8 (after stripping a UTF-8 BOM and, for a truncated body,
//!   the trailing partial line of ROBOTS-SIZE-02), or that starts with a UTF-16 or
//!   UTF-32 BOM, is allow-all as a whole, even if it holds a readable `Disallow: /`.
//!   RFC 9309 2.2 only asks for UTF-8 and leaves other bytes to the parser; Google's
//!   robotstxt parses such files line by line.
//! - **Normalized paths, opt-in** (an extension): with
//!   `[tools.webfetch.robots] normalize_paths = true`, a path is also refused when
//!   the form a normalizing server routes ([`normalize_path`]: `%2F` decoded,
//!   slashes merged, dot segments removed) is disallowed. Off by default, so the
//!   matching above is RFC 9309's literal one, byte for byte.
//! - **Parsed rules are bounded** (FR-WF-ROBOTS-SIZE-01): at most
//!   [`MAX_RULES_PER_FILE`] rule lines are read, and a cached [`Rules`] set is one
//!   pattern arena plus 12 bytes per distinct rule (see its memory bound).

pub(crate) mod cache;
pub(crate) mod checker;
pub(crate) mod http_source;
pub(crate) mod matcher;
pub(crate) mod parse;
pub(crate) mod path;
pub(crate) mod policy;
pub(crate) mod shared;

#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use checker::RobotsChecker;
