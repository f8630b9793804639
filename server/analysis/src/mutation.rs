//! The one way to change a shared object (a list, a dict, an instance, a layer): a write moves the memo's epoch.
//!
//! The memo reuses a call's result while nothing the call could read has
//! changed (see `interp::memo`). Objects are shared between names and
//! calls, so any write to one must tell the memo; a forgotten `epoch += 1`
//! used to be a stale shape that no test saw. Here the mutable parts of
//! objects are `Shared`, which gives a mutable borrow only in exchange for
//! the `Epoch` it moves (`write`), or, where no memo can have seen the
//! object, through `write_unobserved`, whose every use says why.

use std::cell::{Cell, Ref, RefCell, RefMut};

/// How many times an object the memo may have read has changed. Results
/// memoised at one epoch are reused only at the same epoch.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Epoch(u64);

impl Epoch {
    /// Something a call could read changed.
    pub(crate) fn bump(&mut self) {
        self.0 += 1;
    }
}

/// A mutable part of a shared object: read freely, written only by moving
/// the epoch.
///
/// An object of a module top level kept for later analyses (see
/// `workspace::executed`) is marked kept: a write to it is noted (`written`)
/// so that the analysis can put it back as it was kept when it ends, and
/// the next analysis finds what the module's top level made, not what the
/// last one added (a registry a file appends to would grow with each).
#[derive(Debug, Default)]
pub struct Shared<T> {
    value: RefCell<T>,
    /// How many times it was written: a kept copy is stale when it differs.
    writes: Cell<u32>,
    kept: Cell<bool>,
}

/// A copy is a new object: not kept, whatever the original is.
impl<T: Clone> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared::new(self.value.borrow().clone())
    }
}

thread_local! {
    /// The kept objects written since the last `take_written`, by address.
    static WRITTEN: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The addresses of the kept `Shared` values written since the last call.
pub(crate) fn take_written() -> Vec<usize> {
    WRITTEN.with(|written| std::mem::take(&mut *written.borrow_mut()))
}

/// A mark in the list of written kept values (see `written_since`).
pub(crate) fn written_mark() -> usize {
    WRITTEN.with(|written| written.borrow().len())
}

/// The kept values written since `mark`, without taking them.
pub(crate) fn written_since(mark: usize) -> Vec<usize> {
    WRITTEN.with(|written| {
        written
            .borrow()
            .get(mark..)
            .map(<[usize]>::to_vec)
            .unwrap_or_default()
    })
}

impl<T> Shared<T> {
    pub(crate) fn new(value: T) -> Self {
        Shared {
            value: RefCell::new(value),
            writes: Cell::new(0),
            kept: Cell::new(false),
        }
    }

    /// Reads the value.
    pub(crate) fn borrow(&self) -> Ref<'_, T> {
        self.value.borrow()
    }

    /// Writes the value, telling the memo: results that read it before
    /// are not reused.
    pub(crate) fn write(&self, epoch: &mut Epoch) -> RefMut<'_, T> {
        epoch.bump();
        self.write_unobserved()
    }

    /// Writes the value without telling the memo, which is right only where
    /// no memoised result can have read it: an object being built or copied
    /// right now, an undecided branch put back as it was before (the memo
    /// saw no other state), or a module namespace between two analyses.
    /// Each caller says which.
    pub(crate) fn write_unobserved(&self) -> RefMut<'_, T> {
        self.writes.set(self.writes.get().wrapping_add(1));
        if self.kept.get() {
            WRITTEN.with(|written| written.borrow_mut().push(self.address()));
        }
        self.value.borrow_mut()
    }

    /// How many times it was written (wrapping).
    pub(crate) fn writes(&self) -> u32 {
        self.writes.get()
    }

    /// Marks it as part of a kept module top level (see the type's comment).
    pub(crate) fn mark_kept(&self) {
        self.kept.set(true);
    }

    /// Its address, which names it in the list of written kept objects.
    pub(crate) fn address(&self) -> usize {
        std::ptr::from_ref(self).addr()
    }
}

impl<T: Copy> Shared<T> {
    /// A copy of the value.
    pub(crate) fn get(&self) -> T {
        *self.value.borrow()
    }

    /// Sets the value, telling the memo (see `write`).
    pub(crate) fn set(&self, value: T, epoch: &mut Epoch) {
        *self.write(epoch) = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_moves_the_epoch_and_a_read_does_not() {
        let mut epoch = Epoch::default();
        let items = Shared::new(vec![1, 2]);
        let before = epoch;
        assert_eq!(items.borrow().len(), 2);
        assert_eq!(epoch, before);
        items.write(&mut epoch).push(3);
        assert_ne!(epoch, before);
        assert_eq!(*items.borrow(), vec![1, 2, 3]);
        let flag = Shared::new(false);
        let at = epoch;
        flag.set(true, &mut epoch);
        assert!(flag.get());
        assert_ne!(epoch, at);
    }
}
