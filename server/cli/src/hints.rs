//! `shapels hints`: the file with each tensor's shape written in after its name.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use shapels_analysis::{Code, HintDetail};
use shapels_lsp::guarded;

use crate::args::{Detail, HintsArgs};
use crate::settings::{Problems, Resolver};
use crate::source::{Source, read_source, read_stdin};
use crate::walk;

pub(crate) fn run(args: &HintsArgs) -> ExitCode {
    let mut problems = Problems::default();
    let Some(mut resolver) = Resolver::new(&args.config, &mut problems) else {
        return ExitCode::from(2);
    };
    let from_stdin = args.file == Path::new("-");
    if !from_stdin
        && let Some(problem) = std::fs::metadata(&args.file)
            .ok()
            .and_then(|meta| walk::not_python(&args.file, &meta))
    {
        problems.error(problem);
        return ExitCode::from(2);
    }
    let source = if from_stdin {
        read_stdin()
    } else {
        read_source(&args.file)
    };
    let source = match source {
        Ok(Source::Text(source)) => source,
        Ok(Source::TooLarge(message)) | Err(message) => {
            problems.error(message);
            return ExitCode::from(2);
        }
    };
    // Settings for stdin come from the current directory's project.
    let config_path = if from_stdin {
        Path::new("./-")
    } else {
        args.file.as_path()
    };
    let config = resolver.config_for(config_path, &mut problems);
    // The analysis runs on this thread: where the system allows, with the
    // stack an analysis thread gets (see `main_stack`).
    let _ = crate::main_stack::main_thread_fits_analysis();
    let analysis = if from_stdin {
        guarded::analyze("<stdin>", &source, &config.analysis)
    } else {
        let roots = crate::check::search_roots(std::slice::from_ref(&args.file));
        let search = crate::check::search_path(&args.file, &config, &roots);
        let absolute = std::path::absolute(&args.file).unwrap_or_else(|_| args.file.clone());
        guarded::analyze_in_workspace(
            &absolute,
            &source,
            &config.analysis,
            &search,
            &shapels_lsp::files::DiskFiles,
            shapels_syntax::parse_on_two_threads,
        )
    };
    let Some(analysis) = analysis else {
        problems.error(format!(
            "{}: internal error: the analysis failed on this file (please report it)",
            args.file.display()
        ));
        return ExitCode::from(2);
    };
    let detail = match args.detail {
        Detail::Shape => HintDetail::Shape,
        Detail::Full => HintDetail::Full,
    };
    // The file is printed all the same, but its shapes after a syntax error
    // may be missing, which a reader of the output could not tell.
    let syntax_errors: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::SyntaxError)
        .collect();
    if let Some(first) = syntax_errors.first() {
        let line = source.as_bytes()[..first.range.start.min(source.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        problems.warning(format!(
            "{}: {} syntax error{}, the first on line {line}: the shapes after it may be incomplete",
            args.file.display(),
            syntax_errors.len(),
            if syntax_errors.len() == 1 { "" } else { "s" }
        ));
    }
    let hints = shapels_analysis::inlay_hints(&analysis, None, detail);
    let annotated = annotate(&source, hints.iter().map(|h| (h.offset, h.label.as_str())));
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(annotated.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            problems.error(format!("cannot write the output: {err}"));
        }
        _ => {}
    }
    if problems.any() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// `source` with each label inserted at its byte offset. Offsets must be
/// sorted; one that is out of range or not on a char boundary is skipped
/// rather than allowed to split a character.
fn annotate<'a>(source: &str, hints: impl IntoIterator<Item = (usize, &'a str)>) -> String {
    let mut out = String::with_capacity(source.len() + source.len() / 4);
    let mut copied = 0;
    for (offset, label) in hints {
        if offset < copied || !source.is_char_boundary(offset) {
            tracing::warn!("skipping a hint at byte {offset}: not a valid position");
            continue;
        }
        out.push_str(&source[copied..offset]);
        out.push_str(label);
        copied = offset;
    }
    out.push_str(&source[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::annotate;

    #[test]
    fn labels_go_after_names() {
        let source = "x = torch.randn(8, 128)\ny, z = f()\n";
        let y = source.find('y').unwrap() + 1;
        let z = source.find('z').unwrap() + 1;
        let out = annotate(source, [(1, ": [8, 128]"), (y, ": [2]"), (z, ": [?]")]);
        assert_eq!(
            out,
            "x: [8, 128] = torch.randn(8, 128)\ny: [2], z: [?] = f()\n"
        );
    }

    #[test]
    fn bad_offsets_are_skipped() {
        assert_eq!(annotate("é = 1", [(1, "!"), (99, "?")]), "é = 1");
    }
}
