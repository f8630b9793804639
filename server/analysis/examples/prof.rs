use shapels_analysis::{Config, Coverage, analyze_module};
use shapels_syntax::{ByteEdit, parse, reparse};
fn main() {
    let gpt = std::fs::read_to_string("server/analysis/benches/data/gpt.py").unwrap();
    let anchor = "hidden = config.mlp_ratio * config.n_embd";
    let at = gpt.find(anchor).unwrap() + anchor.len();
    let valid = format!("{}0{}", &gpt[..at], &gpt[at..]);
    let edit = ByteEdit {
        start_byte: at,
        old_end_byte: at,
        new_end_byte: at + 1,
    };
    let old = parse(&gpt);
    let config = Config::default();
    for _ in 0..4000 {
        let f = reparse(&old, &gpt, &valid, edit);
        std::hint::black_box(analyze_module(
            &valid,
            &f.module,
            &config,
            Coverage::Bindings,
        ));
    }
}
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
