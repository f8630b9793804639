//! `shapels summary`: a model's layers, output shapes and parameter counts,
//! as torchinfo prints them, from the code alone.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use shapels_analysis::{Count, ModelSummary, SummaryTarget};

use crate::args::{SummaryArgs, SummaryFormat};
use crate::settings::{Problems, Resolver};
use crate::source::{Source, read_source};

pub(crate) fn run(args: &SummaryArgs) -> ExitCode {
    let mut problems = Problems::default();
    let Some(mut resolver) = Resolver::new(&args.config, &mut problems) else {
        return ExitCode::from(2);
    };
    let (file, target) = split_target(&args.target);
    let source = match read_source(&file) {
        Ok(Source::Text(source)) => source,
        Ok(Source::TooLarge(message)) | Err(message) => {
            problems.error(message);
            return ExitCode::from(2);
        }
    };
    let config = resolver.config_for(&file, &mut problems);
    let roots = crate::check::search_roots(std::slice::from_ref(&file));
    let search = crate::check::search_path(&file, &config, &roots);
    let absolute = std::path::absolute(&file).unwrap_or_else(|_| file.clone());
    let input = args.input.as_ref().map(|s| s.0.as_slice());
    let summary = shapels_lsp::guarded::summarize_in_workspace(
        &absolute,
        &source,
        &config.analysis,
        &search,
        &shapels_lsp::files::DiskFiles,
        &target,
        input,
    );
    let summary = match summary {
        None => {
            problems.error(format!(
                "{}: internal error: the analysis failed on this file (please report it)",
                file.display()
            ));
            return ExitCode::from(2);
        }
        Some(None) => {
            problems.error(match &target {
                SummaryTarget::Class(name) => {
                    format!("{}: no module class `{name}` in this file", file.display())
                }
                _ => format!("{}: no module to summarise in this file", file.display()),
            });
            return ExitCode::from(2);
        }
        Some(Some(summary)) => summary,
    };
    let text = match args.format {
        SummaryFormat::Text => summary.to_text(),
        SummaryFormat::Markdown => summary.to_markdown(),
        SummaryFormat::Json => format!("{}\n", to_json(&summary)),
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            problems.error(format!("cannot write the summary: {err}"));
            ExitCode::from(2)
        }
    }
}

/// `model.py:GPT` is the file and a class; a path that exists as written
/// is a file, whatever colons it has.
fn split_target(target: &str) -> (PathBuf, SummaryTarget) {
    if !Path::new(target).exists()
        && let Some((file, class)) = target.rsplit_once(':')
        && !class.is_empty()
        && class.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return (PathBuf::from(file), SummaryTarget::Class(class.to_string()));
    }
    (PathBuf::from(target), SummaryTarget::Model)
}

fn count(c: &Count) -> Value {
    match c.value {
        Some(n) => json!(n),
        None => json!(c.text),
    }
}

/// The JSON document of `--format json`: counts are numbers when known,
/// expressions (`"3*n_embd**2 + 3*n_embd"`) or `"?"` otherwise.
fn to_json(s: &ModelSummary) -> Value {
    json!({
        "version": 1,
        "model": s.model,
        "input": s.input,
        "input_from_code": s.input_from_code,
        "layers": s.rows.iter().map(|r| json!({
            "depth": r.depth,
            "name": r.name,
            "layer": r.layer,
            "output": r.output,
            "calls": r.calls,
            "params": count(&r.params),
            "frozen": r.frozen,
        })).collect::<Vec<_>>(),
        "total_params": count(&s.total_params),
        "trainable_params": count(&s.trainable_params),
        "non_trainable_params": count(&s.frozen_params),
        "param_bytes": s.param_bytes.iter().map(|b| json!({
            "dtype": b.dtype,
            "bytes": count(&b.bytes),
        })).collect::<Vec<_>>(),
        "activation_bytes": count(&s.activation_bytes),
        "torchinfo_pass_bytes": count(&s.torchinfo_pass_bytes),
        "notes": s.notes,
    })
}
