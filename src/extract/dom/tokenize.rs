//! html5gum's tokenizer feeding html5ever's tree builder.
//!
//! html5ever's own tokenizer reads one character at a time through a queue of
//! tendrils; on content-dense markup it was half the cost of an extraction.
//! html5gum implements the same WHATWG tokenizer states over a byte slice and
//! scans runs of text, names and values with `memchr`, about 2.5 times as fast.
//! This module is the [`Emitter`] that turns its callbacks into the html5ever
//! [`Token`]s the tree builder (through [`Limiter`](super::Limiter)) expects,
//! token for token what html5ever's tokenizer would have sent:
//!
//! * text runs become `CharacterTokens`, with every U+0000 that the data state
//!   passes through as its own `NullCharacterToken`;
//! * a repeated attribute name keeps its first value (the tokenizer's
//!   duplicate-attribute rule);
//! * past [`MAX_ATTRIBUTES`] attributes in a tag, only the first of each name
//!   extraction reads ([`READ_ATTRIBUTES`]) is kept: html5ever's tree builder
//!   compares formatting elements' whole attribute lists, so an unbounded list
//!   would cost time in proportion to an attacker's markup, while `hidden`,
//!   `class` and their kin decide boilerplate removal and a cap must never make
//!   hidden text visible;
//! * the tree builder's answer to a start tag (raw text, RCDATA, plain text)
//!   switches the tokenizer's state, and its "adjusted current node" decides
//!   whether `<![CDATA[` opens a CDATA section;
//! * a leading byte order mark is dropped, as html5ever's `discard_bom` does.
//!
//! Parse errors are not reported: the tree builder only passes them to the
//! sink, which ignores them.

use std::borrow::Cow;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Doctype, Tag, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::{Attribute, LocalName, QualName, local_name, ns};
use html5gum::{Emitter, Error, State, Tokenizer};

use super::MAX_ATTRIBUTES;
use crate::budget;
use crate::extract::element::{self, READ_ATTRIBUTES, TREE_BUILDER_ATTRIBUTES};

/// html5ever's tree builder wants a line number per token for its error
/// messages, which nothing here reads.
const LINE: u64 = 1;

/// Tokenizes `html` into `sink`, then ends it (EOF token and [`TokenSink::end`]).
pub(super) fn run<S: TokenSink>(html: &str, sink: &S) {
    let html = html.strip_prefix('\u{feff}').unwrap_or(html);
    let html = bound_attribute_chains(html);
    let mut tokenizer = Tokenizer::new_with_emitter(&*html, Feed::new(sink));
    // The first token out is the call's read budget running out; until then, or
    // the end of the input, the feed drives the tree builder itself. Reading a
    // `&str` cannot fail.
    let _stopped_or_done = tokenizer.next();
}

/// Double-quoted attributes in a row after which [`bound_attribute_chains`]
/// breaks the row.
const MAX_CHAIN: u32 = 32;

/// Bounds the stack html5gum uses on a tag with many double-quoted attributes.
///
/// html5gum 0.9 calls its next state directly (not through its state loop) along
/// the cycle before attribute name → attribute name → before attribute value →
/// double-quoted value → after the value → before attribute name, so every
/// `name="value"` followed by whitespace and the next name nests one more call.
/// Ten thousand such attributes in one tag (60 KB of input) overflow an 8 MiB
/// stack, which aborts the process. Every other way out of those states returns
/// to the loop: another quote style, a `&` in the value, a space before `=`, `/`
/// or `>`.
///
/// This pass follows that cycle over the bytes from every position at once (the
/// deepest row ending in each of the five states) and, where a row reaches
/// [`MAX_CHAIN`] attributes, turns the whitespace after the closing quote into
/// `/`. Inside a tag that changes no token: after a quoted value, `/` goes to
/// the self-closing state, which, not followed by `>`, goes back to "before
/// attribute name" (a parse error nobody reads). Elsewhere it changes one space
/// in 32 in text that looks like such a tag, which real pages do not have. Borrows the
/// input when nothing changes.
fn bound_attribute_chains(html: &str) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    // The deepest row ending in each state at this byte, counting the `=` before
    // each value; 0 is none. A row may start at any byte, in any state.
    let (mut value, mut after_quote, mut before_name, mut name, mut before_value) =
        (0u32, 0u32, 0u32, 0u32, 0u32);
    let mut breaks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if after_quote | before_name | name | before_value == 0 {
            // Only a `=` starts a row; only `"` and `&` end a value.
            let next = if value == 0 {
                memchr::memchr(b'=', &bytes[i..])
            } else {
                memchr::memchr3(b'"', b'&', b'=', &bytes[i..])
            };
            match next {
                Some(offset) => i += offset,
                None => break,
            }
        }
        let mut byte = bytes[i];
        if after_quote >= MAX_CHAIN && matches!(byte, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ') {
            breaks.push(i);
            byte = b'/';
        }
        (value, after_quote, before_name, name, before_value) = match byte {
            b'"' => (before_value, value, 0, before_name.max(name), 0),
            b'\t' | b'\n' | b'\x0C' | b'\r' | b' ' => {
                (value, 0, after_quote.max(before_name), 0, before_value)
            }
            b'=' => (value, 0, 0, 0, name.saturating_add(1)),
            b'/' | b'>' => (value, 0, 0, 0, 0),
            b'&' => (0, 0, 0, before_name.max(name), 0),
            _ => (value, 0, 0, before_name.max(name), 0),
        };
        i += 1;
    }
    if breaks.is_empty() {
        return Cow::Borrowed(html);
    }
    let mut out = bytes.to_vec();
    for at in breaks {
        out[at] = b'/';
    }
    // An ASCII byte replaced by an ASCII byte: still UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| html.to_owned()))
}

/// The token being built, between its `init_*` and `emit_current_*` calls.
#[derive(Default)]
struct Draft {
    kind: Option<TagKind>,
    name: Vec<u8>,
    /// `name` interned, once the first attribute asks whether the tag is a
    /// formatting element.
    atom: Option<LocalName>,
    self_closing: bool,
    attrs: Vec<Attribute>,
    had_duplicate_attributes: bool,
    /// Attributes met so far, kept or not (the cap counts these).
    met: usize,
    /// Whether an attribute is being read, and its name and value so far.
    reading: bool,
    attr_name: Vec<u8>,
    attr_value: Vec<u8>,
}

/// The doctype being built (`None` identifiers are missing, not empty).
#[derive(Default)]
struct DoctypeDraft {
    name: Vec<u8>,
    public_id: Option<Vec<u8>>,
    system_id: Option<Vec<u8>>,
    force_quirks: bool,
}

/// The [`Emitter`] that hands each token to an html5ever [`TokenSink`].
struct Feed<'a, S> {
    sink: &'a S,
    /// Text not yet sent: adjacent runs go as one token.
    text: Vec<u8>,
    tag: Draft,
    comment: Vec<u8>,
    doctype: DoctypeDraft,
    /// The name of the last start tag, for the "appropriate end tag" of raw text.
    last_start_tag: Vec<u8>,
    /// The tokenizer is reading a script's or style's raw text, which no pass
    /// reads (the sink drops it too): it is not copied at all.
    discarding: bool,
    /// The call's read budget ran out ([`budget::interrupted`], checked at
    /// each tag): the tokenizer stops at the next token it asks for.
    interrupted: bool,
}

impl<'a, S: TokenSink> Feed<'a, S> {
    fn new(sink: &'a S) -> Self {
        Feed {
            sink,
            text: Vec::new(),
            tag: Draft::default(),
            comment: Vec::new(),
            doctype: DoctypeDraft::default(),
            last_start_tag: Vec::new(),
            discarding: false,
            interrupted: false,
        }
    }

    /// Sends a token other than a tag: the tree builder answers only a tag with
    /// anything but `Continue`.
    fn send(&self, token: Token) {
        let _continue = self.sink.process_token(token, LINE);
    }

    /// Sends the pending text, each U+0000 as its own token.
    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        let mut start = 0;
        for nul in memchr::memchr_iter(0, &text) {
            if nul > start {
                self.send(Token::CharacterTokens(tendril(&text[start..nul])));
            }
            self.send(Token::NullCharacterToken);
            start = nul + 1;
        }
        if start < text.len() {
            self.send(Token::CharacterTokens(tendril(&text[start..])));
        }
        self.text = text;
        self.text.clear();
    }

    /// Moves the attribute being read onto the tag, unless the tag already has
    /// one of that name (the first wins), or nobody reads it: past
    /// [`MAX_ATTRIBUTES`] only the first of each name extraction reads is kept,
    /// and below it a tag other than a formatting element keeps only those and the
    /// ones the tree builder reads ([`TREE_BUILDER_ATTRIBUTES`]). A formatting
    /// element keeps them all: the tree builder compares and copies its list.
    fn finish_attribute(&mut self) {
        let tag = &mut self.tag;
        if !std::mem::take(&mut tag.reading) {
            return;
        }
        tag.met += 1;
        let named = |names: &[&str]| names.iter().any(|n| n.as_bytes() == tag.attr_name);
        let kept = if tag.met > MAX_ATTRIBUTES {
            named(&READ_ATTRIBUTES)
        } else {
            let atom = tag.atom.get_or_insert_with(|| local_name(&tag.name));
            element::is_formatting(atom)
                || named(&READ_ATTRIBUTES)
                || named(&TREE_BUILDER_ATTRIBUTES)
        };
        if !kept {
            return;
        }
        let name = local_name(&tag.attr_name);
        if tag.attrs.iter().any(|a| a.name.local == name) {
            tag.had_duplicate_attributes = true;
            return;
        }
        tag.attrs.push(Attribute {
            name: QualName::new(None, ns!(), name),
            value: tendril(&tag.attr_value),
        });
    }
}

/// Bytes html5gum emits are slices of a `&str` cut at ASCII delimiters, or
/// replacement and referenced characters it encoded itself: valid UTF-8. The
/// lossy fallback is only a guard.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Interns a tag or attribute name (html5gum lowercases both). The names pages
/// repeat most are matched as bytes first: `LocalName::from` hashes every name
/// to find its atom, a few percent of a content-dense page. Same atom either way.
fn local_name(bytes: &[u8]) -> LocalName {
    match bytes {
        b"a" => local_name!("a"),
        b"p" => local_name!("p"),
        b"b" => local_name!("b"),
        b"i" => local_name!("i"),
        b"br" => local_name!("br"),
        b"em" => local_name!("em"),
        b"li" => local_name!("li"),
        b"ul" => local_name!("ul"),
        b"ol" => local_name!("ol"),
        b"td" => local_name!("td"),
        b"th" => local_name!("th"),
        b"tr" => local_name!("tr"),
        b"h1" => local_name!("h1"),
        b"h2" => local_name!("h2"),
        b"h3" => local_name!("h3"),
        b"h4" => local_name!("h4"),
        b"id" => local_name!("id"),
        b"div" => local_name!("div"),
        b"img" => local_name!("img"),
        b"nav" => local_name!("nav"),
        b"pre" => local_name!("pre"),
        b"src" => local_name!("src"),
        b"alt" => local_name!("alt"),
        b"rel" => local_name!("rel"),
        b"span" => local_name!("span"),
        b"code" => local_name!("code"),
        b"href" => local_name!("href"),
        b"link" => local_name!("link"),
        b"meta" => local_name!("meta"),
        b"path" => local_name!("path"),
        b"type" => local_name!("type"),
        b"name" => local_name!("name"),
        b"class" => local_name!("class"),
        b"style" => local_name!("style"),
        b"table" => local_name!("table"),
        b"title" => local_name!("title"),
        b"strong" => local_name!("strong"),
        b"script" => local_name!("script"),
        b"button" => local_name!("button"),
        b"footer" => local_name!("footer"),
        b"header" => local_name!("header"),
        b"section" => local_name!("section"),
        b"article" => local_name!("article"),
        b"content" => local_name!("content"),
        b"blockquote" => local_name!("blockquote"),
        _ => LocalName::from(text(bytes)),
    }
}

fn tendril(bytes: &[u8]) -> StrTendril {
    StrTendril::from_slice(&text(bytes))
}

/// The tokenizer state the tree builder asked for.
fn next_state<H>(result: TokenSinkResult<H>) -> Option<State> {
    match result {
        // A `</script>` would pause for the script to run (we run none); a
        // `<meta charset>` reports an encoding (the text is already decoded).
        TokenSinkResult::Continue
        | TokenSinkResult::Script(_)
        | TokenSinkResult::EncodingIndicator(_) => None,
        TokenSinkResult::Plaintext => Some(State::PlainText),
        TokenSinkResult::RawData(RawKind::Rcdata) => Some(State::RcData),
        TokenSinkResult::RawData(RawKind::Rawtext) => Some(State::RawText),
        TokenSinkResult::RawData(RawKind::ScriptData | RawKind::ScriptDataEscaped(_)) => {
            Some(State::ScriptData)
        }
    }
}

fn take_tendril(bytes: Option<Vec<u8>>) -> Option<StrTendril> {
    bytes.map(|b| tendril(&b))
}

impl<S: TokenSink> Emitter for Feed<'_, S> {
    /// Only ever the budget's stop: every real token goes to the sink as it is
    /// made.
    type Token = ();

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.last_start_tag.clear();
        self.last_start_tag
            .extend_from_slice(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {
        self.flush_text();
        self.send(Token::EOFToken);
        self.sink.end();
    }

    fn emit_error(&mut self, _error: Error) {}

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<()> {
        self.interrupted.then_some(())
    }

    fn emit_string(&mut self, s: &[u8]) {
        if !self.discarding {
            self.text.extend_from_slice(s);
        }
    }

    fn init_start_tag(&mut self) {
        self.tag.kind = Some(TagKind::StartTag);
        self.tag.name.clear();
        self.tag.atom = None;
        self.tag.self_closing = false;
        self.tag.attrs.clear();
        self.tag.had_duplicate_attributes = false;
        self.tag.met = 0;
        self.tag.reading = false;
    }

    fn init_end_tag(&mut self) {
        self.init_start_tag();
        self.tag.kind = Some(TagKind::EndTag);
    }

    fn init_comment(&mut self) {
        self.comment.clear();
    }

    fn emit_current_tag(&mut self) -> Option<State> {
        self.interrupted = budget::interrupted();
        self.finish_attribute();
        self.flush_text();
        let kind = self.tag.kind.take()?;
        let name = self
            .tag
            .atom
            .take()
            .unwrap_or_else(|| local_name(&self.tag.name));
        let script_or_style = kind == TagKind::StartTag && element::is_script_or_style(&name);
        if kind == TagKind::StartTag {
            self.last_start_tag.clear();
            self.last_start_tag.extend_from_slice(&self.tag.name);
        }
        let attrs = match kind {
            TagKind::StartTag => std::mem::take(&mut self.tag.attrs),
            // The tree builder never reads an end tag's attributes.
            TagKind::EndTag => Vec::new(),
        };
        let tag = Token::TagToken(Tag {
            kind,
            name,
            self_closing: self.tag.self_closing,
            attrs,
            had_duplicate_attributes: self.tag.had_duplicate_attributes,
        });
        let state = next_state(self.sink.process_token(tag, LINE));
        // Raw text up to the matching end tag, the next tag the tokenizer emits.
        self.discarding =
            script_or_style && matches!(state, Some(State::ScriptData | State::RawText));
        state
    }

    fn emit_current_comment(&mut self) {
        self.flush_text();
        let comment = tendril(&self.comment);
        self.send(Token::CommentToken(comment));
    }

    fn emit_current_doctype(&mut self) {
        self.flush_text();
        let doctype = std::mem::take(&mut self.doctype);
        self.send(Token::DoctypeToken(Doctype {
            name: Some(doctype.name)
                .filter(|name| !name.is_empty())
                .map(|name| tendril(&name)),
            public_id: take_tendril(doctype.public_id),
            system_id: take_tendril(doctype.system_id),
            force_quirks: doctype.force_quirks,
        }));
    }

    fn set_self_closing(&mut self) {
        self.tag.self_closing = true;
    }

    fn set_force_quirks(&mut self) {
        self.doctype.force_quirks = true;
    }

    fn push_tag_name(&mut self, s: &[u8]) {
        self.tag.name.extend_from_slice(s);
    }

    fn push_comment(&mut self, s: &[u8]) {
        self.comment.extend_from_slice(s);
    }

    fn push_doctype_name(&mut self, s: &[u8]) {
        self.doctype.name.extend_from_slice(s);
    }

    fn init_doctype(&mut self) {
        self.doctype = DoctypeDraft::default();
    }

    fn init_attribute(&mut self) {
        self.finish_attribute();
        self.tag.reading = true;
        self.tag.attr_name.clear();
        self.tag.attr_value.clear();
    }

    fn push_attribute_name(&mut self, s: &[u8]) {
        self.tag.attr_name.extend_from_slice(s);
    }

    fn push_attribute_value(&mut self, s: &[u8]) {
        self.tag.attr_value.extend_from_slice(s);
    }

    fn set_doctype_public_identifier(&mut self, value: &[u8]) {
        self.doctype.public_id = Some(value.to_vec());
    }

    fn set_doctype_system_identifier(&mut self, value: &[u8]) {
        self.doctype.system_id = Some(value.to_vec());
    }

    fn push_doctype_public_identifier(&mut self, s: &[u8]) {
        self.doctype
            .public_id
            .get_or_insert_with(Vec::new)
            .extend_from_slice(s);
    }

    fn push_doctype_system_identifier(&mut self, s: &[u8]) {
        self.doctype
            .system_id
            .get_or_insert_with(Vec::new)
            .extend_from_slice(s);
    }

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.tag.kind == Some(TagKind::EndTag)
            && !self.last_start_tag.is_empty()
            && self.tag.name == self.last_start_tag
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&mut self) -> bool {
        self.sink
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use ego_tree::NodeId;

    use super::*;
    use crate::extract::dom::raw_switch;

    #[test]
    fn common_names_intern_to_the_atoms_of_their_text() {
        let common = "a p b i br em li ul ol td th tr h1 h2 h3 h4 id div img nav pre src alt \
                      rel span code href link meta path type name class style table title \
                      strong script button footer header section article content blockquote";
        for name in common
            .split_whitespace()
            .chain(["x-widget", "data-id", "h5", ""])
        {
            assert_eq!(local_name(name.as_bytes()), LocalName::from(name), "{name}");
        }
    }

    /// A token sink that writes the tokens down and answers start tags as the
    /// tree builder does in HTML content.
    #[derive(Default)]
    struct Recorder {
        tokens: RefCell<Vec<String>>,
        /// What `adjusted_current_node_present_but_not_in_html_namespace` says.
        foreign: bool,
    }

    impl TokenSink for Recorder {
        type Handle = NodeId;

        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<NodeId> {
            let (written, answer) = match token {
                Token::TagToken(tag) if tag.kind == TagKind::StartTag => {
                    let attrs: String = tag
                        .attrs
                        .iter()
                        .map(|a| format!(" {}={}", a.name.local, a.value))
                        .collect();
                    let slash = if tag.self_closing { "/" } else { "" };
                    (
                        format!("<{}{attrs}{slash}>", tag.name),
                        raw_switch(&tag.name).unwrap_or(TokenSinkResult::Continue),
                    )
                }
                Token::TagToken(tag) => (format!("</{}>", tag.name), TokenSinkResult::Continue),
                Token::CharacterTokens(text) => {
                    (format!("{:?}", &*text), TokenSinkResult::Continue)
                }
                Token::NullCharacterToken => ("NUL".to_owned(), TokenSinkResult::Continue),
                Token::CommentToken(text) => (format!("<!--{text}-->"), TokenSinkResult::Continue),
                Token::DoctypeToken(d) => {
                    let [name, public_id, system_id] =
                        [d.name, d.public_id, d.system_id].map(|s| s.map(String::from));
                    let quirks = d.force_quirks;
                    (
                        format!("<!DOCTYPE {name:?} {public_id:?} {system_id:?} {quirks}>"),
                        TokenSinkResult::Continue,
                    )
                }
                Token::EOFToken => ("EOF".to_owned(), TokenSinkResult::Continue),
                Token::ParseError(_) => ("error".to_owned(), TokenSinkResult::Continue),
            };
            self.tokens.borrow_mut().push(written);
            answer
        }

        fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
            self.foreign
        }
    }

    fn tokens_of(html: &str) -> Vec<String> {
        let recorder = Recorder::default();
        run(html, &recorder);
        recorder.tokens.into_inner()
    }

    #[test]
    fn text_runs_are_one_token_and_nul_is_its_own() {
        assert_eq!(
            tokens_of("a &amp; b\0c<p>d"),
            [r#""a & b""#, "NUL", r#""c""#, "<p>", r#""d""#, "EOF"]
        );
    }

    #[test]
    fn only_a_leading_byte_order_mark_is_dropped() {
        assert_eq!(tokens_of("\u{feff}a\u{feff}"), [r#""a\u{feff}""#, "EOF"]);
    }

    #[test]
    fn the_first_of_repeated_attributes_wins() {
        assert_eq!(
            tokens_of("<a HREF=one href='two' class=\"c&amp;d\" hidden/>"),
            ["<a href=one class=c&d hidden=/>", "EOF"]
        );
    }

    #[test]
    fn raw_text_runs_to_its_end_tag() {
        assert_eq!(
            tokens_of("<xmp>a</p><b>\0</xmp><title>&lt;i&gt;</title>"),
            [
                "<xmp>",
                "\"a</p><b>\u{fffd}\"",
                "</xmp>",
                "<title>",
                r#""<i>""#,
                "</title>",
                "EOF"
            ]
        );
    }

    /// A script's or style's text is not even copied (no pass reads it), but the
    /// markup in it stays text: the next tag is its end tag.
    #[test]
    fn script_and_style_text_is_skipped_up_to_the_end_tag() {
        assert_eq!(
            tokens_of("<script>a</p><b>\0</script><style>i<p></style>t"),
            [
                "<script>",
                "</script>",
                "<style>",
                "</style>",
                r#""t""#,
                "EOF"
            ]
        );
    }

    #[test]
    fn cdata_is_text_only_in_foreign_content() {
        let html = "<![CDATA[x<y]]>";
        assert_eq!(tokens_of(html), ["<!--[CDATA[x<y]]-->", "EOF"]);
        let recorder = Recorder {
            foreign: true,
            ..Recorder::default()
        };
        run(html, &recorder);
        assert_eq!(recorder.tokens.into_inner(), [r#""x<y""#, "EOF"]);
    }

    #[test]
    fn doctypes_keep_missing_and_empty_identifiers_apart() {
        assert_eq!(
            tokens_of(r#"<!DOCTYPE html PUBLIC "" ><!DOCTYPE>"#),
            [
                r#"<!DOCTYPE Some("html") Some("") None false>"#,
                "<!DOCTYPE None None None true>",
                "EOF"
            ]
        );
    }

    fn junk(n: usize) -> String {
        (0..n).map(|i| format!(" a{i}")).collect()
    }

    #[test]
    fn attributes_past_the_cap_are_dropped() {
        let attrs: String = (0..MAX_ATTRIBUTES + 50)
            .map(|i| format!(" a{i}=\"v\""))
            .collect();
        let tokens = tokens_of(&format!("<b{attrs}>text</b>"));
        assert_eq!(tokens[0].matches("=v").count(), MAX_ATTRIBUTES);
        assert!(tokens[0].ends_with(&format!(" a{}=v>", MAX_ATTRIBUTES - 1)));
        assert_eq!(tokens[1..], [r#""text""#, "</b>", "EOF"]);
    }

    /// Below the cap, an element keeps what extraction or the tree builder reads;
    /// a formatting element keeps everything (the tree builder compares its list).
    #[test]
    fn only_formatting_elements_keep_attributes_nobody_reads() {
        assert_eq!(
            tokens_of("<div data-x=1 class=c onclick=f() type=t HIDDEN>")[0],
            "<div class=c type=t hidden=>"
        );
        assert_eq!(
            tokens_of("<a data-x=1 href=/ onclick=f()>")[0],
            "<a data-x=1 href=/ onclick=f()>"
        );
    }

    #[test]
    fn past_the_cap_the_first_of_each_read_attribute_is_kept() {
        let html = format!(
            "<b{} HIDDEN class='x ad' data-x=1 hidden=again{}>text</b>",
            junk(MAX_ATTRIBUTES + 50),
            " aria-hidden=true".repeat(1000)
        );
        let tokens = tokens_of(&html);
        let kept = tokens[0]
            .split_once(&format!(" a{}=", MAX_ATTRIBUTES - 1))
            .map(|(_, after)| after);
        assert_eq!(kept, Some(" hidden= class=x ad aria-hidden=true>"));
        // A name read before the cap is not kept again after it.
        let tokens = tokens_of(&format!("<i id=one{} id=two>", junk(MAX_ATTRIBUTES)));
        assert!(tokens[0].starts_with("<i id=one a0="), "{}", tokens[0]);
        assert!(!tokens[0].contains("two"), "{}", tokens[0]);
        // The self-closing slash after a kept attribute stays.
        let tokens = tokens_of(&format!("<br{} alt=x/>", junk(MAX_ATTRIBUTES)));
        assert!(tokens[0].ends_with(" alt=x/>"), "{}", tokens[0]);
    }

    /// `n` attributes in the form `form`, `{i}` standing for the index.
    fn attributes(form: &str, n: usize) -> String {
        (0..n)
            .map(|i| form.replace("{i}", &i.to_string()))
            .collect()
    }

    #[test]
    fn rows_of_double_quoted_attributes_are_broken_without_changing_a_token() {
        let ordinary = r#"<a href="x" class="y" id="z">t</a> "quoted" text, {"json": "yes"}"#;
        assert!(matches!(bound_attribute_chains(ordinary), Cow::Borrowed(_)));

        let html = format!("<b{}>text</b>", attributes(" a{i}=\"v{i}\"", 100));
        let bounded = bound_attribute_chains(&html);
        assert_eq!(bounded.matches("\"/a").count(), 3, "{bounded}");
        let tokens = tokens_of(&bounded);
        let expected: String = (0..100).map(|i| format!(" a{i}=v{i}")).collect();
        assert_eq!(
            tokens,
            [
                format!("<b{expected}>"),
                r#""text""#.to_owned(),
                "</b>".to_owned(),
                "EOF".to_owned()
            ]
        );
    }

    /// html5gum nests a call per double-quoted attribute in a row (see
    /// [`bound_attribute_chains`]): a hundred thousand attributes in every form,
    /// on a thread with a small stack, must tokenize, not abort the process.
    #[test]
    fn a_hundred_thousand_attributes_fit_a_small_stack() {
        for form in [
            " a{i}=\"v\"",
            " a{i} = \"v\"",
            "\na{i}=\"\"",
            " a{i}='v'",
            " a{i}=v",
            " a{i}",
            "/a{i}",
        ] {
            let html = format!(
                "<b{}>x</b><svg><g{}>",
                attributes(form, 100_000),
                attributes(form, 100_000)
            );
            let tokens = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || tokens_of(&html))
                .expect("thread")
                .join()
                .expect("tokenized");
            assert_eq!(tokens.len(), 6, "{form}");
            assert_eq!(tokens[0].matches(" a").count(), MAX_ATTRIBUTES, "{form}");
        }
    }

    /// No markup, repeated, nests html5gum's calls without bound: each of these
    /// twenty thousand times over tokenizes on a thread with a 1 MiB stack.
    #[test]
    fn repeated_markup_fits_a_small_stack() {
        let patterns = [
            "<a b=\"c\" ",
            "a=\"\" ",
            "<a b\"c=\"d\" ",
            "=\"",
            "\"",
            "<a ",
            "<a b='c' ",
            "<a b=c ",
            " b=\"&\" ",
            "<p\t=\"x\"",
            "</a ",
            "</",
            "<a/",
            "<!--",
            "<!-- -- ",
            "&amp;",
            "&#x41;",
            "<![CDATA[",
            "<svg><![CDATA[x]]>",
            "<!DOCTYPE a PUBLIC \"x\" ",
            "<script><!--<script>",
        ];
        for pattern in patterns {
            let html = pattern.repeat(20_000);
            let tokenized = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || tokens_of(&html).last().cloned())
                .expect("thread")
                .join();
            assert_eq!(
                tokenized.ok().flatten().as_deref(),
                Some("EOF"),
                "{pattern:?}"
            );
        }
    }
}
