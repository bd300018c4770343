//! Building a model's pan: `spin -a`, the packing of its states, the C compiler (tcc for a
//! quick build, cc -O2 for an optimised one), in a build directory renamed into the cache
//! when done.

use super::*;

impl Engine {
    /// The pan of `model` built as `build`: from this engine's directory if it is there,
    /// else built now (once, however many threads ask).
    pub(super) fn pan(&self, model: &str, build: Build, timings: &mut Timings) -> Result<PathBuf, Inconclusive> {
        let key = self.key(model, build);
        let cell = {
            let mut builds = self.builds.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(builds.entry(key.clone()).or_default())
        };
        cell.get_or_init(|| {
            let dir = self.root.join(&key);
            if dir.join("pan").is_file() {
                crate::cache::touch(&dir);
                return Ok(dir);
            }
            self.build(model, build, &dir, timings)
        })
        .clone()
    }

    /// The directory name of `model`'s pan built as `build`.
    pub(super) fn key(&self, model: &str, build: Build) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.salt.as_bytes());
        hasher.update(
            format!(
                "\n{}\n{}\n{}\n{}\n",
                build.vector, build.optimised, build.reach, build.random
            )
            .as_bytes(),
        );
        hasher.update(model.as_bytes());
        hasher.finalize().to_hex()[..32].to_string()
    }

    /// Whether `model`'s pan built as `build` is there already (this run or the cache).
    pub(super) fn is_built(&self, model: &str, build: Build) -> bool {
        self.root.join(self.key(model, build)).join("pan").is_file()
    }

    /// `spin -a` on the model in `work`: the files it wrote (`pan.c` with its stored states
    /// packed, `pan.h`, ...), to compile as any build.
    pub(super) fn generate(&self, work: &Path) -> Result<Vec<(std::ffi::OsString, Vec<u8>)>, Inconclusive> {
        let io = |e: std::io::Error| Inconclusive::EngineError(format!("cannot read what spin -a wrote: {e}"));
        let mut spin = Command::new(&self.tools.spin);
        // Temporary files of spin's preprocessor stay in the run's directory, which is removed
        // even when the run is killed.
        spin.arg("-a").arg(MODEL_FILE).current_dir(work).env("TMPDIR", work);
        run_step(spin, self.options.build_time_limit, "spin -a")?;
        let mut files = Vec::new();
        for entry in std::fs::read_dir(work).map_err(io)?.flatten() {
            let name = entry.file_name();
            if name == MODEL_FILE || !entry.path().is_file() {
                continue;
            }
            let mut bytes = std::fs::read(entry.path()).map_err(io)?;
            // Stored states packed (packing.rs): the same search in a third of the memory.
            if name == "pan.c" {
                match std::str::from_utf8(&bytes).ok().and_then(packing::pack_states) {
                    Some(packed) => bytes = packed.into_bytes(),
                    None => {
                        tracing::info!("this SPIN's pan.c is not the one kivi-lint packs: its states are stored whole")
                    }
                }
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    bytes = packing::portable_rand(text).into_bytes();
                }
            }
            files.push((name, bytes));
        }
        files.sort();
        Ok(files)
    }

    pub(super) fn build(
        &self,
        model: &str,
        build: Build,
        dir: &Path,
        timings: &mut Timings,
    ) -> Result<PathBuf, Inconclusive> {
        let io = |e: std::io::Error| Inconclusive::EngineError(format!("cannot prepare a build directory: {e}"));
        // Build beside the final place and rename: another kivi-lint sharing the cache never
        // sees half a build.
        let work = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(&self.root)
            .map_err(io)?;
        std::fs::write(work.path().join(MODEL_FILE), model).map_err(io)?;
        let cell = {
            let mut generated = self.generated.lock().unwrap_or_else(|e| e.into_inner());
            let key = blake3::hash(model.as_bytes()).to_hex().to_string();
            if !generated.cells.contains_key(&key) {
                generated.order.push_back(key.clone());
                if generated.order.len() > GENERATED_KEPT
                    && let Some(old) = generated.order.pop_front()
                {
                    generated.cells.remove(&old);
                }
            }
            Arc::clone(generated.cells.entry(key).or_default())
        };
        let files = cell
            .get_or_init(|| {
                let started = Instant::now();
                let generated = self.generate(work.path());
                timings.spin += started.elapsed();
                generated.map(Arc::new)
            })
            .clone()?;
        for (name, bytes) in files.iter() {
            std::fs::write(work.path().join(name), bytes).map_err(io)?;
        }
        let started = Instant::now();
        let compiled = compile(&self.tools, work.path(), &self.options, build);
        timings.compile += started.elapsed();
        compiled?;
        // Keep the model (to read) and pan; the generated C is large and rebuilt at will.
        for entry in std::fs::read_dir(work.path()).map_err(io)?.flatten() {
            let name = entry.file_name();
            if name != "pan" && name != MODEL_FILE {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let work = work.keep();
        if std::fs::rename(&work, dir).is_err() {
            // Someone else finished the same build first: theirs is as good.
            let _ = std::fs::remove_dir_all(&work);
            if !dir.join("pan").is_file() {
                return Err(Inconclusive::EngineError(format!(
                    "cannot store the built pan in {}",
                    dir.display()
                )));
            }
        }
        Ok(dir.to_path_buf())
    }
}

/// Build directories a killed kivi-lint left in the cache (`.build-*`, renamed into place
/// when done): one older than a build can take is nobody's any more.
pub(super) fn remove_stale_builds(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(3600)));
        if entry.file_name().to_string_lossy().starts_with(".build-") && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

pub(super) fn first_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Run a build step; a failure is an engine error with the tool's own words.
pub(super) fn run_step(command: Command, limit: Duration, what: &str) -> Result<process::Finished, Inconclusive> {
    match process::run(command, limit) {
        Ok(f) if f.success => Ok(f),
        Ok(f) => Err(Inconclusive::EngineError(format!(
            "{what} failed ({}): {}",
            f.code
                .map_or_else(|| format!("signal {}", f.signal.unwrap_or(0)), |c| format!("exit {c}")),
            first_lines(&format!("{}\n{}", f.stdout, f.stderr))
        ))),
        Err(RunError::TimedOut { limit, .. }) => Err(Inconclusive::TimeLimit(limit)),
        // Ctrl-C, SIGTERM or --timeout stopped the build: the run was cancelled, nothing failed.
        Err(RunError::Cancelled { .. }) => Err(Inconclusive::Cancelled),
        Err(e) => Err(Inconclusive::EngineError(e.to_string())),
    }
}

pub(super) fn compile(tools: &Tools, dir: &Path, options: &Options, build: Build) -> Result<(), Inconclusive> {
    // The quick build with tcc when there is one; should it fail, `cc -O0` builds it.
    if let Some(quick) = tools.quick_cc.as_ref().filter(|_| !build.optimised)
        && run_step(
            compile_command(quick, None, dir, options, build),
            options.build_time_limit,
            "tcc",
        )
        .is_ok()
    {
        return Ok(());
    }
    let level = if build.optimised { "-O2" } else { "-O0" };
    let mut cc = compile_command(&tools.cc, Some(level), dir, options, build);
    // Two of gcc's -O2 passes cost a quarter of the compile of a large pan (demo-shop's: 5.7 s
    // to 4.2 s) and buy its search nothing (2.95 s a run with them, 2.8 s without).
    if build.optimised && !tools.versions.contains("clang") {
        cc.args(["-fno-gcse", "-fno-schedule-insns2"]);
    }
    run_step(cc, options.build_time_limit, "compiling pan").map(|_| ())
}

/// `<compiler> [level] -w -o pan pan.c` with pan's options for `build`.
pub(super) fn compile_command(
    compiler: &Path,
    level: Option<&str>,
    dir: &Path,
    options: &Options,
    build: Build,
) -> Command {
    let mut cc = Command::new(compiler);
    // gcc's own temporary files (cc1's assembly, as's objects) go to the build directory: a
    // compile killed by Ctrl-C or a cancelled job leaves nothing in the user's TMPDIR.
    cc.current_dir(dir).env("TMPDIR", dir);
    cc.args(level);
    cc.args(["-w", "-o", "pan", "pan.c"]);
    cc.arg(format!("-DMEMLIM={}", options.memory_mb))
        .arg(format!("-DVECTORSZ={}", build.vector));
    if build.random {
        cc.args(["-DBITSTATE", "-DT_RAND", "-DP_RAND"]);
    }
    match options.search {
        Search::Safety { .. } => {
            cc.arg("-DSAFETY");
            if build.reach {
                cc.arg("-DREACH");
            }
        }
        Search::NonProgress => {
            cc.arg("-DNP");
        }
    }
    cc
}
