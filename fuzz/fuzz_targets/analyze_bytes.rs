//! Arbitrary bytes, as text, through parse and the whole analysis: nothing
//! may panic, and the step budget must keep every input short (libFuzzer's
//! `-timeout` flags a slow one).

#![no_main]

use libfuzzer_sys::fuzz_target;
use shapels_analysis::{Config, Coverage, HintDetail, analyze_module, expression_at, inlay_hints};

fuzz_target!(|data: &[u8]| {
    // Editors hand over text, not bytes: invalid UTF-8 is replaced, as a
    // client decoding a file would.
    let source = String::from_utf8_lossy(data);
    let parsed = shapels_syntax::parse(&source);
    for config in [
        Config::default(),
        Config {
            allow_non_fake_inputs: true,
            allow_fallback_kernels: false,
            static_shapes: true,
        },
    ] {
        let analysis = analyze_module(&source, &parsed.module, &config, Coverage::Expressions);
        inlay_hints(&analysis, None, HintDetail::Full);
        expression_at(&analysis, source.len() / 2);
        for binding in &analysis.bindings {
            binding.tensor.hover_markdown(Some(&binding.name));
        }
    }
});
