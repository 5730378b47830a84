//! Synchronisation for the term library: the busy-forbidden readers-writer protocol (Table 5.2
//! of the thesis), the barriers of its handshake, and the alternative locks it is measured
//! against. Imports nothing of weft.
//!
//! Under `cfg(loom)` the atomics, the mutex and the cells come from loom (see `shim`), so the
//! loom models in `loom-tests/` check this very code.

mod barrier;
mod busy_forbidden;
mod section;
pub(crate) mod shim;

pub use barrier::Barriers;
pub use busy_forbidden::{BusyForbidden, ExclusiveGuard, Participant, SharedGuard};
pub use section::{
    ParkingLotMember, ParkingLotRwLock, SectionLock, StdMember, StdRwLock, Unsynchronised,
    UnsynchronisedMember,
};
