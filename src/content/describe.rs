//! What the extension formats read, in words for a model: the MCP
//! tool's description says which formats this server reads, their limits and
//! the `details.reason` of each error.

use crate::config::ContentSettings;
use crate::vocabulary::Format;

/// One sentence per enabled format, or `""` when none is (the SRD's answers).
pub(crate) fn formats_description(content: &ContentSettings) -> String {
    let formats = content.formats;
    if formats.is_empty() {
        return String::new();
    }
    let mut parts: Vec<String> = Vec::new();
    if formats.contains(Format::Pdf) {
        parts.push(format!(
            "PDFs (the text layer in reading order, two-column pages included, with page \
             headers, footers and page numbers dropped, headings kept, tables set in aligned \
             columns as Markdown tables and chunks ending at page breaks where they can; at \
             most {} MiB and \
             {} pages, the rest noted pdf_page_limit; a scan without text fails with \
             extraction_failed and details.reason pdf_no_text_layer, a password-protected \
             file with pdf_encrypted, a damaged one with pdf_malformed, one asking for more \
             than the reader allows with pdf_resource_limit or pdf_reader_crashed)",
            content.max_pdf_bytes >> 20,
            content.max_pdf_pages
        ));
    }
    if formats.contains(Format::Markdown) {
        parts.push(
            "the site's own Markdown when it publishes one (asked for first; the result is \
             noted publisher_markdown; HTML comments, scripts, hidden elements and links \
             other than http(s) and mailto are dropped from it, noted \
             publisher_markdown_sanitized)"
                .to_owned(),
        );
    }
    if formats.contains(Format::Json) {
        parts.push(
            "JSON (pretty-printed in a json code block; invalid JSON fails with \
             details.reason json_malformed)"
                .to_owned(),
        );
    }
    if formats.contains(Format::Feed) {
        parts.push(
            "RSS and Atom feeds (the feed's title, then each entry's title, link, date and \
             summary as a list; a broken feed fails with details.reason feed_malformed)"
                .to_owned(),
        );
    }
    format!(
        " Besides HTML and plain text it reads {}.",
        join_with_and(&parts)
    )
}

fn join_with_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}; and {last}", rest.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Formats;

    #[test]
    fn names_each_enabled_format_and_its_reasons() {
        let mut content = ContentSettings::default();
        assert_eq!(formats_description(&content), "");
        content.formats = Formats::ALL;
        let text = formats_description(&content);
        for needle in [
            "PDFs",
            "Markdown tables",
            "32 MiB and 1000 pages",
            "pdf_no_text_layer",
            "pdf_encrypted",
            "pdf_malformed",
            "pdf_resource_limit",
            "pdf_reader_crashed",
            "publisher_markdown",
            "json_malformed",
            "feed_malformed",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        content.formats = Formats::NONE.with(Format::Json);
        let json_only = formats_description(&content);
        assert!(
            json_only.contains("JSON") && !json_only.contains("PDF"),
            "{json_only}"
        );
    }
}
