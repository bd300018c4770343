use std::process::ExitCode;

fn main() -> ExitCode {
    match kivi_lint::cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(kivi_lint::cli::exit::INPUT_ERROR)
        }
    }
}
