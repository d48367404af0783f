//! The robots.txt parser and group selection (FR-WF-08b, 08e, 09b, ROBOTS-UA-01,
//! ROBOTS-WILDCARD-01, ROBOTS-BOM-01, ROBOTS-PARSE-01, ROBOTS-LINE-01, ROBOTS-SIZE-02).
//!
//! Pure: bytes in, [`RobotsTxt`] out, one linear pass. A body that is not UTF-8
//! after BOM handling and the truncation cut is allow-all (FR-WF-09b step 3,
//! ROBOTS-BOM-01); a decodable body is parsed line by line, and its non-ASCII
//! pattern characters are percent-encoded like the URL parser encodes them.

use super::matcher::{MAX_RULES_PER_FILE, RuleKind, Rules, RulesBuilder};

/// A parsed robots.txt: its groups in file order.
///
/// Each group keeps its rules as a compact [`Rules`] set (precedence order,
/// duplicates dropped, one arena; see its memory bound). At most
/// [`MAX_RULES_PER_FILE`] rule lines are read. The whole parse is transient: only the
/// selected group's [`Rules`] reaches the origin cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct RobotsTxt {
    groups: Vec<Group>,
}

/// One group: the consecutive `User-agent` lines that open it and the rules up to the
/// next `User-agent` line that follows a rule (RFC 9309 2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Group {
    /// The `User-agent` values, comments stripped, as written.
    agents: Vec<String>,
    /// The non-empty `Allow`/`Disallow` rules, in precedence order, deduplicated.
    rules: Rules,
}

impl Group {
    /// The `User-agent` values of the group.
    #[cfg(test)]
    pub(crate) fn agents(&self) -> &[String] {
        &self.agents
    }

    /// The approximate heap bytes of the group (allocator overhead aside).
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.agents.capacity() * std::mem::size_of::<String>()
            + self.agents.iter().map(String::capacity).sum::<usize>()
            + self.rules.heap_bytes()
    }

    /// Whether one of the group's lines is `User-agent: *`.
    pub(crate) fn is_wildcard(&self) -> bool {
        self.agents.iter().any(|agent| agent == "*")
    }

    /// The specificity of the group for `token` (FR-WF-ROBOTS-UA-01, 08e): the
    /// length of the longest `User-agent` value containing the token as an ASCII
    /// case-insensitive substring; `None` when no value contains it. An empty token
    /// matches nothing (it would otherwise match every group).
    pub(crate) fn specificity(&self, token: &str) -> Option<usize> {
        if token.is_empty() {
            return None;
        }
        let token = token.to_ascii_lowercase();
        self.agents
            .iter()
            .filter(|agent| agent.to_ascii_lowercase().contains(&token))
            .map(String::len)
            .max()
    }
}

/// The directives this parser acts on; every other field is ignored (FR-WF-09b).
enum Directive<'a> {
    UserAgent(&'a [u8]),
    Rule(RuleKind, &'a [u8]),
}

impl RobotsTxt {
    /// Parses a robots.txt body. `truncated` says the body was cut at
    /// `max_robots_bytes` (FR-WF-ROBOTS-SIZE-01): the trailing partial line, and with
    /// it any incomplete UTF-8 sequence, is then discarded (ROBOTS-SIZE-02).
    ///
    /// Never fails: an undecodable file (not valid UTF-8 once a UTF-8 BOM is stripped,
    /// or starting with a UTF-16/UTF-32 BOM; FR-WF-09b step 3, ROBOTS-BOM-01), an
    /// empty file or one without a single group is simply allow-all. The SRD asks for
    /// no note and no log line for an undecodable file: like a 404 it is an ordinary
    /// allow-all, cached as such.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn parse(body: &[u8], truncated: bool) -> RobotsTxt {
        let Some(text) = usable_text(body, truncated) else {
            return RobotsTxt::default();
        };
        let mut parser = Parser::default();
        for line in text.split(|b| matches!(b, b'\n' | b'\r')) {
            if !parser.line(line) {
                break;
            }
        }
        parser.finish()
    }

    /// The groups in file order.
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The one group that applies to `token` (FR-WF-08b, ROBOTS-UA-01): the most
    /// specific matching group, the first on a tie; else the first `*` group
    /// (ROBOTS-WILDCARD-01); else `None`, which is allow-all. Groups are never merged.
    pub(crate) fn select(&self, token: &str) -> Option<&Group> {
        let mut best: Option<(usize, &Group)> = None;
        for group in &self.groups {
            if let Some(len) = group.specificity(token)
                && best.is_none_or(|(best_len, _)| len > best_len)
            {
                best = Some((len, group));
            }
        }
        best.map(|(_, group)| group)
            .or_else(|| self.groups.iter().find(|group| group.is_wildcard()))
    }

    /// The rules that apply to `token`, ready for matching.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn rules_for(&self, token: &str) -> Rules {
        self.select(token)
            .map_or_else(Rules::allow_all, |group| group.rules.clone())
    }

    /// The approximate heap bytes of the parsed file (allocator overhead aside).
    #[cfg(any(test, feature = "internals"))]
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.groups.capacity() * std::mem::size_of::<Group>()
            + self.groups.iter().map(Group::heap_bytes).sum::<usize>()
    }
}

/// The state of one parse: the finished groups and the open one.
#[derive(Default)]
struct Parser {
    groups: Vec<Group>,
    /// The open group's agents and rules, once a User-agent line was seen.
    open: Option<(Vec<String>, RulesBuilder)>,
    /// True while the open group is still collecting its User-agent lines.
    in_agents: bool,
    /// Rule lines kept so far in the whole file.
    rule_count: usize,
}

impl Parser {
    /// Takes one line; false when the rule cap is reached and the rest of the file
    /// must be ignored ([`MAX_RULES_PER_FILE`]).
    fn line(&mut self, line: &[u8]) -> bool {
        match directive(line) {
            Some(Directive::UserAgent(value)) => {
                let agent = String::from_utf8_lossy(value).into_owned();
                match &mut self.open {
                    Some((agents, _)) if self.in_agents => agents.push(agent),
                    _ => {
                        self.close_group();
                        self.open = Some((vec![agent], RulesBuilder::default()));
                    }
                }
                self.in_agents = true;
            }
            Some(Directive::Rule(kind, value)) => {
                // Rules before the first User-agent line belong to no group.
                let Some((_, rules)) = &mut self.open else {
                    return true;
                };
                if !value.is_empty() {
                    if self.rule_count >= MAX_RULES_PER_FILE || !rules.push(kind, value) {
                        return false;
                    }
                    self.rule_count += 1;
                }
                // An empty value has no effect but still ends the agent list
                // (ROBOTS-EMPTY-01; RFC 9309 2.2.2).
                self.in_agents = false;
            }
            None => {}
        }
        true
    }

    fn close_group(&mut self) {
        if let Some((mut agents, rules)) = self.open.take() {
            agents.shrink_to_fit();
            self.groups.push(Group {
                agents,
                rules: rules.finish(),
            });
        }
    }

    fn finish(mut self) -> RobotsTxt {
        self.close_group();
        self.groups.shrink_to_fit();
        RobotsTxt {
            groups: self.groups,
        }
    }
}

/// BOM handling (ROBOTS-BOM-01), the truncation cut (ROBOTS-SIZE-02) and the UTF-8
/// check (FR-WF-09b step 3). `None` when the content announces a non-UTF-8 encoding
/// or is not UTF-8: the whole file is then allow-all.
fn usable_text(body: &[u8], truncated: bool) -> Option<&[u8]> {
    let text = cut_text(body, truncated)?;
    std::str::from_utf8(text).is_ok().then_some(text)
}

/// BOM handling and the truncation cut, before the UTF-8 check.
fn cut_text(body: &[u8], truncated: bool) -> Option<&[u8]> {
    const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
    const OTHER_BOMS: [&[u8]; 3] = [b"\xFE\xFF", b"\xFF\xFE", b"\x00\x00\xFE\xFF"];
    let text = match body.strip_prefix(UTF8_BOM) {
        Some(rest) => rest,
        None if OTHER_BOMS.iter().any(|bom| body.starts_with(bom)) => return None,
        None => body,
    };
    if !truncated {
        return Some(text);
    }
    // Keep whole lines only: everything after the last line break is a partial line,
    // and an incomplete UTF-8 sequence can only sit there.
    let end = text
        .iter()
        .rposition(|b| matches!(b, b'\n' | b'\r'))
        .map_or(0, |at| at + 1);
    text.get(..end)
}

/// One line per ROBOTS-PARSE-01: trimmed, comments dropped, `key: value` split.
/// Unknown keys and lines without a colon give `None` (FR-WF-09b).
fn directive(line: &[u8]) -> Option<Directive<'_>> {
    let line = line.trim_ascii();
    if line.first() == Some(&b'#') {
        return None;
    }
    // An inline comment starts at a `#` preceded by a space or tab
    // (ROBOTS-PARSE-01 step 3, ROBOTS-LINE-01); a `#` glued to text is data.
    let line = match line
        .windows(2)
        .position(|pair| matches!(pair, [b' ' | b'\t', b'#']))
    {
        Some(at) => line.get(..at).unwrap_or(line).trim_ascii_end(),
        None => line,
    };
    let colon = line.iter().position(|b| *b == b':')?;
    let (key, value) = line.split_at(colon);
    let key = key.trim_ascii();
    let value = value.get(1..).unwrap_or_default().trim_ascii();
    if key.eq_ignore_ascii_case(b"user-agent") {
        Some(Directive::UserAgent(value))
    } else if key.eq_ignore_ascii_case(b"allow") {
        Some(Directive::Rule(RuleKind::Allow, value))
    } else if key.eq_ignore_ascii_case(b"disallow") {
        Some(Directive::Rule(RuleKind::Disallow, value))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(body: &str, token: &str, path: &str) -> bool {
        RobotsTxt::parse(body.as_bytes(), false)
            .rules_for(token)
            .is_allowed(path)
    }

    #[test]
    fn consecutive_agents_share_a_group_blank_lines_do_not_split() {
        let robots = RobotsTxt::parse(
            b"User-agent: a\n\nUser-agent: b\nDisallow: /x\nUser-agent: c\nAllow: /\n",
            false,
        );
        assert_eq!(robots.groups().len(), 2);
        assert_eq!(robots.groups()[0].agents(), ["a", "b"]);
        assert_eq!(robots.groups()[1].agents(), ["c"]);
    }

    #[test]
    fn unknown_lines_do_not_close_the_agent_list() {
        let body =
            "User-agent: other\nSitemap: https://e.com/s.xml\nUser-agent: forge\nDisallow: /p\n";
        assert!(!allowed(body, "forge", "/p"));
        assert_eq!(RobotsTxt::parse(body.as_bytes(), false).groups().len(), 1);
    }

    #[test]
    fn rules_before_any_agent_are_ignored() {
        assert!(allowed(
            "Disallow: /\nUser-agent: *\nAllow: /x\n",
            "forge",
            "/"
        ));
    }

    #[test]
    fn directive_keys_are_case_insensitive_and_space_tolerant() {
        assert!(!allowed("USER-AGENT : *\nDISALLOW\t:\t/a\n", "forge", "/a"));
        assert!(allowed("User-agent *\nDisallow /a\n", "forge", "/a"));
    }

    #[test]
    fn no_group_means_allow_all() {
        assert!(allowed("", "forge", "/"));
        assert!(allowed("garbage\n\u{0}\u{1}\n", "forge", "/"));
        assert!(allowed("User-agent: other\nDisallow: /\n", "forge", "/"));
    }

    #[test]
    fn bare_cr_is_a_line_break() {
        assert!(!allowed("User-agent: *\rDisallow: /a\r\n", "forge", "/a"));
    }

    #[test]
    fn fr_wf_09b_invalid_utf8_anywhere_is_allow_all() {
        for body in [
            &b"User-agent: *\nDisallow: /caf\xE9\nDisallow: /x\n"[..],
            b"# caf\xE9\nUser-agent: *\nDisallow: /\n",
            b"User-agent: *\nDisallow: /\n\xC3",
            b"\xEF\xBB\xBFUser-agent: *\nDisallow: /\n\xFF\n",
        ] {
            let robots = RobotsTxt::parse(body, false);
            assert!(robots.groups().is_empty());
            assert!(robots.rules_for("forge").is_allowed("/x"));
        }
        // Valid multi-byte UTF-8 is fine.
        let rules = RobotsTxt::parse("User-agent: *\nDisallow: /caf\u{e9}\n".as_bytes(), false)
            .rules_for("forge");
        assert!(!rules.is_allowed("/caf%C3%A9"));
    }

    #[test]
    fn fr_wf_09b_incomplete_utf8_in_the_truncated_tail_is_not_undecodable() {
        let body = "User-agent: *\nDisallow: /x\nDisallow: /caf\u{e9}".as_bytes();
        let cut = &body[..body.len() - 1];
        assert!(
            !RobotsTxt::parse(cut, true)
                .rules_for("forge")
                .is_allowed("/x")
        );
        assert!(
            RobotsTxt::parse(cut, false)
                .rules_for("forge")
                .is_allowed("/x")
        );
    }

    #[test]
    fn truncation_cut_without_any_line_break_drops_everything() {
        assert!(
            RobotsTxt::parse(b"User-agent: *\r", true).groups()[0]
                .agents()
                .contains(&"*".to_owned())
        );
        assert!(RobotsTxt::parse(b"User-agent: *", true).groups().is_empty());
    }

    #[test]
    fn utf32_and_utf16_boms_are_undecodable() {
        for bom in [
            &b"\xFF\xFE"[..],
            b"\xFE\xFF",
            b"\x00\x00\xFE\xFF",
            b"\xFF\xFE\x00\x00",
        ] {
            let mut body = bom.to_vec();
            body.extend_from_slice(b"User-agent: *\nDisallow: /\n");
            assert!(RobotsTxt::parse(&body, false).groups().is_empty());
        }
    }

    #[test]
    fn empty_token_matches_no_group() {
        let robots = RobotsTxt::parse(b"User-agent: a\nDisallow: /\n", false);
        assert_eq!(robots.select(""), None);
    }
}
