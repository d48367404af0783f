//! Token counting with cl100k_base (FR-WF-14).
