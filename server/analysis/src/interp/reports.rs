//! How the interpreter reports a problem: once per place, with related places, and, for another file's code, at the call in this file that reached it.

use shapels_syntax::ast::TextRange;

use super::{Interp, ranges_overlap};
use crate::code::Code;
use crate::report::{Diagnostic, Severity};
use crate::rules::meta::Meta;

impl Interp<'_> {
    /// Report a problem once per (range, code, message), with the code's
    /// default severity.
    pub fn report(&mut self, range: TextRange, code: Code, message: String) {
        self.report_as(range, code.severity(), code, message, Vec::new());
    }

    /// `report` with related places (where an operand came from).
    pub fn report_related(
        &mut self,
        range: TextRange,
        code: Code,
        message: String,
        related: Vec<(TextRange, String)>,
    ) {
        self.report_as(range, code.severity(), code, message, related);
    }

    /// `report_related` with a severity other than the code's default
    /// (one of `code.severities()`).
    pub fn report_as(
        &mut self,
        range: TextRange,
        severity: Severity,
        code: Code,
        message: String,
        related: Vec<(TextRange, String)>,
    ) {
        self.report_with_fixes(range, severity, code, message, related, Vec::new());
    }

    /// `report_as` with quick fixes: edits of this file that would make
    /// the problem go away (dropped when the problem is in another file).
    pub fn report_with_fixes(
        &mut self,
        range: TextRange,
        severity: Severity,
        code: Code,
        message: String,
        mut related: Vec<(TextRange, String)>,
        fixes: Vec<crate::report::Fix>,
    ) {
        debug_assert!(
            code.severities().contains(&severity),
            "{code} as {severity:?}"
        );
        self.reports += 1;
        // Taken whether or not this report is kept: an offer is for this
        // report only.
        let mut fixes = fixes;
        fixes.extend(self.take_fixes(code));
        // A failed op assumed nothing: the guards its statement recorded
        // must not show on other values' hovers.
        if severity == Severity::Error {
            self.env.void_guards_since(self.stmt_guards);
        }
        // After torch raised, the function's remaining code does not run:
        // what it would meet there is no second bug.
        if self.frames.iter().any(|f| f.raised) || self.alternatives.iter().any(|a| a.raised) {
            return;
        }
        if severity == Severity::Error {
            self.raise_on_path();
        }
        if self.op_on_made_up_sizes() {
            return;
        }
        if !crate::workspace::is_local(&range) {
            self.report_elsewhere(range, severity, code, message, related);
            return;
        }
        let (mut severity, mut message) = (severity, message);
        // Torch raises on every path only when no undecided condition led here.
        if severity == Severity::Error && self.uncertain > 0 {
            severity = Severity::Warning;
            message.push_str(" (on the paths where a condition the analysis cannot decide holds)");
        }
        // An error inside a user function is the call site's problem too:
        // point there, and report it there, as a traceback would.
        let outer = self.call_sites.first().cloned();
        if let Some(call) = outer.filter(|c| !ranges_overlap(c, &range)) {
            related.push((call, "raised in the call made here".to_string()));
        }
        if self
            .diagnostics
            .iter()
            .any(|d| d.range == range && d.code == code && d.message == message)
        {
            return;
        }
        // One bug is one report, where torch raises (the innermost frame
        // of its traceback, where the code must change or where the input
        // is refused), with the call that led there as related
        // information; not a second report at the call. A callee in
        // another file is reported at the call instead (`report_elsewhere`):
        // that file is not the one being looked at.
        self.diagnostics.push(Diagnostic {
            range,
            severity,
            code,
            message,
            related: self.related(related),
            fixes,
        });
    }

    /// Torch raised here on every path: the exception leaves every
    /// function up to the module's code (which the analysis keeps running,
    /// as each statement of a script is worth checking).
    pub(super) fn mark_raised(&mut self) {
        for frame in self.frames.iter_mut().rev() {
            if frame.is_module {
                break;
            }
            if frame.function.is_some() {
                frame.raised = true;
            }
        }
    }

    /// Related places as the result gives them: those in imported files
    /// with their file, and offsets into its text.
    fn related(&self, related: Vec<(TextRange, String)>) -> Vec<crate::report::Related> {
        related
            .into_iter()
            .map(|(range, message)| {
                let file = crate::workspace::file_of(range.start);
                match self.modules.module(file).filter(|_| file != 0) {
                    Some(m) => crate::report::Related {
                        range: TextRange::new(
                            range.start - m.base(),
                            range.end.saturating_sub(m.base()),
                        ),
                        message,
                        file: Some(std::sync::Arc::new(crate::report::OtherFile {
                            path: m.path.clone(),
                            text: m.text.clone(),
                        })),
                    },
                    None => crate::report::Related::here(range, message),
                }
            })
            .collect()
    }

    /// A problem in another file's code, met through a call (or an
    /// import) this file makes: reported at the innermost call site in
    /// this file, as the traceback's frame in the file the user is looking
    /// at, with the place in the other file as related information. Only
    /// what torch raises is: the other file's warnings are its own.
    fn report_elsewhere(
        &mut self,
        range: TextRange,
        severity: Severity,
        code: Code,
        message: String,
        mut related: Vec<(TextRange, String)>,
    ) {
        // Another file's warnings are its own business, except an
        // annotation there that this file's call contradicts (nothing
        // checks it at run time, so it is a warning): the call is why.
        if severity != Severity::Error && code != Code::ShapeAnnotation {
            return;
        }
        let Some(call) = self
            .call_sites
            .iter()
            .rev()
            .find(|c| crate::workspace::is_local(c))
            .cloned()
        else {
            return;
        };
        let place = self
            .modules
            .place(range.start)
            .unwrap_or_else(|| "another file".to_string());
        let mut message = format!("in this call, at {place}: {message}");
        let mut severity = severity;
        if self.uncertain > 0 {
            severity = Severity::Warning;
            message.push_str(" (on the paths where a condition the analysis cannot decide holds)");
        }
        // One report per call site and kind is enough to point there.
        if self
            .diagnostics
            .iter()
            .any(|d| d.range == call && d.code == code)
        {
            return;
        }
        let there = if code == Code::ShapeAnnotation {
            "the annotation"
        } else {
            "where torch raises"
        };
        related.insert(0, (range, there.to_string()));
        let related = self.related(related);
        self.diagnostics.push(Diagnostic {
            range: call,
            severity,
            code,
            message,
            related,
            fixes: Vec::new(),
        });
    }
}
