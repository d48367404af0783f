//! robots.txt path patterns and the rule precedence of one group (FR-WF-08c, 08d,
//! ROBOTS-RULE-01, ROBOTS-EMPTY-01).
//!
//! # Complexity
//!
//! A pattern is a sequence of literal pieces separated by `*`, optionally followed by
//! the end anchor `$`. For such `*`-only globs the greedy strategy is exact: anchor
//! the first piece at the start of the path, then place every further piece at its
//! **leftmost** occurrence after the previous one. Leftmost placement leaves the most
//! room for the pieces that follow, so if any placement works the greedy one does
//! (exchange argument). With `$` the last piece is pinned to the end of the path and
//! only has to start at or after the end of the greedy prefix.
//!
//! Each leftmost search is `str::find`, which runs the Two-Way algorithm: linear in
//! the haystack it scans plus the piece's length, with no backtracking. The next
//! search starts where the previous match ended, so the scanned ranges do not
//! overlap and one match costs `O(path + pattern)` overall. `/*a*a*a*a*a*b` against a
//! long run of `a`s is therefore a single pass, not the exponential (or quadratic)
//! blow-up of backtracking matchers and DP tables.
//!
//! Checking a path against a group costs `O(rules × path + total pattern length)`;
//! rules are kept in precedence order so the first match decides and most checks end
//! early.

use super::path::normalize_path;

/// Whether a rule allows or disallows the paths it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RuleKind {
    /// `Allow:`.
    Allow,
    /// `Disallow:`.
    Disallow,
}

/// A compiled `Allow`/`Disallow` value (FR-WF-08d).
///
/// The text is normalised like the canonical URL path it is compared with
/// (FR-WF-ROBOTS-PATH-01, Appendix A): `%xx` of an unreserved character is decoded,
/// other escapes get uppercase hex, and bytes the URL parser would escape (non-ASCII,
/// controls, space, `"`, `<`, `>`) are percent-encoded. A normalised pattern is
/// therefore always ASCII. `*` matches any sequence; `$` anchors the end only as the
/// last character and is a literal elsewhere (RFC 9309 2.2.3).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Pattern {
    text: String,
}

#[cfg(test)]
impl Pattern {
    /// Compiles a raw rule value; `None` for an empty value, which matches nothing
    /// (FR-WF-ROBOTS-EMPTY-01).
    pub(crate) fn new(raw: &[u8]) -> Option<Pattern> {
        if raw.is_empty() {
            return None;
        }
        Some(Pattern {
            text: normalize(raw),
        })
    }

    /// The normalised pattern text, `*` and `$` included.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The precedence length of ROBOTS-RULE-01: every character of the (normalised)
    /// pattern counts, `*` and `$` included.
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the pattern matches `path` (the canonical path plus `?query`) from its
    /// start. Linear time: see the module documentation.
    pub(crate) fn matches(&self, path: &str) -> bool {
        pattern_matches(&self.text, path)
    }
}

/// Whether the normalised pattern `text` matches `path` from its start (see
/// [`Pattern::matches`]).
fn pattern_matches(text: &str, path: &str) -> bool {
    let (body, anchored_end) = match text.strip_suffix('$') {
        Some(body) => (body, true),
        None => (text, false),
    };
    let Some((head, last)) = body.rsplit_once('*') else {
        // No wildcard: a plain prefix, or the whole path with `$`.
        return if anchored_end {
            path == body
        } else {
            path.starts_with(body)
        };
    };
    let mut pieces = head.split('*');
    let first = pieces.next().unwrap_or("");
    if !path.starts_with(first) {
        return false;
    }
    let mut pos = first.len();
    for piece in pieces.filter(|p| !p.is_empty()) {
        match path.get(pos..).and_then(|rest| rest.find(piece)) {
            Some(at) => pos += at + piece.len(),
            None => return false,
        }
    }
    if anchored_end {
        path.len() >= pos + last.len() && path.ends_with(last)
    } else {
        path.get(pos..).is_some_and(|rest| rest.contains(last))
    }
}

/// One `Allow`/`Disallow` line, owned; [`Rules::new`] compiles a list of them into
/// the compact set.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Rule {
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The compiled value.
    pub pattern: Pattern,
}

/// A rule of a [`Rules`] set as stored: its kind and its normalised pattern text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RuleRef<'a> {
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The normalised pattern text, `*` and `$` included.
    pub pattern: &'a str,
}

impl RuleRef<'_> {
    /// Whether the rule's pattern matches `path` (see [`Pattern::matches`]).
    pub(crate) fn matches(&self, path: &str) -> bool {
        pattern_matches(self.pattern, path)
    }
}

/// The most rule lines one robots.txt file contributes (FR-WF-ROBOTS-SIZE-01, the
/// memory side of the size limit; SRD 3.3.3 sets no rule count, so this is our
/// bound). The parser reads a file as if it ended just before its first rule line
/// past this cap: that line and everything after it are ignored, like the bytes past
/// `max_robots_bytes` (FR-WF-ROBOTS-SIZE-01, 02). At the default `max_robots_bytes`
/// of 512 KiB the cap cannot be reached: the shortest rule line, `Allow:a` plus its
/// line break, is 8 bytes, and 524 288 / 8 is exactly this number, with the
/// `User-agent` line still to fit.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) const MAX_RULES_PER_FILE: usize = 65_536;

/// One stored rule: a slice of the arena and its kind (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
    kind: RuleKind,
}

/// The rules that apply to this tool on one origin: the selected group's, in
/// precedence order. Empty means allow-all (404/4xx, empty or malformed file, no
/// matching and no `*` group; FR-WF-09, 09b, 09c).
///
/// # Memory bound
///
/// These sets live in the origin cache (up to `robots_cache_entries` of them for the
/// cache TTL), so they are compact: all pattern texts sit in one `String` arena,
/// each rule is a 12-byte (offset, length, kind) record, identical rules (same kind,
/// same normalised pattern) are stored once, and nothing has spare capacity. The
/// shortest rule line, `Allow:x` and a line break, is 7 bytes plus its pattern, and
/// costs 12 bytes plus its pattern, so [`Rules::heap_bytes`] is at most twice the
/// body for patterns without escapes. Percent-encoding is the one expansion (a byte
/// the URL parser escapes, such as a space or a byte of a non-ASCII character,
/// becomes three), so the general bound is three times the body, with the body
/// itself cut at `max_robots_bytes` and at most [`MAX_RULES_PER_FILE`] rules
/// (FR-WF-ROBOTS-SIZE-01). A 512 KiB file of `Allow: a` lines is one rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Rules {
    /// The normalised pattern texts, back to back, in the order of `rules`.
    arena: String,
    /// Precedence order: longer patterns first, `Allow` before `Disallow` on equal
    /// length, then by text (which cannot change a verdict: equal length and kind
    /// give the same answer).
    rules: Vec<Span>,
}

impl Rules {
    /// Allow everything.
    pub(crate) fn allow_all() -> Rules {
        Rules::default()
    }

    /// The rules of a group, sorted once so that the first match is the winner
    /// (FR-WF-08c, ROBOTS-RULE-01), duplicates dropped.
    #[cfg(test)]
    pub(crate) fn new(rules: Vec<Rule>) -> Rules {
        let mut builder = RulesBuilder::default();
        for rule in &rules {
            builder.push_normalized(rule.kind, rule.pattern.as_str());
        }
        builder.finish()
    }

    /// Whether there is no rule at all (allow-all).
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_allow_all(&self) -> bool {
        self.rules.is_empty()
    }

    /// The number of distinct rules.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules in precedence order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = RuleRef<'_>> {
        self.rules.iter().map(|span| self.rule(*span))
    }

    /// The approximate heap bytes the set holds: the arena and the rule records
    /// (allocator overhead aside). See the memory bound in the type documentation.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.capacity() + self.rules.capacity() * std::mem::size_of::<Span>()
    }

    /// The rule that decides `path` under FR-WF-08c: the longest matching pattern,
    /// `Allow` winning ties; `None` when no rule matches.
    pub(crate) fn decisive_rule(&self, path: &str) -> Option<RuleRef<'_>> {
        self.iter().find(|rule| rule.matches(path))
    }

    /// Whether `path` (canonical path plus `?query`, FR-WF-ROBOTS-PATH-01) may be
    /// fetched. No matching rule means allowed (FR-WF-08c step 4).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_allowed(&self, path: &str) -> bool {
        self.decisive_rule(path)
            .is_none_or(|rule| rule.kind == RuleKind::Allow)
    }

    /// The hardened verdict (`normalize_paths`, an extension): `path`
    /// may be fetched only if both it and the form a normalizing server routes
    /// ([`normalize_path`]) are allowed, each by [`Rules::is_allowed`]'s
    /// longest match.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_allowed_normalized(&self, path: &str) -> bool {
        self.is_allowed(path) && self.is_allowed(&normalize_path(path))
    }

    fn rule(&self, span: Span) -> RuleRef<'_> {
        let start = span.start as usize;
        RuleRef {
            kind: span.kind,
            pattern: self
                .arena
                .get(start..start + span.len as usize)
                .unwrap_or_default(),
        }
    }
}

/// Collects a group's rules in file order, then [`RulesBuilder::finish`] sorts,
/// dedupes and compacts them into [`Rules`].
#[derive(Debug, Default)]
pub(crate) struct RulesBuilder {
    arena: String,
    rules: Vec<Span>,
}

impl RulesBuilder {
    /// Adds a raw rule value; an empty value is no rule (ROBOTS-EMPTY-01). Returns
    /// false, adding nothing, when the arena would outgrow its 32-bit offsets (only
    /// reachable with a `max_robots_bytes` above 1 GiB).
    pub(crate) fn push(&mut self, kind: RuleKind, raw: &[u8]) -> bool {
        if raw.is_empty() {
            return true;
        }
        if self.arena.len().saturating_add(raw.len().saturating_mul(3)) > u32::MAX as usize {
            return false;
        }
        let start = self.arena.len();
        normalize_into(&mut self.arena, raw);
        self.push_span(kind, start);
        true
    }

    #[cfg(test)]
    fn push_normalized(&mut self, kind: RuleKind, text: &str) {
        let start = self.arena.len();
        self.arena.push_str(text);
        self.push_span(kind, start);
    }

    fn push_span(&mut self, kind: RuleKind, start: usize) {
        // Both fit: `push` keeps the arena within u32, `Rules::new` takes patterns
        // that were built the same way.
        let (Ok(offset), Ok(len)) = (
            u32::try_from(start),
            u32::try_from(self.arena.len() - start),
        ) else {
            self.arena.truncate(start);
            return;
        };
        self.rules.push(Span {
            start: offset,
            len,
            kind,
        });
    }

    /// The rules in precedence order, duplicates dropped, arena rebuilt in that
    /// order without spare capacity.
    pub(crate) fn finish(self) -> Rules {
        let text = |span: &Span| {
            let start = span.start as usize;
            self.arena
                .get(start..start + span.len as usize)
                .unwrap_or_default()
        };
        let kind_rank = |kind: RuleKind| match kind {
            RuleKind::Allow => 0u8,
            RuleKind::Disallow => 1,
        };
        let mut order = self.rules.clone();
        order.sort_unstable_by(|a, b| {
            b.len
                .cmp(&a.len)
                .then_with(|| kind_rank(a.kind).cmp(&kind_rank(b.kind)))
                .then_with(|| text(a).cmp(text(b)))
        });
        order.dedup_by(|b, a| a.kind == b.kind && text(a) == text(b));
        let mut arena = String::with_capacity(order.iter().map(|s| s.len as usize).sum());
        let mut rules = Vec::with_capacity(order.len());
        for span in &order {
            let start = arena.len();
            arena.push_str(text(span));
            rules.push(Span {
                // Never larger than the source arena's offsets.
                start: u32::try_from(start).unwrap_or(span.start),
                len: span.len,
                kind: span.kind,
            });
        }
        Rules { arena, rules }
    }
}

/// Normalises a raw pattern to the canonical-URL form (see [`Pattern`]).
#[cfg(test)]
fn normalize(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    normalize_into(&mut out, raw);
    out
}

/// [`normalize`], appending to `out`.
fn normalize_into(out: &mut String, raw: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let push_escape = |out: &mut String, byte: u8| {
        out.push('%');
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 0x0f)] as char);
    };
    let mut i = 0;
    while i < raw.len() {
        let byte = raw[i];
        if byte == b'%'
            && let (Some(hi), Some(lo)) = (
                raw.get(i + 1).and_then(|b| hex_value(*b)),
                raw.get(i + 2).and_then(|b| hex_value(*b)),
            )
        {
            let value = hi << 4 | lo;
            if value.is_ascii_alphanumeric() || matches!(value, b'-' | b'.' | b'_' | b'~') {
                out.push(value as char);
            } else {
                push_escape(out, value);
            }
            i += 3;
            continue;
        }
        if byte >= 0x7f || byte <= b' ' || matches!(byte, b'"' | b'<' | b'>') {
            push_escape(out, byte);
        } else {
            out.push(byte as char);
        }
        i += 1;
    }
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> Pattern {
        Pattern::new(text.as_bytes()).expect("non-empty")
    }

    /// Reference semantics by dynamic programming (quadratic, small inputs only).
    pub(crate) fn reference_match(pattern: &str, path: &str) -> bool {
        let (body, anchored) = match pattern.strip_suffix('$') {
            Some(body) => (body.as_bytes(), true),
            None => (pattern.as_bytes(), false),
        };
        let path = path.as_bytes();
        // reach[j]: the pattern prefix read so far can end at path position j.
        let mut reach = vec![false; path.len() + 1];
        reach[0] = true;
        for &p in body {
            let mut next = vec![false; path.len() + 1];
            if p == b'*' {
                let mut seen = false;
                for j in 0..=path.len() {
                    seen |= reach[j];
                    next[j] = seen;
                }
            } else {
                for j in 0..path.len() {
                    next[j + 1] = reach[j] && path[j] == p;
                }
            }
            reach = next;
        }
        if anchored {
            reach[path.len()]
        } else {
            reach.iter().any(|r| *r)
        }
    }

    #[test]
    fn pattern_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("/", "/", true),
            ("/fish", "/fish", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish.asp", false),
            ("/fish*", "/fishheads/yummy.html", true),
            ("/fish/", "/fish", false),
            ("/*.php", "/folder/filename.php", true),
            ("/*.php", "/filename.php?parameters", true),
            ("/*.php", "/windows.PHP", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?parameters", false),
            ("/*.php$", "/filename.php5", false),
            ("/fish*.php", "/fishheads/catfish.php?parameters", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/*?session=", "/a?session=1", true),
            ("/*?session=", "/a?x=1", false),
            ("*", "/anything", true),
            ("/a$", "/a", true),
            ("/a$", "/ab", false),
            ("/a$b", "/a$b", true),
            ("$", "/", false),
            ("*$", "/x", true),
            ("/**a**$", "/xxa", true),
            ("/*a*a*a*a*a*b", "/aaaaab", true),
            ("/*a*a*a*a*a*b", "/aaaaa", false),
            ("/caf\u{e9}", "/caf%C3%A9", true),
            ("/%7euser", "/~user", true),
            ("/a%2fb", "/a%2Fb", true),
            ("/a b", "/a%20b", true),
        ];
        for (p, path, expected) in cases {
            assert_eq!(pattern(p).matches(path), *expected, "{p} vs {path}");
            assert_eq!(
                reference_match(pattern(p).as_str(), path),
                *expected,
                "reference {p} vs {path}"
            );
        }
    }

    #[test]
    fn empty_values_are_not_patterns() {
        assert_eq!(Pattern::new(b""), None);
    }

    #[test]
    fn rule_length_counts_wildcards() {
        assert_eq!(pattern("/private/*").len(), 10);
        assert_eq!(pattern("/private/public/").len(), 16);
        assert_eq!(pattern("/*.php$").len(), 7);
    }

    #[test]
    fn precedence_longest_then_allow() {
        let rule = |kind, text: &str| Rule {
            kind,
            pattern: pattern(text),
        };
        let rules = Rules::new(vec![
            rule(RuleKind::Disallow, "/private/*"),
            rule(RuleKind::Allow, "/private/public/"),
            rule(RuleKind::Disallow, "/page"),
            rule(RuleKind::Allow, "/page"),
        ]);
        assert!(rules.is_allowed("/private/public/x"));
        assert!(!rules.is_allowed("/private/x"));
        assert!(rules.is_allowed("/page"));
        assert!(rules.is_allowed("/elsewhere"));
        assert!(Rules::allow_all().is_allowed("/x"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]

        /// The greedy linear matcher agrees with the DP definition of `*` and `$`.
        #[test]
        fn greedy_matcher_agrees_with_the_reference(
            raw in "[/ab*$]{1,10}",
            path in "/[ab$]{0,12}",
        ) {
            let compiled = pattern(&raw);
            proptest::prop_assert_eq!(
                compiled.matches(&path),
                reference_match(compiled.as_str(), &path),
                "{} vs {}", raw, path
            );
        }
    }

    #[test]
    fn identical_rules_are_stored_once_and_sized() {
        let rule = |kind, text: &str| Rule {
            kind,
            pattern: pattern(text),
        };
        let rules = Rules::new(vec![
            rule(RuleKind::Allow, "a"),
            rule(RuleKind::Allow, "a"),
            rule(RuleKind::Disallow, "a"),
            rule(RuleKind::Disallow, "/%7e"),
            rule(RuleKind::Disallow, "/~"),
        ]);
        assert_eq!(rules.len(), 3);
        let listed: Vec<_> = rules.iter().map(|r| (r.kind, r.pattern)).collect();
        assert_eq!(
            listed,
            [
                (RuleKind::Disallow, "/~"),
                (RuleKind::Allow, "a"),
                (RuleKind::Disallow, "a"),
            ]
        );
        // "/~" + "a" + "a" in the arena, three 12-byte records.
        assert_eq!(rules.heap_bytes(), 4 + 3 * 12);
        assert_eq!(Rules::allow_all().heap_bytes(), 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// The compact, sorted, deduplicated set gives the verdict of FR-WF-08c
        /// computed naively over the rules as written: the longest matching pattern
        /// decides, `Allow` wins a tie, no match is allowed.
        #[test]
        fn rules_agree_with_naive_longest_match(
            written in proptest::collection::vec((proptest::bool::ANY, "[/ab*$]{1,6}"), 0..12),
            path in "/[ab$]{0,8}",
        ) {
            let list: Vec<Rule> = written
                .iter()
                .map(|(allow, raw)| Rule {
                    kind: if *allow { RuleKind::Allow } else { RuleKind::Disallow },
                    pattern: pattern(raw),
                })
                .collect();
            let best = list
                .iter()
                .filter(|rule| reference_match(rule.pattern.as_str(), &path))
                .map(|rule| (rule.pattern.len(), rule.kind == RuleKind::Allow))
                .max();
            let expected = best.is_none_or(|(_, allow)| allow);
            proptest::prop_assert_eq!(Rules::new(list).is_allowed(&path), expected);
        }
    }

    /// The variants a normalizing server routes to a disallowed path are
    /// refused by the hardened verdict and allowed by the literal one; the longest
    /// match still decides within each form.
    #[test]
    fn normalized_verdict_refuses_what_a_normalizing_server_serves() {
        let rule = |kind, text: &str| Rule {
            kind,
            pattern: pattern(text),
        };
        let rules = Rules::new(vec![
            rule(RuleKind::Disallow, "/private"),
            rule(RuleKind::Disallow, "/secret/"),
            rule(RuleKind::Disallow, "/members/"),
            rule(RuleKind::Allow, "/members/join"),
        ]);
        let table: &[(&str, bool, bool)] = &[
            // (path, literal verdict, hardened verdict)
            ("/private", false, false),
            ("//private", true, false),
            ("/x/..%2fprivate", true, false),
            ("/x/..%2Fprivate", true, false),
            ("/x/%2e%2e/private", true, false),
            ("/x%5C..%5Cprivate", true, false),
            ("/secret%2Fx", true, false),
            ("/secret//x", false, false),
            ("/public", true, true),
            ("//public", true, true),
            ("/x/..%2Fpublic?next=/private", true, true),
            ("/public?next=//private", true, true),
            ("/members/join", true, true),
            // Disallowed as written: normalizing never allows more.
            ("/members//join", false, false),
            ("/members/join/..%2Fbilling", true, false),
        ];
        for (path, literal, hardened) in table {
            assert_eq!(rules.is_allowed(path), *literal, "literal {path}");
            assert_eq!(
                rules.is_allowed_normalized(path),
                *hardened,
                "hardened {path}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// The hardened verdict never allows what the literal one refuses, and
        /// equals it on a path that normalizing leaves unchanged.
        #[test]
        fn normalized_verdict_only_ever_refuses_more(
            written in proptest::collection::vec((proptest::bool::ANY, "[/ab.*$]{1,6}"), 0..8),
            path in "/[ab/.%2Ff]{0,12}",
        ) {
            let rules = Rules::new(
                written
                    .iter()
                    .map(|(allow, raw)| Rule {
                        kind: if *allow { RuleKind::Allow } else { RuleKind::Disallow },
                        pattern: pattern(raw),
                    })
                    .collect(),
            );
            let hardened = rules.is_allowed_normalized(&path);
            proptest::prop_assert!(!hardened || rules.is_allowed(&path));
            if normalize_path(&path) == path {
                proptest::prop_assert_eq!(hardened, rules.is_allowed(&path));
            }
        }
    }

    #[test]
    fn non_ascii_paths_never_panic() {
        assert!(!pattern("/*\u{e9}").matches("/\u{e9}\u{e9}"));
        assert!(pattern("/*").matches("/\u{1F600}"));
        assert!(!pattern("/a*$").matches("/"));
    }
}
