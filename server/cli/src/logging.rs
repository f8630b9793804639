//! Logging to stderr through `tracing`, filtered by `--log-level` or `SHAPELS_LOG`.
//!
//! Panics are logged the same way, so that a bug caught by the server (which
//! keeps running) shows up in the editor's log with the rest of its output.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The environment variable holding a tracing filter, used when `--log-level` is absent.
const ENV_VAR: &str = "SHAPELS_LOG";

pub(crate) fn init(flag: Option<&str>, default: &str) {
    let (directive, source) = match (flag, std::env::var(ENV_VAR)) {
        (Some(flag), _) => (flag.to_string(), "--log-level"),
        (None, Ok(env)) if !env.trim().is_empty() => (env, ENV_VAR),
        _ => (default.to_string(), "default"),
    };
    let (filter, bad_directive) = match EnvFilter::try_new(&directive) {
        Ok(filter) => (filter, None),
        Err(err) => (EnvFilter::new(default), Some(err)),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    std::panic::set_hook(Box::new(|info| {
        let backtrace = std::backtrace::Backtrace::capture();
        match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => tracing::error!("{info}\n{backtrace}"),
            _ => tracing::error!("{info}"),
        }
    }));
    if let Some(err) = bad_directive {
        tracing::warn!("ignoring the log filter {directive:?} from {source}: {err}");
    }
}
