//! The one way to change a shared object (a list, a dict, an instance, a layer): a write moves the memo's epoch.
//!
//! The memo reuses a call's result while nothing the call could read has
//! changed (see `interp::memo`). Objects are shared between names and
//! calls, so any write to one must tell the memo; a forgotten `epoch += 1`
//! used to be a stale shape that no test saw. Here the mutable parts of
//! objects are `Shared`, which gives a mutable borrow only in exchange for
//! the `Epoch` it moves (`write`), or, where no memo can have seen the
//! object, through `write_unobserved`, whose every use says why.

use std::cell::{Ref, RefCell, RefMut};

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
#[derive(Debug, Default, Clone)]
pub struct Shared<T>(RefCell<T>);

impl<T> Shared<T> {
    pub(crate) fn new(value: T) -> Self {
        Shared(RefCell::new(value))
    }

    /// Reads the value.
    pub(crate) fn borrow(&self) -> Ref<'_, T> {
        self.0.borrow()
    }

    /// Writes the value, telling the memo: results that read it before
    /// are not reused.
    pub(crate) fn write(&self, epoch: &mut Epoch) -> RefMut<'_, T> {
        epoch.bump();
        self.0.borrow_mut()
    }

    /// Writes the value without telling the memo, which is right only where
    /// no memoised result can have read it: an object being built or copied
    /// right now, an undecided branch put back as it was before (the memo
    /// saw no other state), or a module namespace between two analyses.
    /// Each caller says which.
    pub(crate) fn write_unobserved(&self) -> RefMut<'_, T> {
        self.0.borrow_mut()
    }
}

impl<T: Copy> Shared<T> {
    /// A copy of the value.
    pub(crate) fn get(&self) -> T {
        *self.0.borrow()
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
