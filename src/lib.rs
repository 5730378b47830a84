//! weft: a multi-threaded explicit-state exploration engine and antichain refinement checker.
//!
//! Layers, bottom to top (a module imports only from layers below it): `sync`; `term`,
//! [`ts`] and [`threads`]; [`lts`]; [`refine`]; [`dist`] (distributed exploration on timely
//! dataflow, over `explore`, `ts` and `lts`; it implements `refine`'s `SharedPairSearch`, the
//! one way `refine` and `verify` reach other processes, handed in by the CLI). See
//! `DESIGN.md` in the project's shared folder for the whole shape.

// Processes are terms of the process-wide table, which loom builds (models of `sync` and
// `term` only) leave out.
#[cfg(not(loom))]
pub mod csp;
#[cfg(not(loom))]
pub mod diag;
#[cfg(not(loom))]
pub mod dist;
pub mod excerpt;
pub mod explore;
mod gzip;
mod hash;
pub mod lts;
pub mod reduce;
pub mod refine;
pub mod sync;
pub mod term;
pub mod threads;
pub mod ts;
#[cfg(not(loom))]
pub mod verify;
