//! tree-sitter's C allocations served by mimalloc, as the binary's Rust ones are.
//!
//! tree-sitter calls libc's `malloc` unless told otherwise. In a process
//! whose Rust side runs on mimalloc that is a second heap: glibc grows a
//! thread's arena a page at a time (a system call and a fault each) and its
//! `malloc`/`free` took a tenth of the parse of a model file.

// The one place the workspace allows `unsafe`: handing mimalloc's C
// functions to tree-sitter's C code.
#![allow(unsafe_code)]

use std::ffi::c_void;

use libmimalloc_sys::{mi_calloc, mi_free, mi_malloc, mi_realloc};

/// Makes tree-sitter allocate with mimalloc.
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
