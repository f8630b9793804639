//! Import resolution over a made-up file system: which file each form of
//! import names, and what is left to the outside world.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;

/// Files by path; folders are whatever holds a file.
struct Memory(BTreeMap<PathBuf, String>);

impl Memory {
    fn new(files: &[(&str, &str)]) -> Memory {
        Memory(
            files
                .iter()
                .map(|(p, t)| (PathBuf::from(p), t.to_string()))
                .collect(),
        )
    }
}

impl FileSystem for Memory {
    fn kind(&self, path: &Path) -> PathKind {
        if self.0.contains_key(path) {
            PathKind::File
        } else if self.0.keys().any(|p| p.starts_with(path) && p != path) {
            PathKind::Dir
        } else {
            PathKind::Missing
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        match self.0.get(path) {
            Some(t) if t == "<too large>" => Err("too large".into()),
            Some(t) => Ok(Arc::from(t.as_str())),
            None => Err("missing".into()),
        }
    }
}

/// The graph of `main` (a path in `fs`), with `/proj` as the root.
fn graph_of(fs: &Memory, main: &str, extra: &[&str]) -> ModuleGraph {
    graph_with(fs, main, extra, &mut ModuleCache::new())
}

/// `graph_of`, loading through `cache`.
fn graph_with(fs: &Memory, main: &str, extra: &[&str], cache: &mut ModuleCache) -> ModuleGraph {
    let text = fs.0[Path::new(main)].clone();
    let module = shapels_syntax::parse(&text).module;
    let extra: Vec<PathBuf> = extra.iter().map(PathBuf::from).collect();
    let search = SearchPath::new(Some(Path::new(main)), &[PathBuf::from("/proj")], &extra, fs);
    load(
        MainFile {
            path: Some(Path::new(main)),
            module: &module,
        },
        &search,
        fs,
        cache,
    )
}

/// What (level, name) imported from the analysed file names: a path, a
/// namespace, an unreadable file, or `None` (not the user's).
fn named(graph: &ModuleGraph, level: u32, name: &str) -> Option<String> {
    Some(match graph.target(0, level, name)? {
        Target::Module(id) => graph.module(*id)?.path.display().to_string(),
        Target::Namespace(dirs) => format!("namespace {}", dirs[0].display()),
        Target::Unreadable(why) => format!("unreadable: {why}"),
    })
}

#[test]
fn relative_imports_start_from_the_files_folder() {
    let fs = Memory::new(&[
        ("/proj/pkg/__init__.py", "from .model import Net\n"),
        (
            "/proj/pkg/model.py",
            "from .layers import Block\nfrom . import layers\nfrom .. import top\nfrom .sub.deep import X\n",
        ),
        ("/proj/pkg/layers.py", ""),
        ("/proj/pkg/sub/deep.py", ""),
        ("/proj/top.py", ""),
    ]);
    let g = graph_of(&fs, "/proj/pkg/model.py", &[]);
    assert_eq!(
        named(&g, 1, "layers").as_deref(),
        Some("/proj/pkg/layers.py")
    );
    assert_eq!(named(&g, 1, "").as_deref(), Some("/proj/pkg/__init__.py"));
    assert_eq!(named(&g, 2, "top").as_deref(), Some("/proj/top.py"));
    assert_eq!(named(&g, 2, "").as_deref(), Some("namespace /proj"));
    assert_eq!(
        named(&g, 1, "sub.deep").as_deref(),
        Some("/proj/pkg/sub/deep.py")
    );
    // The package's `__init__.py` imports `model` again: one module each.
    assert_eq!(g.dependencies().len(), 5);
}

#[test]
fn absolute_imports_search_the_script_folder_first_then_the_roots() {
    let fs = Memory::new(&[
        (
            "/proj/scripts/train.py",
            "import model\nimport pkg.a.b\nimport torch\nimport numpy as np\n",
        ),
        ("/proj/scripts/model.py", ""),
        ("/proj/model.py", ""),
        ("/proj/pkg/__init__.py", ""),
        ("/proj/pkg/a/__init__.py", ""),
        ("/proj/pkg/a/b.py", ""),
    ]);
    let g = graph_of(&fs, "/proj/scripts/train.py", &[]);
    assert_eq!(
        named(&g, 0, "model").as_deref(),
        Some("/proj/scripts/model.py")
    );
    // `import pkg.a.b` imports each prefix.
    assert_eq!(
        named(&g, 0, "pkg").as_deref(),
        Some("/proj/pkg/__init__.py")
    );
    assert_eq!(
        named(&g, 0, "pkg.a").as_deref(),
        Some("/proj/pkg/a/__init__.py")
    );
    assert_eq!(named(&g, 0, "pkg.a.b").as_deref(), Some("/proj/pkg/a/b.py"));
    assert_eq!(named(&g, 0, "torch"), None);
    assert_eq!(named(&g, 0, "numpy"), None);
}

#[test]
fn src_layout_and_extra_paths() {
    let fs = Memory::new(&[
        (
            "/proj/app/main.py",
            "from mylib import enc\nimport helpers.act\n",
        ),
        ("/proj/src/mylib/__init__.py", ""),
        ("/proj/src/mylib/enc.py", ""),
        ("/vendor/helpers/act.py", ""),
    ]);
    let g = graph_of(&fs, "/proj/app/main.py", &["/vendor"]);
    assert_eq!(
        named(&g, 0, "mylib").as_deref(),
        Some("/proj/src/mylib/__init__.py")
    );
    assert_eq!(
        named(&g, 0, "mylib.enc").as_deref(),
        Some("/proj/src/mylib/enc.py")
    );
    assert_eq!(
        named(&g, 0, "helpers").as_deref(),
        Some("namespace /vendor/helpers")
    );
    assert_eq!(
        named(&g, 0, "helpers.act").as_deref(),
        Some("/vendor/helpers/act.py")
    );
    let without = graph_of(&fs, "/proj/app/main.py", &[]);
    assert_eq!(named(&without, 0, "helpers.act"), None);
}

#[test]
fn a_folder_alone_is_not_a_module_of_the_users() {
    // A `torch/` folder of checkpoints must not hide torch; a regular
    // package anywhere on the path wins over namespace portions.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nimport data\nfrom shared import util\n",
        ),
        ("/proj/torch/weights.bin", ""),
        ("/proj/data/readme.txt", ""),
        ("/proj/shared/notes.txt", ""),
        ("/lib/shared/__init__.py", ""),
        ("/lib/shared/util.py", ""),
    ]);
    let g = graph_of(&fs, "/proj/main.py", &["/lib"]);
    assert_eq!(named(&g, 0, "torch"), None);
    assert_eq!(named(&g, 0, "data"), None);
    // Nor does a checkout of a package the analysis models itself.
    assert_eq!(named(&g, 0, "einops"), None);
    assert_eq!(
        named(&g, 0, "shared").as_deref(),
        Some("/lib/shared/__init__.py")
    );
    assert_eq!(
        named(&g, 0, "shared.util").as_deref(),
        Some("/lib/shared/util.py")
    );
}

#[test]
fn cycles_load_each_file_once_and_unreadable_files_say_why() {
    let fs = Memory::new(&[
        ("/proj/a.py", "from b import f\nfrom big import X\n"),
        ("/proj/b.py", "import a\n"),
        ("/proj/big.py", "<too large>"),
    ]);
    let g = graph_of(&fs, "/proj/a.py", &[]);
    // `a` is loaded as a module too (b imports it), besides being analysed.
    let deps: Vec<String> = g
        .dependencies()
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(deps, ["/proj/a.py", "/proj/b.py"]);
    assert_eq!(
        named(&g, 0, "big").as_deref(),
        Some("unreadable: too large")
    );
}

#[test]
fn an_unsaved_buffer_has_no_relative_imports() {
    let fs = Memory::new(&[("/proj/layers.py", "")]);
    let module = shapels_syntax::parse("from .layers import X\nimport layers\n").module;
    let search = SearchPath::new(None, &[PathBuf::from("/proj")], &[], &fs);
    let g = load(
        MainFile {
            path: None,
            module: &module,
        },
        &search,
        &fs,
        &mut ModuleCache::new(),
    );
    assert_eq!(named(&g, 1, "layers"), None);
    assert_eq!(named(&g, 0, "layers").as_deref(), Some("/proj/layers.py"));
}

#[test]
fn the_cache_parses_each_version_once() {
    let mut fs = Memory::new(&[("/proj/m.py", "import lib\n"), ("/proj/lib.py", "X = 1\n")]);
    let mut cache = ModuleCache::new();
    let module = shapels_syntax::parse("import lib\n").module;
    let search = SearchPath::new(Some(Path::new("/proj/m.py")), &[], &[], &fs);
    let main = MainFile {
        path: Some(Path::new("/proj/m.py")),
        module: &module,
    };
    let first = load(main, &search, &fs, &mut cache).fingerprint();
    let again = load(main, &search, &fs, &mut cache).fingerprint();
    assert_eq!(first, again);
    assert_eq!(cache.len(), 1);
    fs.0.insert(PathBuf::from("/proj/lib.py"), "X = 2\n".into());
    let changed = load(main, &search, &fs, &mut cache).fingerprint();
    assert_ne!(first, changed);
    assert_eq!(cache.len(), 2);
}

/// Every import of every file of a graph, by the importing file's path,
/// with what it names (by path), sorted: comparable between caches.
fn all_targets(graph: &ModuleGraph) -> Vec<String> {
    let path_of = |id: u32| match id {
        0 => "<main>".to_string(),
        _ => graph
            .module(id)
            .map_or("?".into(), |m| m.path.display().to_string()),
    };
    let mut out: Vec<String> = graph
        .by_importer
        .keys()
        .flat_map(|&importer| {
            graph
                .targets_of(importer)
                .map(move |((_, level, name), target)| {
                    let target = match target {
                        Target::Module(id) => path_of(*id),
                        Target::Namespace(dirs) => format!("namespace {}", dirs[0].display()),
                        Target::Unreadable(why) => format!("unreadable: {why}"),
                    };
                    format!("{} {level} {name} -> {target}", path_of(importer))
                })
        })
        .collect();
    out.sort();
    out
}

/// Files in several folders share one cache, as in `shapels check DIR`: a
/// module's relative imports are found once for all of them, its absolute
/// imports along each file's own search path (the file's folder first),
/// and every graph is the one a fresh cache gives.
#[test]
fn a_shared_cache_finds_what_a_fresh_one_finds() {
    let fs = Memory::new(&[
        ("/proj/a/main.py", "import pkg.mod\nfrom pkg import mod\n"),
        ("/proj/a/helper.py", ""),
        ("/proj/b/main.py", "from pkg.mod import X\n"),
        ("/proj/c/main.py", "import pkg.mod\n"),
        ("/proj/c/helper/__init__.py", ""),
        // A folder of the package's name in the script's folder: a
        // portion of a namespace that the package itself wins over.
        ("/proj/d/main.py", "import pkg.mod\nimport helper\n"),
        ("/proj/d/pkg/other.py", ""),
        ("/proj/d/helper/data.py", ""),
        (
            "/proj/pkg/__init__.py",
            "from .mod import X\nfrom . import layers\n",
        ),
        (
            "/proj/pkg/mod.py",
            "import helper\nfrom .layers import Block\nfrom .. import top\nX = 1\n",
        ),
        ("/proj/pkg/layers.py", "import helper\n"),
        ("/proj/top.py", ""),
    ]);
    let mains = [
        "/proj/a/main.py",
        "/proj/b/main.py",
        "/proj/c/main.py",
        "/proj/d/main.py",
    ];
    let load_with = |cache: &mut ModuleCache, main: &str| {
        let text = fs.0[Path::new(main)].clone();
        let module = shapels_syntax::parse(&text).module;
        let search = SearchPath::new(Some(Path::new(main)), &[PathBuf::from("/proj")], &[], &fs);
        let graph = load(
            MainFile {
                path: Some(Path::new(main)),
                module: &module,
            },
            &search,
            &fs,
            cache,
        );
        all_targets(&graph)
    };
    let mut shared = ModuleCache::new();
    // Twice round, so that the second finds everything in the cache.
    for main in mains.iter().chain(&mains) {
        let fresh = load_with(&mut ModuleCache::new(), main);
        assert_eq!(load_with(&mut shared, main), fresh, "{main}");
    }
    // The script's folder comes first: `helper` is a's own module, c's
    // package, and nothing of the user's from b.
    let helper_of = |main: &str| {
        load_with(&mut ModuleCache::new(), main)
            .into_iter()
            .filter(|t| t.starts_with("/proj/pkg/mod.py 0 helper"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        helper_of("/proj/a/main.py"),
        ["/proj/pkg/mod.py 0 helper -> /proj/a/helper.py"]
    );
    assert_eq!(helper_of("/proj/b/main.py"), Vec::<String>::new());
    assert_eq!(
        helper_of("/proj/c/main.py"),
        ["/proj/pkg/mod.py 0 helper -> /proj/c/helper/__init__.py"]
    );
}

#[test]
fn stub_folders_describe_modules_with_pyi_files() {
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import fastblocks\nfrom ext import op\nimport local\n",
        ),
        ("/proj/typings/fastblocks.pyi", "def f(x): ...\n"),
        ("/proj/typings/ext/__init__.pyi", "def op(x): ...\n"),
        ("/proj/typings/local.pyi", "def g(x): ...\n"),
        ("/proj/local.py", "def g(x): return x\n"),
    ]);
    let text = fs.0[Path::new("/proj/main.py")].clone();
    let module = shapels_syntax::parse(&text).module;
    let search = SearchPath::new(
        Some(Path::new("/proj/main.py")),
        &[PathBuf::from("/proj")],
        &[],
        &fs,
    )
    .with_stubs(&[PathBuf::from("/proj/typings")], &fs);
    let graph = load(
        MainFile {
            path: Some(Path::new("/proj/main.py")),
            module: &module,
        },
        &search,
        &fs,
        &mut ModuleCache::new(),
    );
    assert_eq!(
        named(&graph, 0, "fastblocks").as_deref(),
        Some("/proj/typings/fastblocks.pyi")
    );
    assert_eq!(
        named(&graph, 0, "ext").as_deref(),
        Some("/proj/typings/ext/__init__.pyi")
    );
    // A stub folder is searched first: its stub describes the module.
    assert_eq!(
        named(&graph, 0, "local").as_deref(),
        Some("/proj/typings/local.pyi")
    );
}

/// The bindings (`name shape`) of `main` analysed with imports loaded
/// through `cache`.
fn bindings_with(fs: &Memory, main: &str, cache: &mut ModuleCache) -> Vec<String> {
    let text = fs.0[Path::new(main)].clone();
    let module = shapels_syntax::parse(&text).module;
    let graph = graph_with(fs, main, &[], cache);
    let analysis = crate::analyze_module_in(
        &text,
        &module,
        &crate::Config::default(),
        crate::Coverage::Bindings,
        &graph,
    );
    analysis
        .bindings
        .iter()
        .map(|b| format!("{} {}", b.name, b.tensor.shape_label()))
        .collect()
}

/// A module top level that calls 31 functions deep: more than the
/// analysis follows, whatever called it, so its run is cut by the depth
/// limit, which depends on the importer.
fn depth_limited_chain() -> String {
    let chain: String = (0..30)
        .map(|i| format!("def f{i}():\n    return f{}()\n", i + 1))
        .collect();
    format!("{chain}def f30():\n    return 1\nEND = f0()\n")
}

#[test]
fn a_top_level_whose_own_recursion_is_cut_is_shared() {
    // `walk` recurses deeper than the analysis follows: the cut is made
    // inside the top level's own call of it, so the top level runs the
    // same for every importer and is kept. A module whose call chain is
    // cut by the depth limit (which counts the importer's calls too) is
    // not.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nfrom deep import WIDTH\nimport chain\nx = torch.zeros(WIDTH)\n",
        ),
        (
            "/proj/deep.py",
            "def walk(n):\n    return walk(n - 1) if n > 0 else 0\nDEPTH = walk(10)\nWIDTH = 3\n",
        ),
        ("/proj/chain.py", &depth_limited_chain()),
    ]);
    let mut cache = ModuleCache::new();
    let first = bindings_with(&fs, "/proj/main.py", &mut cache);
    assert_eq!(first, ["x [3]"]);
    assert_eq!(
        cache.executed().borrow().len(),
        1,
        "deep.py is kept, chain.py is not"
    );
    assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), first);
}

#[test]
fn a_kept_module_leaves_a_class_of_a_module_not_kept_as_it_is() {
    // `cut.py` is not kept (its call chain meets the depth limit); `reexport.py`,
    // run after it, has no cut of its own and is kept, holding `cut.Block`.
    // Keeping it must not empty `Block`'s methods for `main.py`.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nimport cut\nimport reexport\ny = cut.Block().run(torch.zeros(2, 3))\n",
        ),
        (
            "/proj/cut.py",
            &format!(
                "{}class Block:\n    def run(self, x):\n        return x.sum(0)\n",
                depth_limited_chain()
            ),
        ),
        ("/proj/reexport.py", "from cut import Block\nSIZE = 4\n"),
    ]);
    let mut cache = ModuleCache::new();
    assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), ["y [3]"]);
    assert_eq!(cache.executed().borrow().len(), 1, "reexport.py is kept");
}

#[test]
fn a_top_level_stopped_by_its_own_budget_runs_once_and_is_shared() {
    // 262,144 loop turns, none of which one symbolic turn can stand for
    // (`j` doubles): more than a module's top level may take, so the top
    // level stops in the loop, at the same step wherever it is imported
    // from; what it bound before the loop is known, after it not.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nfrom heavy import WIDTH, LATE\nx = torch.zeros(WIDTH)\ny = torch.zeros(LATE)\n",
        ),
        (
            "/proj/heavy.py",
            "WIDTH = 3\nj = 1\nfor a in range(64):\n    for b in range(64):\n        for c in range(64):\n            j = j * 2 % 7 + c\nLATE = 4\n",
        ),
    ]);
    let mut cache = ModuleCache::new();
    let first = bindings_with(&fs, "/proj/main.py", &mut cache);
    assert_eq!(first, ["x [3]", "y [...]"]);
    assert_eq!(
        cache.executed().borrow().len(),
        1,
        "the stopped top level is kept"
    );
    assert_eq!(
        bindings_with(&fs, "/proj/main.py", &mut cache),
        first,
        "the kept top level says the same"
    );
}

#[test]
fn what_an_analysis_writes_into_a_kept_module_is_gone_for_the_next() {
    // Each analysis appends to a kept module's list and to a list held
    // by one of its classes, and puts its layer in eval mode; the next one
    // starts from what the module's top level made.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nimport reg\nreg.ITEMS.append(1)\nreg.Box.items.append(2)\nreg.PROJ.eval()\nx = torch.zeros(len(reg.ITEMS), len(reg.Box.items))\ny = reg.PROJ(torch.zeros(3, 4))\n",
        ),
        (
            "/proj/reg.py",
            "import torch.nn as nn\nITEMS = []\nclass Box:\n    items = []\nPROJ = nn.Linear(4, 5)\n",
        ),
    ]);
    let mut cache = ModuleCache::new();
    let first = bindings_with(&fs, "/proj/main.py", &mut cache);
    assert_eq!(first, ["x [1, 1]", "y [3, 5]"]);
    assert_eq!(cache.executed().borrow().len(), 1, "reg.py is kept");
    assert!(cache.executed().borrow().saved_objects() >= 3);
    for _ in 0..3 {
        assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), first);
    }
}

#[test]
fn a_kept_top_level_that_registers_in_another_module_keeps_its_entry() {
    // `plugin.py` appends to `reg.ITEMS` when it is imported; kept, it is
    // not run again, so its entry must be part of what was kept, and what
    // `main.py` itself appends must not.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nimport reg\nimport plugin\nreg.ITEMS.append(2)\nx = torch.zeros(len(reg.ITEMS))\n",
        ),
        ("/proj/reg.py", "ITEMS = []\n"),
        ("/proj/plugin.py", "import reg\nreg.ITEMS.append(1)\n"),
    ]);
    let mut cache = ModuleCache::new();
    let first = bindings_with(&fs, "/proj/main.py", &mut cache);
    assert_eq!(first, ["x [2]"]);
    assert_eq!(
        cache.executed().borrow().len(),
        2,
        "reg.py and plugin.py are kept"
    );
    for _ in 0..2 {
        assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), first);
    }
}

#[test]
fn a_package_runs_before_the_module_imported_from_it() {
    // `from pkg.layers import SIZE` runs `pkg/__init__.py` first, as
    // Python does; it sets the size `layers.py` then reads from `config`.
    let fs = Memory::new(&[
        (
            "/proj/main.py",
            "import torch\nfrom pkg.layers import SIZE\nx = torch.zeros(SIZE)\n",
        ),
        (
            "/proj/pkg/__init__.py",
            "from pkg import config\nconfig.SIZE = 5\n",
        ),
        ("/proj/pkg/config.py", "SIZE = 4\n"),
        ("/proj/pkg/layers.py", "from pkg.config import SIZE\n"),
    ]);
    let graph = graph_of(&fs, "/proj/main.py", &[]);
    assert_eq!(
        named(&graph, 0, "pkg").as_deref(),
        Some("/proj/pkg/__init__.py")
    );
    assert_eq!(
        bindings_with(&fs, "/proj/main.py", &mut ModuleCache::new()),
        ["x [5]"]
    );
}

/// A module whose top level stops at its own budget: it costs an importer
/// that many steps of the import budget.
fn heavy_module(width: usize) -> String {
    format!(
        "WIDTH = {width}\nj = 1\nfor a in range(64):\n    for b in range(64):\n        for c in range(64):\n            j = j * 2 % 7 + c\n"
    )
}

#[test]
fn a_kept_module_costs_what_running_it_costs() {
    // Twelve top levels that each spend a module's budget overrun the
    // import budget: the last ones imported are cut. An analysis after one
    // that kept the modules is charged their steps all the same, so it
    // cuts the same ones: which file a thread analysed first changes
    // nothing.
    let mut files: Vec<(String, String)> = (0..12)
        .map(|i| (format!("/proj/heavy{i}.py"), heavy_module(i + 1)))
        .collect();
    let imports: String = (0..12)
        .map(|i| format!("from heavy{i} import WIDTH as w{i}\n"))
        .collect();
    let uses: String = (0..12)
        .map(|i| format!("x{i} = torch.zeros(w{i})\n"))
        .collect();
    files.push((
        "/proj/main.py".into(),
        format!("import torch\n{imports}{uses}"),
    ));
    files.push(("/proj/first.py".into(), imports.clone()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let fs = Memory::new(&refs);
    let fresh = bindings_with(&fs, "/proj/main.py", &mut ModuleCache::new());
    assert!(fresh.contains(&"x0 [1]".to_string()), "{fresh:?}");
    assert!(fresh.contains(&"x11 [...]".to_string()), "{fresh:?}");
    let mut cache = ModuleCache::new();
    let _ = bindings_with(&fs, "/proj/first.py", &mut cache);
    assert!(cache.executed().borrow().len() >= 9, "most are kept");
    assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), fresh);
}

/// A module top level that calls `n` functions deep before it defines
/// `Block`: cut by the depth limit only when imported deep enough.
fn chain_then_block(n: usize) -> String {
    let chain: String = (0..n)
        .map(|i| format!("def f{i}():\n    return f{}()\n", i + 1))
        .collect();
    format!(
        "{chain}def f{n}():\n    return 1\nEND = f0()\nclass Block:\n    def run(self, x):\n        return x.sum(0)\n"
    )
}

#[test]
fn a_module_holding_a_class_cut_only_here_is_not_kept() {
    // `deep.py` imports `d.py` five imports down, where its top level is
    // cut by the depth limit; `m.py`, imported next, holds `d.Block`. Kept,
    // `m.py` would hold `Block` as an unknown name for `main.py`, whose own
    // import of `d.py` is shallow enough to run it whole.
    let mut files: Vec<(String, String)> = vec![
        ("/proj/d.py".into(), chain_then_block(20)),
        ("/proj/m.py".into(), "from d import Block\n".into()),
        (
            "/proj/main.py".into(),
            "import torch\nfrom m import Block\ny = Block().run(torch.zeros(2, 3))\n".into(),
        ),
        ("/proj/deep.py".into(), "import l1\nimport m\n".into()),
    ];
    for i in 1..=5 {
        let next = if i == 5 {
            "d".to_string()
        } else {
            format!("l{}", i + 1)
        };
        files.push((format!("/proj/l{i}.py"), format!("import {next}\n")));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let fs = Memory::new(&refs);
    let fresh = bindings_with(&fs, "/proj/main.py", &mut ModuleCache::new());
    assert_eq!(fresh, ["y [3]"]);
    let mut cache = ModuleCache::new();
    let _ = bindings_with(&fs, "/proj/deep.py", &mut cache);
    assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), fresh);
}

/// `builder.py` takes `Norm` (defined at `norm_at`) from `pkg`, and
/// `main.py` builds one through it: `main.py` shows the same after
/// `first.py` kept modules as alone. `files` are `first.py` and the
/// modules between it, `pkg` and `Norm`.
fn same_after_kept_package(norm_at: &str, files: &[(&str, &str)]) {
    let mut all: Vec<(&str, &str)> = vec![
        (
            norm_at,
            "class Norm:\n    def __init__(self, d):\n        self.d = d\n    def __call__(self, x):\n        return x.sum(-1)\n",
        ),
        (
            "/proj/builder.py",
            "from pkg import Norm\ndef build(d):\n    return Norm(d)\n",
        ),
        (
            "/proj/main.py",
            "import torch\nfrom builder import build\ny = build(3)(torch.zeros(2, 3))\n",
        ),
    ];
    all.extend_from_slice(files);
    let fs = Memory::new(&all);
    let fresh = bindings_with(&fs, "/proj/main.py", &mut ModuleCache::new());
    assert_eq!(fresh, ["y [2]"]);
    let mut cache = ModuleCache::new();
    let _ = bindings_with(&fs, "/proj/first.py", &mut cache);
    assert!(
        cache.executed().borrow().len() >= 2,
        "pkg and the module of Norm are kept"
    );
    assert_eq!(bindings_with(&fs, "/proj/main.py", &mut cache), fresh);
}

#[test]
fn a_class_of_a_kept_package_counts_as_kept() {
    // `first.py` keeps `pkg` and `pkg/norm.py`. For `main.py`, `builder.py`
    // takes `Norm` from the kept `pkg` without importing `pkg/norm.py`
    // itself: it holds a class of a kept module all the same, and is kept
    // as it is (before, `Norm` was made an unknown name in it, for this
    // analysis too).
    same_after_kept_package(
        "/proj/pkg/norm.py",
        &[
            ("/proj/first.py", "import pkg\n"),
            ("/proj/pkg/__init__.py", "from pkg.norm import Norm\n"),
        ],
    );
}

#[test]
fn a_class_kept_by_another_module_counts_as_kept() {
    // `first.py` runs `other.py` first, which imports `norm.py`; `pkg`
    // takes `Norm` from it without running it. For `main.py`, the kept
    // `pkg` brings `Norm` but not `norm.py` (its run did not import it):
    // `builder.py` holds a class of a kept module all the same.
    same_after_kept_package(
        "/proj/norm.py",
        &[
            ("/proj/first.py", "import other\nimport pkg\n"),
            ("/proj/other.py", "from norm import Norm\n"),
            ("/proj/pkg/__init__.py", "from norm import Norm\n"),
        ],
    );
}
