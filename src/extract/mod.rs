//! HTML to Markdown extraction (SRD 3.5.1).
