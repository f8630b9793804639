//! Links the `shapels` binary as a position-dependent executable.
//!
//! A position-independent one (the default) makes the dynamic loader patch
//! about 22,000 addresses at every start and copy the pages that hold them:
//! a quarter of the start of a process that `shapels check` runs once per
//! file from pre-commit hooks and editors' on-save commands. The code stays
//! position-independent (and so do the libraries and tests built from it);
//! only the final link of the binary fixes its addresses. The price: the
//! binary's own code and data load at a fixed address (no address-space
//! randomisation for them; the C libraries, the heap and the stacks keep
//! theirs), acceptable for a tool that reads source files and serves an
//! editor on stdio.

fn main() {
    // With musl, a static binary is position-independent unless built with
    // `-C relocation-model=static` (scripts/build-dist): `-no-pie` on top
    // of musl's self-relocating start code makes a binary that crashes
    // before `main`.
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("musl");
    if linux && !musl {
        println!("cargo:rustc-link-arg-bin=shapels=-no-pie");
    }
}
