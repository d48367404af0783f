//! Content-Type selection and sniffing (FR-WF-10f, CT-01, 10g, 10h, 10h1).
