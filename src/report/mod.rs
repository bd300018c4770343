//! Reports: one emitter per output format. Stdout carries only the chosen report.

pub mod human;
pub mod json;

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people (default).
    Human,
    /// The documented JSON schema (see README, "JSON output").
    Json,
}
