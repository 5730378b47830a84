//! The program's tables: the value of every top-level definition and pattern binding, the
//! fields of every channel, constructor and name type, the values of every datatype, the
//! events of every channel and the event table.
//!
//! The loader fills the tables of types and events once, at load time, in dependency order.
//! While it does, an entry asked for before its turn (a channel type that uses a constant) is
//! computed then, in a [`LoadCells`] cell, once. When the load ends the cells become the
//! [`Tables`], which nothing writes afterwards.
//!
//! The values of top-level definitions and pattern bindings are the exception: as in FDR,
//! each is computed when first used, once (a cell of [`Tables::defs`] / [`Tables::binds`]
//! written at most once, with a value that depends on the script only). A script may define a
//! constant that no assertion uses and that is large, fails, or never terminates (a set of all
//! configurations for another instance, a search written for the interpreter): computing it
//! at load would make the script slow, or hang, for nothing.

use super::*;

/// The tables of a loaded script, read-only (see the module documentation).
#[derive(Default)]
pub(super) struct Tables {
    /// The value of each top-level definition (`prog.top.defs`), computed on first use (see
    /// the module documentation); a function's value is the function itself.
    pub(super) defs: Vec<OnceLock<EResult<Value>>>,
    /// The value of the right-hand side of each top-level pattern binding, computed on first
    /// use.
    pub(super) binds: Vec<OnceLock<EResult<Value>>>,
    /// The field types of each channel.
    pub(super) chan_fields: Vec<EResult<Arc<[FieldSet]>>>,
    /// The field types of each datatype constructor.
    pub(super) ctor_fields: Vec<EResult<Arc<[FieldSet]>>>,
    /// The set of values of each datatype (an [`InfSet`] when infinite or too large).
    pub(super) datatypes: Vec<EResult<Value>>,
    /// The field types of each name type.
    pub(super) nametypes: Vec<EResult<Arc<[FieldSet]>>>,
    /// The sorted events of each channel whose events are enumerated (an error for the
    /// others, which are never asked for them).
    pub(super) chan_events: Vec<EResult<AtomTable>>,
    /// The event table (`None` only while loading).
    pub(super) events: Option<EResult<Arc<EventTable>>>,
    /// Names whose definition has an error, with it: every use reports it.
    pub(super) broken: HashMap<Name, CspError>,
    /// Channels whose type has an error (their events are left out of `Events`).
    pub(super) broken_chans: Vec<bool>,
    /// Why `Events` cannot be used (a channel's type has an error).
    pub(super) events_error: Option<CspError>,
}

/// The cells the loader fills while it computes the tables, each once; dropped at the end
/// of the load (see [`LoadCells::into_tables`]).
pub(super) struct LoadCells {
    pub(super) chan_fields: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    pub(super) ctor_fields: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    pub(super) datatypes: Vec<OnceLock<EResult<Value>>>,
    pub(super) nametypes: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    pub(super) chan_events: Vec<OnceLock<EResult<AtomTable>>>,
    pub(super) events: OnceLock<EResult<Arc<EventTable>>>,
}

fn cells<T>(n: usize) -> Vec<OnceLock<T>> {
    (0..n).map(|_| OnceLock::new()).collect()
}

/// The values of filled cells (an internal error where the loader left one empty).
fn filled<T>(cells: Vec<OnceLock<EResult<T>>>, what: &str) -> Vec<EResult<T>> {
    cells
        .into_iter()
        .map(|c| c.into_inner().unwrap_or_else(|| Err(unfilled(what))))
        .collect()
}

fn unfilled(what: &str) -> CspError {
    CspError::unpositioned(
        ErrorKind::Eval,
        format!("internal error: the loader left an entry of the table of {what} empty"),
    )
}

impl LoadCells {
    /// Empty cells for the tables of `prog`.
    pub(super) fn new(prog: &Program) -> LoadCells {
        LoadCells {
            chan_fields: cells(prog.channels.len()),
            ctor_fields: cells(prog.ctors.len()),
            datatypes: cells(prog.datatypes.len()),
            nametypes: cells(prog.nametypes.len()),
            chan_events: cells(prog.channels.len()),
            events: OnceLock::new(),
        }
    }

    /// The filled cells, as the values of `tables` (whose other fields the loader set).
    pub(super) fn into_tables(self, tables: &mut Tables) {
        tables.chan_fields = filled(self.chan_fields, "channel types");
        tables.ctor_fields = filled(self.ctor_fields, "constructor fields");
        tables.datatypes = filled(self.datatypes, "datatypes");
        tables.nametypes = filled(self.nametypes, "name types");
        tables.chan_events = filled(self.chan_events, "channel events");
        tables.events = Some(
            self.events
                .into_inner()
                .unwrap_or_else(|| Err(unfilled("events"))),
        );
    }
}

impl Evaluator {
    /// An entry of a table: after load, its value in [`Tables`]; while loading, its cell
    /// (chosen by `cell`), filled by `compute` the first time it is asked for.
    pub(super) fn table_entry<T: Clone>(
        &self,
        loaded: Option<&EResult<T>>,
        cell: impl FnOnce(&LoadCells) -> &OnceLock<EResult<T>>,
        compute: impl FnOnce() -> EResult<T>,
    ) -> EResult<T> {
        if let Some(v) = loaded {
            return v.clone();
        }
        let Some(cells) = &self.loading else {
            return Err(self.internal("a table entry missing after load"));
        };
        let cell = cell(cells);
        if let Some(v) = cell.get() {
            return v.clone();
        }
        let v = compute();
        cell.get_or_init(|| v).clone()
    }

    /// Fills the tables in dependency order: every channel, constructor, datatype and name
    /// type, then the events (definitions are computed on first use).
    pub(super) fn fill_tables(&self) {
        let _g = StackGuard::enter();
        for c in 0..self.prog.channels.len() as u32 {
            let _ = self.chan_fields(c);
        }
        for k in 0..self.prog.ctors.len() as u32 {
            let _ = self.ctor_fields(k);
        }
        for d in 0..self.prog.datatypes.len() as u32 {
            let _ = self.datatype_value(d);
        }
        for t in 0..self.prog.nametypes.len() as u32 {
            let _ = self.nametype_fields(t);
        }
        let _ = self.events();
        for c in 0..self.prog.channels.len() {
            let _ = self.chan_events(c as u32, self.prog.channels[c].span);
        }
    }

    /// The cell of a definition's or a pattern binding's value: filled with `compute`'s result
    /// the first time it is asked for, then read.
    pub(super) fn lazy_entry(
        cell: &OnceLock<EResult<Value>>,
        compute: impl FnOnce() -> EResult<Value>,
    ) -> EResult<Value> {
        if let Some(v) = cell.get() {
            return v.clone();
        }
        let v = compute();
        cell.get_or_init(|| v).clone()
    }
}
