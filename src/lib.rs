//! kivi-lint: verify Kubernetes configurations in GitOps repositories by model checking.
//!
//! Pipeline, one module per stage:
//! discover → manifest → config → units → model → engine → scaling → findings → report.

pub mod diagnostics;
pub mod manifest;
pub mod source;
pub mod yaml;
