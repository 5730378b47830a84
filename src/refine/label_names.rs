//! The names of a system's labels, looked up once each and shared by the workers of a
//! search, for ordering events by name (the order that makes a search's choices canonical).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::ts::{Label, TransitionSystem};

/// A cache of label names.
pub(crate) struct LabelNames<'a, T: TransitionSystem> {
    ts: &'a T,
    names: RwLock<HashMap<Label, Arc<str>>>,
}

impl<'a, T: TransitionSystem> LabelNames<'a, T> {
    /// An empty cache for the labels of `ts`.
    pub(crate) fn new(ts: &'a T) -> Self {
        LabelNames {
            ts,
            names: RwLock::new(HashMap::new()),
        }
    }

    /// The name of `label`.
    pub(crate) fn name(&self, label: Label) -> Arc<str> {
        if let Some(name) = self.names.read().get(&label) {
            return name.clone();
        }
        let name: Arc<str> = self.ts.label_name(label).into();
        self.names.write().entry(label).or_insert(name).clone()
    }

    /// Labels ordered by name (then by label, for systems with two labels of one name).
    pub(crate) fn cmp(&self, a: Label, b: Label) -> Ordering {
        if a == b {
            return Ordering::Equal;
        }
        self.name(a).cmp(&self.name(b)).then(a.cmp(&b))
    }
}
