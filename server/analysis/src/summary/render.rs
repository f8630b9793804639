//! A summary as text (aligned columns, as torchinfo prints it) and as a
//! Markdown table.

use super::{ACTIVATION_DEFINITION, ModelSummary, SummaryRow};

impl SummaryRow {
    /// The layer column: indented by depth, named as `print(model)` names it.
    fn label(&self) -> String {
        let indent = "  ".repeat(self.depth);
        match &self.name {
            Some(name) => format!("{indent}({name}): {}", self.layer),
            None => self.layer.clone(),
        }
    }

    fn output_cell(&self) -> String {
        match (&self.output, self.calls) {
            (None, _) => "--".to_string(),
            (Some(o), n) if n > 1 => format!("{o} (x{n})"),
            (Some(o), _) => o.clone(),
        }
    }

    fn params_cell(&self) -> String {
        let count = group_digits(&self.params.text);
        if self.frozen {
            format!("({count}) frozen")
        } else {
            count
        }
    }
}

/// `124439808` as `124,439,808`; other text as it is.
fn group_digits(text: &str) -> String {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i > 0 && (text.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl ModelSummary {
    /// Where the input comes from, in words.
    fn input_line(&self) -> String {
        match (&self.input, self.input_from_code) {
            (Some(input), true) => format!("input {input}"),
            (Some(input), false) => {
                format!("input {input} (for any input: made up from forward's signature)")
            }
            (None, _) => "no forward ran: output shapes unknown".to_string(),
        }
    }

    fn totals(&self) -> Vec<(String, String)> {
        let mut out = vec![
            (
                "Total params".to_string(),
                group_digits(&self.total_params.text),
            ),
            (
                "Trainable params".to_string(),
                group_digits(&self.trainable_params.text),
            ),
            (
                "Non-trainable params".to_string(),
                group_digits(&self.frozen_params.text),
            ),
        ];
        for b in &self.param_bytes {
            out.push((
                format!("Params size ({})", b.dtype),
                format!("{} bytes", group_digits(&b.bytes.text)),
            ));
        }
        out.push((
            "Activations (one forward)".to_string(),
            format!("{} bytes", group_digits(&self.activation_bytes.text)),
        ));
        out
    }

    /// The summary as aligned plain text.
    pub fn to_text(&self) -> String {
        let header = ["Layer (type)", "Output shape", "Param #"];
        let cells: Vec<[String; 3]> = self
            .rows
            .iter()
            .map(|r| [r.label(), r.output_cell(), r.params_cell()])
            .collect();
        let mut widths = header.map(|h| h.chars().count());
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row.iter()) {
                *w = (*w).max(c.chars().count());
            }
        }
        let total: usize = widths.iter().sum::<usize>() + 4;
        let line = |cells: [&str; 3]| {
            let pad = |s: &str, w: usize| {
                format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())))
            };
            format!(
                "{}  {}  {}",
                pad(cells[0], widths[0]),
                pad(cells[1], widths[1]),
                cells[2]
            )
            .trim_end()
            .to_string()
        };
        let mut out = format!("{} ({})\n", self.model, self.input_line());
        out.push_str(&"=".repeat(total));
        out.push('\n');
        out.push_str(&line(header));
        out.push('\n');
        out.push_str(&"=".repeat(total));
        out.push('\n');
        for row in &cells {
            out.push_str(&line([&row[0], &row[1], &row[2]]));
            out.push('\n');
        }
        out.push_str(&"=".repeat(total));
        out.push('\n');
        for (k, v) in self.totals() {
            out.push_str(&format!("{k}: {v}\n"));
        }
        out.push_str(&"=".repeat(total));
        out.push('\n');
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        out.push_str(&format!("note: {ACTIVATION_DEFINITION}\n"));
        out
    }

    /// The summary as a Markdown table with the totals below.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("**{}** — {}\n\n", self.model, self.input_line());
        out.push_str("| Layer (type) | Output shape | Param # |\n| --- | --- | ---: |\n");
        for r in &self.rows {
            // Tables trim leading spaces: no-break spaces keep the nesting.
            let label = r.label();
            let trimmed = label.trim_start();
            let indent = "\u{a0}\u{a0}".repeat((label.len() - trimmed.len()) / 2);
            out.push_str(&format!(
                "| {indent}`{}` | `{}` | {} |\n",
                trimmed.replace('|', "\\|"),
                r.output_cell(),
                r.params_cell()
            ));
        }
        out.push('\n');
        for (k, v) in self.totals() {
            out.push_str(&format!("- {k}: `{v}`\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("- {note}\n"));
        }
        out.push_str(&format!("- {ACTIVATION_DEFINITION}\n"));
        out
    }
}
