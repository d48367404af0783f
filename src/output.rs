//! The response, its canonical JSON and output fitting (SRD 3.1, FR-WF-OUT-01).
