//! robots.txt: the SRD's RFC 9309 variant, its origin cache and fetch policy (SRD 3.3).
