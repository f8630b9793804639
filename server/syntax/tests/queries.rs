//! The tree-sitter queries compile against the pinned grammar, hold the
//! captures the code reads, and find what they should.

use std::path::{Path, PathBuf};

use shapels_syntax::queries::{USED_CAPTURES, language};
use shapels_syntax::{imports_torch, parse};
use tree_sitter::Query;

fn query_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries/python")
}

/// The `.scm` files in `queries/python` as they are at test time.
fn query_files() -> Vec<PathBuf> {
    let entries = std::fs::read_dir(query_dir()).unwrap();
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "scm"))
        .collect();
    files.sort();
    files
}

/// Every `.scm` file in `queries/python` compiles, including ones added
/// later and not yet used by the code.
#[test]
fn every_query_file_compiles() {
    let mut compiled = 0;
    for path in query_files() {
        let source = std::fs::read_to_string(&path).unwrap();
        if let Err(error) = Query::new(&language(), &source) {
            panic!("{} does not compile: {error}", path.display());
        }
        compiled += 1;
    }
    assert!(compiled >= USED_CAPTURES.len());
}

/// The captures the code reads exist in the queries compiled into it, and
/// the compiled-in text is the file on disk.
#[test]
fn used_captures_exist() {
    for (file, source, captures) in USED_CAPTURES {
        let on_disk = std::fs::read_to_string(query_dir().join(file)).unwrap();
        assert_eq!(&on_disk, source, "{file} is stale in the binary");
        let query = Query::new(&language(), source).unwrap();
        for capture in *captures {
            assert!(
                query.capture_index_for_name(capture).is_some(),
                "{file} has no @{capture}"
            );
        }
    }
}

/// Query style: one node per line, two-space indentation, and captures that
/// only feed predicates named `@_name` (a capture used by a predicate and
/// also read by the code is fine).
#[test]
fn query_style() {
    for path in query_files() {
        let source = std::fs::read_to_string(&path).unwrap();
        for (number, line) in source.lines().enumerate() {
            let indent = line.len() - line.trim_start().len();
            assert!(
                indent % 2 == 0 && !line.starts_with('\t'),
                "{}:{}: indent by two spaces",
                path.display(),
                number + 1
            );
            assert!(
                !line.ends_with(' '),
                "{}:{}: trailing space",
                path.display(),
                number + 1
            );
        }
    }
}

#[test]
fn torch_imports_are_found() {
    for source in [
        "import torch\n",
        "import torch.nn as nn\n",
        "import numpy as np, torch.nn.functional as F\n",
        "from torch import nn\n",
        "from torch.nn import functional as F\n",
        "import einops\n",
        "from einops import rearrange\n",
        "def f():\n    import torch\n",
        "import torch . nn\n",
        "x = (1,\nimport torch\n",
    ] {
        assert!(imports_torch(&parse(source), source), "{source:?}");
    }
    for source in [
        "",
        "import numpy\n",
        "import torchvision\n",
        "from torchvision import models\n",
        "from . import torch\n",
        "import my_torch\n",
        "torch = 1\n",
        "# import torch\n",
        "s = 'import torch'\n",
    ] {
        assert!(!imports_torch(&parse(source), source), "{source:?}");
    }
}

#[test]
fn comments_are_listed_in_order() {
    let source = "# head\nx = 1  # (B, T)\ns = '# not a comment'\n\"\"\"\n# nor this\n\"\"\"\n    # indented\n";
    let file = parse(source);
    let comments: Vec<&str> = file.comments.iter().map(|range| &source[*range]).collect();
    assert_eq!(comments, ["# head", "# (B, T)", "# indented"]);
    let crlf = "x = 1  # c\r\n# d\r\n";
    let file = parse(crlf);
    let comments: Vec<&str> = file.comments.iter().map(|range| &crlf[*range]).collect();
    assert_eq!(comments, ["# c", "# d"]);
}

/// The comments a parse lists are those `comments.scm` finds, over every
/// fixture and corpus file and a CRLF copy of each.
#[test]
fn comments_are_those_the_query_finds() {
    use shapels_syntax::queries::{CAPTURE_COMMENT, COMMENTS};
    use streaming_iterator::StreamingIterator;
    use tree_sitter::QueryCursor;

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests"), root.join("examples")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "py") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    let query = Query::new(&language(), COMMENTS).unwrap();
    let capture = query.capture_index_for_name(CAPTURE_COMMENT).unwrap();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for text in [text.clone(), text.replace('\n', "\r\n")] {
            let file = parse(&text);
            let tree = file.tree.as_ref().unwrap();
            let mut cursor = QueryCursor::new();
            let mut captures = cursor.captures(&query, tree.root_node(), text.as_bytes());
            let mut expected = Vec::new();
            while let Some((found, index)) = captures.next() {
                let node = found.captures()[*index].node;
                if found.captures()[*index].index == capture {
                    let range = node.byte_range();
                    let end = if text.as_bytes()[range.end - 1] == b'\r' {
                        range.end - 1
                    } else {
                        range.end
                    };
                    expected.push(range.start..end);
                }
            }
            assert_eq!(file.comments, expected, "{}", path.display());
        }
    }
}
