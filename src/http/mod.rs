//! The pinned-IP HTTP client: redirects, budgets, size caps and status mapping (SRD 3.2.4, 3.2.5, 3.4.1).
