//! kivi-lint: verify Kubernetes configurations in GitOps repositories by model checking.
//!
//! Pipeline, one module per stage, in the order a scan runs them:
//! config → discover → manifest → scopes → units → model → engine → search → findings → report.
//! The config comes first: it names what discovery reads (includes, Helm values, the network)
//! and the cluster the units are checked on. `analysis` runs the stages up to units; `run` the
//! whole scan after the arguments (analysis, the selection of units, verification through one
//! `search::Verifier`, fixes); `cli` is the command line around it. `search` (Kivi's
//! incremental scaling) returns raw runs; `findings` tells them as verdicts and finds fixes;
//! `report` is a projection of both.

pub mod analysis;
pub mod cache;
pub mod changes;
pub mod checks;
pub mod cli;
pub mod config;
pub mod diagnostics;
pub mod discover;
pub mod engine;
pub mod events;
pub mod findings;
pub mod manifest;
pub mod model;
pub mod process;
pub mod progress;
pub mod report;
pub mod run;
pub mod scopes;
pub mod search;
pub mod source;
pub mod trace;
pub mod units;
pub mod yaml;
