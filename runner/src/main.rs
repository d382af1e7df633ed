//! `benchtrail`: parses the command line, runs the command, maps the outcome to the exit
//! status: 0 on success (and for `--help`/`--version`), 2 on any error, and for `compare`,
//! `check` and `run` the verdict's (1 fail, 3 incomplete). An error is one `error: ...` line
//! on stderr and, when the command line asks for JSON output, also a JSON object on stdout
//! ([`benchtrail_runner::errors`]).

use benchtrail_runner::cli::Cli;
use benchtrail_runner::document::Environment;
use benchtrail_runner::errors::{argv_wants_json, error_json, usage_json, wants_json};
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
            if !e.use_stderr() {
                return ExitCode::from(EXIT_OK);
            }
            let argv: Vec<String> = std::env::args().collect();
            if argv_wants_json(&argv) {
                println!("{}", usage_json(&e.render().to_string()));
            }
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let json = wants_json(&cli);
    let outcome = Environment::current().and_then(|env| {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr());
        commands::run(cli, &env, &mut out, &mut err)
    });
    match outcome {
        Ok(()) => ExitCode::from(EXIT_OK),
        // A verdict that fails: its exit status, the report already printed.
        Err(e) if e.downcast_ref::<ExitWith>().is_some() => {
            ExitCode::from(e.downcast_ref::<ExitWith>().map_or(EXIT_ERROR, |x| x.0))
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            if json {
                println!("{}", error_json(&e));
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}
