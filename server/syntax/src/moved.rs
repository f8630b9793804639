//! Whether an edit left the syntax tree as it was, only moved: typing in a
//! comment, a docstring or between tokens changes no statement, and
//! whatever was worked out from the old tree still holds at the new
//! positions.

use crate::shift::{self, Move};
use crate::{ByteEdit, ParsedFile};

/// Whether `new`, reparsed from `old` over `edit` (`reparse`), holds the
/// statements `old` held with every range moved as `ByteEdit::move_range`
/// moves it, apart from what docstrings say. False whenever it cannot tell: after a fresh parse, with syntax
/// errors, or when a statement the reparse lowered again differs.
pub fn only_moved(old: &ParsedFile, new: &ParsedFile, edit: ByteEdit) -> bool {
    let Some(kept) = new.kept else {
        return false;
    };
    if !old.syntax_errors.is_empty() || !new.syntax_errors.is_empty() {
        return false;
    }
    let (old_body, new_body) = (&old.module.body, &new.module.body);
    // The statements the reparse took over are the old ones, moved: the
    // ones before the edit in place, the ones after it by its length, which
    // is how `move_range` moves them too. Only the statements lowered again
    // need comparing.
    let (Some(old_end), Some(new_end)) = (
        old_body.len().checked_sub(kept.after),
        new_body.len().checked_sub(kept.after),
    ) else {
        return false;
    };
    let (Some(old_middle), Some(new_middle)) = (
        old_body.get(kept.before..old_end),
        new_body.get(kept.before..new_end),
    ) else {
        return false;
    };
    old_middle.len() == new_middle.len()
        && old_middle
            .iter()
            .zip(new_middle)
            .all(|(o, n)| shift::stmt(o, Move::Over(edit)) == shift::stmt(n, Move::Still))
}

#[cfg(test)]
mod tests {
    use crate::{edit_between, parse, reparse};

    fn only_moved(old: &str, new: &str) -> bool {
        let edit = edit_between(old, new);
        let before = parse(old);
        let after = reparse(&before, old, new, edit);
        assert_eq!(after.module, parse(new).module, "{new:?}");
        super::only_moved(&before, &after, edit)
    }

    const FILE: &str = "import torch\n\n\nclass M:\n    def f(self, x):\n        \"\"\"Adds one.\"\"\"\n        # a comment\n        y = x + 1  # trailing\n        return y\n\n\nz = M()\n";

    #[test]
    fn comments_and_spacing_only_move_the_tree() {
        for (from, to) in [
            ("# a comment", "# a longer comment"),
            ("# a comment", "#"),
            ("  # trailing", ""),
            ("y = x + 1", "y = x  +  1"),
            ("\n\n\nclass M", "\n\n\n\n\nclass M"),
            ("# trailing", "# trailing, longer"),
            ("Adds one.", "Adds one to every element."),
            ("Adds one.", "Adds one.\n\n        More.\n        "),
        ] {
            let new = FILE.replacen(from, to, 1);
            assert!(only_moved(FILE, &new), "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn code_edits_change_the_tree() {
        for (from, to) in [
            ("x + 1", "x + 2"),
            ("y = x", "w = x"),
            ("return y", "return (y)"),
            ("        # a comment\n", "        pass\n"),
            ("z = M()", "z = M() ; q = 1"),
            ("class M:", "class N:"),
            ("\"\"\"Adds one.\"\"\"", "\"\"\"Adds one.\"\"\" + s"),
            ("\"\"\"Adds one.\"\"\"", "f\"\"\"Adds {one}.\"\"\""),
            // A comment after a block's last statement is part of the
            // block's range in tree-sitter's tree: the function grew.
            ("return y\n", "return y  # done\n"),
        ] {
            let new = FILE.replacen(from, to, 1);
            assert!(!only_moved(FILE, &new), "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn broken_text_is_never_only_moved() {
        let new = FILE.replacen("x + 1", "x + (1", 1);
        assert!(!only_moved(FILE, &new));
    }
}
