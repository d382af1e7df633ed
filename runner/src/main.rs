//! `benchtrail`: parses the command line, runs the command, maps the outcome to the exit
//! status: 0 on success (and for `--help`/`--version`), 2 on any error, and for `compare` the
//! verdict's (1 fail, 3 incomplete).

use benchtrail_runner::cli::Cli;
use benchtrail_runner::document::Environment;
use benchtrail_runner::report::ExitWith;
use benchtrail_runner::{commands, EXIT_ERROR, EXIT_OK};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are printed to stdout and are not errors.
            return ExitCode::from(if e.use_stderr() { EXIT_ERROR } else { EXIT_OK });
        }
    };
    let outcome = Environment::current().and_then(|env| {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
        commands::run(cli, &env, &mut out, &mut err)
    });
    match outcome {
        Ok(()) => ExitCode::from(EXIT_OK),
        // A verdict that fails (`compare`): its exit status, the report already printed.
        Err(e) if e.downcast_ref::<ExitWith>().is_some() => {
            ExitCode::from(e.downcast_ref::<ExitWith>().map_or(EXIT_ERROR, |x| x.0))
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
