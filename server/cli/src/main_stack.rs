//! Whether the main thread can run an analysis: its stack, raised to what
//! the analysis threads get, instead of a thread of its own.
//!
//! `shapels check` of one file (a pre-commit hook, an on-save command) ran
//! the analysis on a thread started for it, since the analysis may recurse
//! deeper than a main thread's usual 8 MiB allow. That thread cost about
//! 0.35 ms of a 150-line model's 4.5 ms run (its start and its stack, and a
//! second heap the allocator builds from fresh pages while the main
//! thread's sits warm). On Linux the main thread's stack grows on demand up
//! to the soft `RLIMIT_STACK`, checked when it grows, and the kernel keeps
//! at least 128 MiB free below it for that: raising the soft limit (never
//! past the hard one) gives the main thread the analysis threads' stack.

use shapels_lsp::guarded::ANALYSIS_STACK;

/// What the main thread may already have used when the analysis starts,
/// on top of the analysis threads' stack.
const MARGIN: usize = 1024 * 1024;

/// Whether this is the process' main thread and its stack may now grow to
/// an analysis thread's (`guarded::ANALYSIS_STACK`), the soft limit raised
/// if it was lower.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn main_thread_fits_analysis() -> bool {
    // Rust names the thread that runs `main` "main" (a test's thread is
    // named after the test); another thread's stack is fixed.
    if std::thread::current().name() != Some("main") {
        return false;
    }
    let Ok(wanted) = libc::rlim_t::try_from(ANALYSIS_STACK + MARGIN) else {
        return false;
    };
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the limit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut limit) } != 0 {
        return false;
    }
    if limit.rlim_cur == libc::RLIM_INFINITY || limit.rlim_cur >= wanted {
        return true;
    }
    if limit.rlim_max != libc::RLIM_INFINITY && limit.rlim_max < wanted {
        return false;
    }
    limit.rlim_cur = wanted;
    // SAFETY: `setrlimit` reads the struct it is given; a soft limit at or
    // under the hard one is allowed to any process.
    unsafe { libc::setrlimit(libc::RLIMIT_STACK, &limit) == 0 }
}

/// Elsewhere the main thread's stack is fixed when the process starts.
#[cfg(not(target_os = "linux"))]
pub fn main_thread_fits_analysis() -> bool {
    false
}
