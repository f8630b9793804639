//! A one-shot command's heap on 2 MiB pages: one page fault where 512 were.
//!
//! `shapels check` of one file runs for a few milliseconds, and a fifth of
//! that was the kernel handing the heap out a 4 KiB page at a time: a
//! 150-line model touches about 1.6 MiB, some 400 faults of 1.3-2 µs each
//! on this project's hosts. The process starts by giving the allocator an
//! arena of its own, with transparent huge pages asked for before anything
//! is allocated in it, so that a 2 MiB region is one fault, zeroed at once:
//! `resnet.py` 530 -> 122 faults and ~10 % faster (BENCHMARKS.md, "Stop
//! 44"). That takes a process whose start allocates nothing: the release
//! build against musl, not one against glibc (see `on_huge_pages`).
//!
//! The language server takes the advice back before it allocates more than
//! its command line: it lives for hours, and huge pages there doubled its
//! resident memory and made it jump by megabytes (the workspace Cargo.toml
//! says so). Where the kernel has transparent huge pages off, or only for
//! other processes, the advice changes nothing.

/// The arena: more than a one-file run touches, a small part of what a
/// folder check does (mimalloc takes more arenas as it needs them). A
/// multiple of mimalloc's 32 MiB segments.
#[cfg(target_os = "linux")]
const ARENA: usize = 64 * 1024 * 1024;

/// The arena given to the allocator at the start, when it could be made.
pub struct HeapArena {
    #[cfg(target_os = "linux")]
    area: Option<(*mut std::ffi::c_void, usize)>,
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux {
    use std::ffi::c_void;

    use super::{ARENA, HeapArena};

    /// Gives mimalloc a new arena and asks for huge pages on it.
    pub(super) fn reserve_advised() -> Option<(*mut c_void, usize)> {
        let (start, size) = shapels_syntax::reserve_arena(ARENA)?;
        // SAFETY: the range is the mapping mimalloc just made; the advice
        // only changes how the kernel backs it.
        unsafe { libc::madvise(start, size, libc::MADV_HUGEPAGE) };
        Some((start, size))
    }

    impl HeapArena {
        /// Gives mimalloc an arena on huge pages, when nothing has been
        /// allocated yet: a 2 MiB region that already has a small page keeps
        /// small pages. Against glibc, Rust's runtime names the main thread
        /// on the heap before `main`, so mimalloc's own arena exists and its
        /// first 2 MiB, where a short run's heap lives, are small pages
        /// already; advising the rest saved faults but cost a 2 MiB zeroing
        /// per thread (a two-thread parse of nanoGPT's `model.py` ran 3 %
        /// slower), so there the heap is left as it is. Never fails: without
        /// the arena or the advice, the allocator works as it always does.
        pub fn on_huge_pages() -> HeapArena {
            if shapels_syntax::has_arena() {
                return HeapArena { area: None };
            }
            HeapArena {
                area: reserve_advised(),
            }
        }

        /// Takes the advice back, for a long-lived process: regions not yet
        /// touched get small pages.
        pub fn back_to_small_pages(&self) {
            if let Some((start, size)) = self.area {
                // SAFETY: as in `on_huge_pages`.
                unsafe { libc::madvise(start, size, libc::MADV_NOHUGEPAGE) };
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl HeapArena {
    /// Elsewhere the allocator takes memory as the system gives it.
    pub fn on_huge_pages() -> HeapArena {
        HeapArena {}
    }

    /// Nothing to take back.
    pub fn back_to_small_pages(&self) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::HeapArena;

    /// The kernel's flags for the mapping that holds `addr`, from
    /// /proc/self/smaps ("hg": huge pages asked for, "nh": refused).
    fn flags_at(addr: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((start, end)) = range.split_once('-')
                && let (Ok(start), Ok(end)) = (
                    usize::from_str_radix(start, 16),
                    usize::from_str_radix(end, 16),
                )
            {
                inside = (start..end).contains(&addr);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.split_whitespace().map(str::to_owned).collect();
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    #[test]
    fn a_process_that_allocated_before_keeps_its_heap_as_it_is() {
        // The test harness has allocated long before this runs, as glibc's
        // start does before `main`.
        assert!(HeapArena::on_huge_pages().area.is_none());
    }

    #[test]
    fn the_arena_asks_for_huge_pages_and_a_server_takes_it_back() {
        let arena = HeapArena {
            area: super::linux::reserve_advised(),
        };
        let (start, size) = arena.area.expect("mimalloc made the arena");
        assert!(size >= super::ARENA);
        // A kernel built without transparent huge pages refuses the advice
        // (the arena still works, with small pages).
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            eprintln!("this kernel has no transparent huge pages: the advice is refused");
            return;
        }
        assert!(flags_at(start.addr()).contains(&"hg".to_owned()));
        arena.back_to_small_pages();
        let flags = flags_at(start.addr());
        assert!(flags.contains(&"nh".to_owned()) && !flags.contains(&"hg".to_owned()));
    }
}
