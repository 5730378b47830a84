//! Processes, the last stage of the CSPm front end: process values encoded as terms, event
//! labels, the firing rules of the operators, leaves and their layout in a state, networks of
//! parallel components, and the system the engines explore.

mod chase;
mod chase_net;
#[cfg(test)]
mod chase_tests;
pub(crate) mod compress;
mod construction;
pub(crate) mod describe;
mod encoding;
mod growth;
pub mod labels;
pub(crate) mod layout;
mod leaves;
pub(crate) mod network;
pub(crate) mod priority;
pub(crate) mod semantics;
pub(crate) mod shared_leaves;
pub(crate) mod stop_poll;
mod structural;
mod successor_order;
pub(crate) mod system;
mod term_order;
pub(crate) mod terms;
pub(crate) mod timed;
mod value_codec;
