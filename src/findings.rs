//! Findings: violations with counterexamples mapped to manifest lines. Not yet implemented.
