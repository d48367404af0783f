//! Charset selection and decoding (FR-WF-10i, CHARSET-01..04).
