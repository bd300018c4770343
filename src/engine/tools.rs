//! The programs the engine runs, found once: SPIN, the C compiler and the quick one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use thiserror::Error;

use crate::process;

/// The programs the engine runs.
#[derive(Clone, Debug)]
pub struct Tools {
    pub spin: PathBuf,
    pub cc: PathBuf,
    /// A compiler for the quick, unoptimised build most models need and nothing more: the Tiny
    /// C Compiler translates a pan in a twentieth of `cc -O0`'s time, and its pan runs about
    /// as fast. `None`: the quick build is `cc -O0`.
    pub quick_cc: Option<PathBuf>,
    /// What `spin -V` and the compilers' `--version` (`-v`) say: part of every cache key, so
    /// an upgraded SPIN or compiler never reuses what the old one built or decided.
    pub versions: String,
}

#[derive(Debug, Error)]
pub enum EngineError {
    #[error(
        "`spin` is not on PATH: install SPIN (Debian and Ubuntu: `apt-get install spin`; macOS: `brew install spin`), or set KIVI_SPIN"
    )]
    MissingSpin,
    #[error(
        "no C compiler on PATH (`cc` or `gcc`): install one (Debian and Ubuntu: `apt-get install gcc`; macOS: `xcode-select --install`), or set KIVI_CC"
    )]
    MissingCompiler,
    #[error("cannot prepare a work directory: {0}")]
    Io(#[from] std::io::Error),
}

impl Tools {
    /// Find `spin`, a C compiler and `tcc` (`KIVI_SPIN`, `KIVI_CC` and `KIVI_QUICK_CC`
    /// override the PATH lookup; `KIVI_QUICK_CC=none` makes the quick build `cc -O0`).
    pub fn find() -> Result<Tools, EngineError> {
        let lookup = |var: &str, names: &[&str]| -> Option<PathBuf> {
            if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
                // An override must name a program; a wrong one is as good as none.
                return which::which(&p).ok();
            }
            names.iter().find_map(|n| which::which(n).ok())
        };
        let spin = lookup("KIVI_SPIN", &["spin"]).ok_or(EngineError::MissingSpin)?;
        let cc = lookup("KIVI_CC", &["cc", "gcc"]).ok_or(EngineError::MissingCompiler)?;
        let quick_cc = match std::env::var_os("KIVI_QUICK_CC") {
            Some(v) if v == "none" => None,
            _ => lookup("KIVI_QUICK_CC", &["tcc"]),
        };
        let mut versions = format!("{}\n{}", version_of(&spin, "-V"), version_of(&cc, "--version"));
        if let Some(quick) = &quick_cc {
            versions.push('\n');
            versions.push_str(&version_of(quick, "-v"));
        }
        Ok(Tools {
            spin,
            cc,
            quick_cc,
            versions,
        })
    }
}

/// The first line a tool prints about its version (empty when it cannot be run).
fn version_of(tool: &Path, flag: &str) -> String {
    let mut command = Command::new(tool);
    command.arg(flag);
    process::run(command, Duration::from_secs(10))
        .map(|f| {
            format!("{}{}", f.stdout, f.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}
