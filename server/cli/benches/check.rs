//! Benchmark of `shapels check` over a large tree: the release binary run on
//! a generated project of 300 files (100 model files of ~400 lines, 200
//! plain Python files), as CI would run it.
//!
//! Run with `cargo bench -p shapels --bench check`. The sweep of the real
//! standard library, with its time and memory targets, is
//! `scripts/sweep-stdlib`; figures for both are in `BENCHMARKS.md`.

#[path = "../../analysis/benches/common/mod.rs"]
mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

fn generated_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for package in 0..10u64 {
        let package_dir = dir.path().join(format!("pkg{package}"));
        std::fs::create_dir_all(&package_dir).unwrap();
        for file in 0..30u64 {
            let seed = package * 30 + file;
            let source = if file < 10 {
                common::model_file(400, seed)
            } else {
                common::plain_file(seed)
            };
            std::fs::write(package_dir.join(format!("m{file}.py")), source).unwrap();
        }
    }
    dir
}

fn check(c: &mut Criterion) {
    let tree = generated_tree();
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    group.bench_function("generated_tree_300_files", |b| {
        b.iter(|| {
            let status = Command::new(env!("CARGO_BIN_EXE_shapels"))
                .arg("check")
                .arg(tree.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run shapels check");
            // 0 or 1 (error diagnostics found); 2 would mean it could not check.
            assert!(matches!(status.code(), Some(0 | 1)), "{status}");
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    targets = check
}
criterion_main!(benches);
