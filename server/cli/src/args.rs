//! The command line, as clap derive types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "shapels", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// Log level for messages on stderr: error, warn, info, debug, trace, or
    /// a tracing filter such as `shapels_lsp=debug`. Overrides `SHAPELS_LOG`.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub(crate) log_level: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the language server on stdin/stdout.
    Lsp,
    /// Check files and directories for shape and device errors.
    Check(CheckArgs),
    /// Print a file with the shape of each tensor written in after its name.
    Hints(HintsArgs),
    /// Print a model's layers, output shapes and parameter counts, as
    /// torchinfo does, without running it.
    Summary(SummaryArgs),
}

#[derive(Debug, Args)]
pub(crate) struct SummaryArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub(crate) format: SummaryFormat,

    /// The input's sizes, comma-separated (`16,3,224,224`); without it, the
    /// input a call in the file gives, else one made up from the signature.
    #[arg(long, value_name = "SIZES", value_parser = parse_sizes)]
    pub(crate) input: Option<Sizes>,

    #[command(flatten)]
    pub(crate) config: ConfigArgs,

    /// The Python file, optionally with the class to summarise
    /// (`model.py:GPT`); without a class, the model the file calls, else
    /// its last module class.
    #[arg(value_name = "FILE[:CLASS]")]
    pub(crate) target: String,
}

/// Sizes given on the command line.
#[derive(Debug, Clone)]
pub(crate) struct Sizes(pub(crate) Vec<i64>);

fn parse_sizes(text: &str) -> Result<Sizes, String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            match part.parse::<i64>() {
                Ok(n) if n >= 0 => Ok(n),
                _ => Err(format!(
                    "`{part}` is not a size (a whole number, 0 or more)"
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Sizes)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SummaryFormat {
    /// Aligned columns, as torchinfo prints them.
    Text,
    /// One JSON object (see the README).
    Json,
    /// A Markdown table.
    Markdown,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    #[command(flatten)]
    pub(crate) config: ConfigArgs,

    /// Python files, or directories to search for `*.py` files (honouring `.gitignore`).
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct HintsArgs {
    /// How much each hint says.
    #[arg(long, value_enum, default_value_t = Detail::Shape)]
    pub(crate) detail: Detail,

    #[command(flatten)]
    pub(crate) config: ConfigArgs,

    /// The Python file, or `-` for stdin.
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
}

/// Where the fake-mode flags come from, shared by `check` and `hints`.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// Read settings from this file instead of the nearest `pyproject.toml`
    /// (`[tool.shapels]` of a pyproject, the top-level keys of any other TOML file).
    #[arg(long, value_name = "FILE")]
    pub(crate) config_file: Option<PathBuf>,

    /// Treat real tensors meeting the analysis' fake ones as fake (the
    /// default); `--allow-non-fake-inputs=false` reports them (the strict view).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub(crate) allow_non_fake_inputs: Option<bool>,

    /// Report ops that have no shape rule instead of treating their result as unknown.
    #[arg(long)]
    pub(crate) no_fallback_kernels: bool,

    /// Specialise every size that a call site makes concrete.
    #[arg(long)]
    pub(crate) static_shapes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// `path:line:col: error[code] message`, one per line.
    Text,
    /// The stable JSON document described in the README.
    Json,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Detail {
    /// `: [8, 128]`
    Shape,
    /// `: [8, 128] float32 cpu`
    Full,
}
