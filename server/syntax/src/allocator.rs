//! mimalloc for the whole process: Rust's allocations (`Mimalloc`, the
//! binary's global allocator) and tree-sitter's C ones.
//!
//! tree-sitter calls libc's `malloc` unless told otherwise. In a process
//! whose Rust side runs on mimalloc that is a second heap: glibc grows a
//! thread's arena a page at a time (a system call and a fault each) and its
//! `malloc`/`free` took a tenth of the parse of a model file.

// The one place the workspace allows `unsafe` for mimalloc: handing its C
// functions to tree-sitter's C code, and its arenas to the binary.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_arena_id_t, mi_calloc, mi_free, mi_malloc, mi_malloc_aligned, mi_realloc,
    mi_realloc_aligned, mi_reserve_os_memory_ex, mi_zalloc, mi_zalloc_aligned,
};

/// What every mimalloc block is aligned to: a pointer's size.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

/// mimalloc as Rust's allocator. The `mimalloc` crate's asks for an aligned
/// block every time, a slower path than plain `mi_malloc`; nearly all of
/// the analysis' values (dims, shapes, scopes) need no more than a
/// pointer's alignment, which every block has, so they take the plain one.
pub struct Mimalloc;

// SAFETY: each method hands the request to the mimalloc function for it,
// aligned ones when the layout asks for more than every block has.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's functions take any size and power-of-two alignment.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (GlobalAlloc's contract).
        unsafe { mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; a block
        // reallocated keeps the alignment it was asked for.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

/// Makes tree-sitter allocate with mimalloc: the library, and the Python
/// grammar's external scanner, which reaches this allocator only when
/// built with `TREE_SITTER_REUSE_ALLOCATOR` (the workspace's
/// `.cargo/config.toml` defines it; without it the scanner calls the C
/// library's `malloc`).
///
/// # Safety
///
/// Call it at the start of `main`, before any parse, query or tree exists
/// (a tree allocated by libc must not be freed by mimalloc) and while no
/// other thread runs.
pub unsafe fn allocate_with_mimalloc() {
    let allocator = tree_sitter::Allocator {
        malloc: ts_malloc,
        calloc: ts_calloc,
        realloc: ts_realloc,
        free: ts_free,
    };
    // SAFETY: the four functions are mimalloc's; the caller promises that
    // nothing of tree-sitter's exists yet and that no other thread runs.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}

// tree-sitter expects its allocator never to return null for a non-zero
// size (its own default aborts): out of memory aborts here too.

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    // SAFETY: mimalloc's malloc takes any size.
    let p = unsafe { mi_malloc(size) };
    if p.is_null() && size != 0 {
        std::process::abort();
    }
    p
}

unsafe extern "C" fn ts_calloc(count: usize, size: usize) -> *mut c_void {
    // SAFETY: mimalloc's calloc takes any sizes (and checks the product).
    let p = unsafe { mi_calloc(count, size) };
    if p.is_null() && count != 0 && size != 0 {
        std::process::abort();
    }
    p
}

unsafe extern "C" fn ts_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `ptr` came from these functions (tree-sitter's contract).
    let p = unsafe { mi_realloc(ptr, size) };
    if p.is_null() && size != 0 {
        std::process::abort();
    }
    p
}

unsafe extern "C" fn ts_free(ptr: *mut c_void) {
    // SAFETY: `ptr` came from these functions or is null.
    unsafe { mi_free(ptr) }
}

unsafe extern "C" {
    // mimalloc's, missing from libmimalloc-sys' bindings: where an arena is.
    fn mi_arena_area(arena_id: mi_arena_id_t, size: *mut usize) -> *mut c_void;
}

/// Where mimalloc's arena `id` is, as its start and length (arenas are
/// numbered from 1 and tried in that order); `None` when there is none.
fn arena_area(id: mi_arena_id_t) -> Option<(*mut c_void, usize)> {
    let mut size = 0_usize;
    // SAFETY: reads mimalloc's table of arenas and writes the size; null
    // when there is no such arena.
    let start = unsafe { mi_arena_area(id, &mut size) };
    (!start.is_null()).then_some((start, size))
}

/// Whether mimalloc has taken memory from the system yet: it makes its
/// first arena at its first allocation.
pub fn has_arena() -> bool {
    arena_area(1).is_some()
}

/// Gives mimalloc an arena of `size` bytes, mapped now; when it is the
/// first, the heap comes from it until it is full. Its start and length,
/// or `None` when the system refused the memory.
pub fn reserve_arena(size: usize) -> Option<(*mut c_void, usize)> {
    let mut id: mi_arena_id_t = 0;
    // SAFETY: maps memory for mimalloc (committed, not exclusive: any heap
    // may take from it); `id` is written on success.
    if unsafe { mi_reserve_os_memory_ex(size, true, false, false, &mut id) } != 0 {
        return None;
    }
    arena_area(id)
}
