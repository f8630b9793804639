//! The workers and the parse cache under edits, cancellation, panics and a busy document.

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use super::*;

/// An edit chain on which tree-sitter's incremental parse of the last,
/// broken text differs from a fresh parse (found by the syntax crate's
/// random edit test).
const DIVERGING_CHAIN: &[&str] = &[
    "é = :\"\"\"import torch\n((import torch\nimport torch\n",
    "é = :\"\"\"import \n((import torch\nimport torch\n",
    "é = :\"\"\"imp'(import torch\nimport torch\n",
    "é = :\"\"\"imp'(import torch\nimport t\"\"\"orch\n",
];

#[test]
fn broken_texts_parse_as_a_fresh_parse_would() {
    let mut file = parse(DIVERGING_CHAIN[0]);
    for pair in DIVERGING_CHAIN.windows(2) {
        file = reparse_or_parse(&file, pair[0], pair[1]);
        assert_eq!(
            file.observable(),
            parse(pair[1]).observable(),
            "{:?}",
            pair[1]
        );
    }
}

#[test]
fn the_cache_reparses_each_version_from_the_last() {
    let uri: Uri = "untitled:a.py".parse().unwrap();
    let mut cache = ParseCache::default();
    let texts = [
        "x = 1\n",
        "x = 12\n",
        "x = (12\n",
        "x = (12)\n",
        "x = (12)\n",
        "",
    ];
    for text in texts {
        let parsed = cache.parse(&uri, text.to_string());
        assert_eq!(parsed.text, text);
        assert_eq!(parsed.file.observable(), parse(text).observable());
    }
    cache.forget(&uri);
    assert!(cache.files.is_empty());
}

static COUNTED_CALLS: AtomicUsize = AtomicUsize::new(0);

fn counted_analysis(
    source: &str,
    module: &Module,
    config: &Config,
    coverage: Coverage,
) -> FileAnalysis {
    COUNTED_CALLS.fetch_add(1, Ordering::SeqCst);
    shapels_analysis::analyze_module(source, module, config, coverage)
}

/// Typing in a comment carries the last analysis over (moved), code
/// edits and a new configuration run it again, and what is handed out
/// is each time what a fresh analysis of the text gives.
#[test]
fn edits_that_change_nothing_read_carry_the_analysis_over() {
    let uri: Uri = "untitled:carry.py".parse().unwrap();
    let mut cache = ParseCache::default();
    let base = "import torch\n\n# sizes\nx = torch.zeros(2, 3)\ny = x.sum(0)\n";
    let strict = Config {
        allow_fallback_kernels: false,
        ..Config::default()
    };
    let steps: [(String, &Config, Coverage, usize); 7] = [
        (base.to_string(), &Config::default(), Coverage::Bindings, 1),
        (
            base.replace("# sizes", "# the sizes"),
            &Config::default(),
            Coverage::Bindings,
            1,
        ),
        (
            base.replace("# sizes", "# the sizes\n"),
            &Config::default(),
            Coverage::Bindings,
            1,
        ),
        (
            base.replace("# sizes", "# the sizes\n"),
            &Config::default(),
            Coverage::Expressions,
            2,
        ),
        (
            base.replace("# sizes", "# the sizes\n\n"),
            &Config::default(),
            Coverage::Expressions,
            2,
        ),
        (
            base.replace("# sizes", "# the sizes\n\n"),
            &strict,
            Coverage::Bindings,
            3,
        ),
        (
            base.replace("sum(0)", "sum(1)"),
            &Config::default(),
            Coverage::Bindings,
            4,
        ),
    ];
    let calls_before = COUNTED_CALLS.load(Ordering::SeqCst);
    for (text, config, coverage, calls) in steps {
        let Outcome::Done(analysis) = cache.analyze(
            &uri,
            text.clone(),
            (config, coverage),
            (Analyzer::Plain(counted_analysis), &AtomicBool::new(false)),
            (&ImportInputs::default(), &mut ImportState::default()),
        ) else {
            panic!("no analysis of {text:?}");
        };
        let fresh = shapels_analysis::analyze_module(&text, &parse(&text).module, config, coverage);
        assert_eq!(format!("{analysis:?}"), format!("{fresh:?}"), "{text:?}");
        assert_eq!(
            COUNTED_CALLS.load(Ordering::SeqCst) - calls_before,
            calls,
            "{text:?}"
        );
    }
}

static SLOW_CALLS: AtomicUsize = AtomicUsize::new(0);

fn slow_analysis(_: &str, _: &Module, _: &Config, _: Coverage) -> FileAnalysis {
    SLOW_CALLS.fetch_add(1, Ordering::SeqCst);
    thread::sleep(Duration::from_millis(300));
    FileAnalysis::default()
}

fn job(workers: &Workers, version: i32) -> (CancelToken, oneshot::Receiver<Outcome>) {
    job_for(
        workers,
        "untitled:slow.py",
        version,
        &format!("x = {version}\n"),
    )
}

fn job_for(
    workers: &Workers,
    uri: &str,
    version: i32,
    text: &str,
) -> (CancelToken, oneshot::Receiver<Outcome>) {
    let token = CancelToken::default();
    let (reply, outcome) = oneshot::channel();
    workers.submit(Job {
        uri: uri.parse().unwrap(),
        version,
        text: Rope::from_str(text),
        config: Config::default(),
        coverage: Coverage::Bindings,
        imports: ImportInputs::default(),
        summary: None,
        token: token.clone(),
        reply,
    });
    (token, outcome)
}

#[test]
fn work_for_a_replaced_version_is_skipped() {
    let workers = Workers::new(Analyzer::Plain(slow_analysis));
    // The first job keeps the document's worker busy while the second
    // is replaced by the third, as happens while typing.
    let (_, first) = job(&workers, 1);
    let (second_token, second) = job(&workers, 2);
    let (_, third) = job(&workers, 3);
    second_token.cancel();
    assert!(matches!(first.blocking_recv(), Ok(Outcome::Done(_))));
    assert!(matches!(second.blocking_recv(), Ok(Outcome::Cancelled)));
    assert!(matches!(third.blocking_recv(), Ok(Outcome::Done(_))));
    assert_eq!(SLOW_CALLS.load(Ordering::SeqCst), 2);
}

/// Holds its worker until `RELEASE_SLOW` is set, for texts that ask.
fn held_analysis(source: &str, module: &Module, config: &Config, c: Coverage) -> FileAnalysis {
    while source.contains("hold") && !RELEASE_HELD.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(5));
    }
    shapels_analysis::analyze_module(source, module, config, c)
}

static RELEASE_HELD: AtomicBool = AtomicBool::new(false);

/// While one document's analysis holds its worker, other documents are
/// analysed, the same one's later versions wait their turn, and a
/// document whose owner is busy moves to a free worker and back.
#[test]
fn a_busy_document_holds_up_no_other() {
    let workers = Workers::new(Analyzer::Plain(held_analysis));
    let (_, first) = job_for(&workers, "untitled:small.py", 1, "x = 1\n");
    assert!(matches!(first.blocking_recv(), Ok(Outcome::Done(_))));
    let (_, big) = job_for(&workers, "untitled:big.py", 1, "hold = 1\n");
    let (_, big_again) = job_for(&workers, "untitled:big.py", 2, "y = 2\n");
    for version in 2..6 {
        let (_, small) = job_for(&workers, "untitled:small.py", version, "x = 2\n");
        let (_, other) = job_for(&workers, "untitled:other.py", version, "z = 3\n");
        assert!(matches!(small.blocking_recv(), Ok(Outcome::Done(_))));
        assert!(matches!(other.blocking_recv(), Ok(Outcome::Done(_))));
    }
    let (mut big, mut big_again) = (big, big_again);
    assert!(big.try_recv().is_err(), "the held analysis cannot be done");
    assert!(big_again.try_recv().is_err(), "nor the version after it");
    RELEASE_HELD.store(true, Ordering::SeqCst);
    assert!(matches!(big.blocking_recv(), Ok(Outcome::Done(_))));
    assert!(matches!(big_again.blocking_recv(), Ok(Outcome::Done(_))));
    let started = workers.pool.lock().idle.len();
    assert!(started <= 3, "{started} workers for three documents");
}

fn panicky_analysis(source: &str, _: &Module, _: &Config, _: Coverage) -> FileAnalysis {
    assert!(!source.contains("boom"), "the stand-in analysis blew up");
    FileAnalysis::default()
}

#[test]
fn a_panic_costs_one_version() {
    let uri: Uri = "untitled:boom.py".parse().unwrap();
    let mut cache = ParseCache::default();
    let config = Config::default();
    let run = |cache: &mut ParseCache, text: &str| {
        cache.analyze(
            &uri,
            text.to_string(),
            (&config, Coverage::Bindings),
            (Analyzer::Plain(panicky_analysis), &AtomicBool::new(false)),
            (&ImportInputs::default(), &mut ImportState::default()),
        )
    };
    assert!(matches!(run(&mut cache, "x = 1\n"), Outcome::Done(_)));
    assert!(matches!(run(&mut cache, "x = boom\n"), Outcome::Failed));
    assert!(matches!(run(&mut cache, "x = 2\n"), Outcome::Done(_)));
}

/// The job's cancel flag reaches the analysis: set, the run stops and
/// nothing of it is kept, so the next version is analysed in full.
#[test]
fn a_cancelled_analysis_gives_no_outcome_and_keeps_nothing() {
    let uri: Uri = "untitled:loop.py".parse().unwrap();
    let mut cache = ParseCache::default();
    let config = Config::default();
    // More steps than the analysis takes between two looks at the flag.
    let text = format!(
        "import torch\nx = torch.zeros(2)\n{}",
        "x = x + 1\n".repeat(600)
    );
    let mut run = |cancelled: bool| {
        cache.analyze(
            &uri,
            text.clone(),
            (&config, Coverage::Bindings),
            (Analyzer::Reusing, &AtomicBool::new(cancelled)),
            (&ImportInputs::default(), &mut ImportState::default()),
        )
    };
    assert!(matches!(run(true), Outcome::Cancelled));
    let Outcome::Done(analysis) = run(false) else {
        panic!("the version after a cancelled run is analysed");
    };
    assert!(analysis.bindings.iter().any(|b| b.name == "x"));
}

#[test]
fn files_over_the_limit_are_not_parsed() {
    let uri: Uri = "untitled:big.py".parse().unwrap();
    let mut cache = ParseCache::default();
    let big = "x = 1\n".repeat(guarded::MAX_SOURCE_BYTES / 6 + 1);
    match cache.analyze(
        &uri,
        big,
        (&Config::default(), Coverage::Bindings),
        (Analyzer::Plain(panicky_analysis), &AtomicBool::new(false)),
        (&ImportInputs::default(), &mut ImportState::default()),
    ) {
        Outcome::Done(analysis) => assert!(analysis.bindings.is_empty()),
        other => panic!("{other:?}"),
    }
    assert!(cache.files.is_empty());
}
