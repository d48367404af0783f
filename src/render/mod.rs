//! Rendering selection and browser mode (SRD 3.4.3 .. 3.4.6).
