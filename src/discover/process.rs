//! Running a renderer (kustomize, helm) with a time limit, killing its whole process group.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

pub struct Finished {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Run `command` to completion or until `timeout`. Output goes to temporary files, so a
/// renderer that writes a lot cannot block on a full pipe while we wait.
pub fn run(mut command: Command, timeout: Duration) -> Result<Finished, String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let mut out = tempfile::tempfile().map_err(|e| format!("cannot create a temporary file: {e}"))?;
    let mut err = tempfile::tempfile().map_err(|e| format!("cannot create a temporary file: {e}"))?;
    command
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(|e| e.to_string())?)
        .stderr(err.try_clone().map_err(|e| e.to_string())?)
        .process_group(0);
    let mut child = command.spawn().map_err(|e| format!("cannot run `{program}`: {e}"))?;
    let status = match child.wait_timeout(timeout).map_err(|e| e.to_string())? {
        Some(status) => status,
        None => {
            kill_group(child.id());
            let _ = child.wait();
            return Err(format!(
                "`{program}` did not finish within {} s and was stopped",
                timeout.as_secs()
            ));
        }
    };
    Ok(Finished {
        success: status.success(),
        stdout: read_all(&mut out),
        stderr: read_all(&mut err),
    })
}

fn read_all(file: &mut File) -> String {
    use std::io::Seek;
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn kill_group(pid: u32) {
    // The child leads its own group (process_group(0)), so its pid is the group id.
    let _ = Command::new("kill").arg("-KILL").arg(format!("-{pid}")).status();
}
