//! Writes to instances no memo key has read, and whether any of them wrote
//! an instance that existed when a call began.
//!
//! A constructor fills in the instance it was given (`self.fc = ...`)
//! before any key has read it, so the write cannot change a structure the
//! memo numbered; but a call made earlier may have read the instance
//! another way (through a global), so such a write ends what that call's
//! result holds for. An instance made after a call began is another
//! matter: nothing before the call could read it, so the call itself may
//! fill it in (`smoke()` building and running a model) and still be kept,
//! and so may anything before it. Each instance has a serial
//! (`Instance::serial`), greater for later ones; a call is disturbed by a
//! write since it began only when the instance written is older than the
//! call.

/// Where the writes stood when a call began, and the serial the next
/// instance was to get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnseenMark {
    writes: u64,
    serial: u64,
}

/// The writes of one run, kept so that "the oldest instance written since
/// a mark" takes a binary search: only the writes older than every later
/// write are kept (each one's serial and place in the run), so their
/// serials grow along the list and the first one after a mark is the
/// oldest instance written since.
#[derive(Debug, Default)]
pub(crate) struct UnseenWrites {
    count: u64,
    minima: Vec<(u64, u64)>,
}

impl UnseenWrites {
    /// An instance of this serial was written.
    pub(crate) fn note(&mut self, serial: u64) {
        self.count += 1;
        while self.minima.last().is_some_and(|(_, s)| *s >= serial) {
            self.minima.pop();
        }
        self.minima.push((self.count, serial));
    }

    pub(crate) fn mark(&self) -> UnseenMark {
        UnseenMark {
            writes: self.count,
            serial: crate::value::Instance::serial_mark(),
        }
    }

    /// Whether an instance made before `mark` was written since.
    pub(crate) fn older_written_since(&self, mark: &UnseenMark) -> bool {
        if self.count == mark.writes {
            return false;
        }
        let i = self.minima.partition_point(|(at, _)| *at <= mark.writes);
        self.minima
            .get(i)
            .is_some_and(|(_, serial)| *serial < mark.serial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the plain reading: any write since the mark to an instance
    /// whose serial is below the mark's.
    #[test]
    fn agrees_with_every_write_looked_at() {
        let serials = [5u64, 9, 3, 7, 7, 12, 1, 4, 10, 2, 8, 11];
        for mark_at in 0..=serials.len() {
            for mark_serial in 0..14 {
                let mut log = UnseenWrites::default();
                for s in &serials[..mark_at] {
                    log.note(*s);
                }
                let mark = UnseenMark {
                    writes: log.count,
                    serial: mark_serial,
                };
                for (k, s) in serials.iter().enumerate().skip(mark_at) {
                    log.note(*s);
                    let expected = serials[mark_at..=k].iter().any(|w| *w < mark_serial);
                    assert_eq!(
                        log.older_written_since(&mark),
                        expected,
                        "{mark_at} {mark_serial} {k}"
                    );
                }
                assert!(
                    !UnseenWrites::default().older_written_since(&UnseenWrites::default().mark())
                );
            }
        }
    }
}
