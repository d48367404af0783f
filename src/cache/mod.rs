//! The on-disk cache of extracted documents (SRD 3.6).
