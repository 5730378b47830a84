//! Function symbols: a name and an arity, interned so that equality is a pointer comparison.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

#[derive(Debug)]
struct SymbolInfo {
    name: Box<str>,
    arity: usize,
    /// True only for the symbol of 64-bit integer terms.
    is_int: bool,
}

/// An interned function symbol `f` of arity `n`. Copy, compared and hashed by address.
#[derive(Clone, Copy)]
pub struct Symbol(&'static SymbolInfo);

type Interned = HashMap<(Box<str>, usize), &'static SymbolInfo>;

fn interned() -> &'static Mutex<Interned> {
    static INTERNED: OnceLock<Mutex<Interned>> = OnceLock::new();
    INTERNED.get_or_init(Default::default)
}

impl Symbol {
    /// The symbol named `name` with `arity` arguments (the same one on every call).
    ///
    /// Symbols live as long as the process: create them once, not per term.
    pub fn new(name: &str, arity: usize) -> Symbol {
        // A poisoned map is still consistent: entries are inserted whole.
        let mut map = interned().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = map.get(&(Box::from(name), arity)) {
            return Symbol(info);
        }
        let info: &'static SymbolInfo = Box::leak(Box::new(SymbolInfo {
            name: name.into(),
            arity,
            is_int: false,
        }));
        map.insert((name.into(), arity), info);
        Symbol(info)
    }

    /// The symbol of 64-bit integer terms (arity 0; the value is stored in the term).
    pub fn int() -> Symbol {
        static INT: OnceLock<&'static SymbolInfo> = OnceLock::new();
        Symbol(INT.get_or_init(|| {
            Box::leak(Box::new(SymbolInfo {
                name: "<int>".into(),
                arity: 0,
                is_int: true,
            }))
        }))
    }

    /// The symbol's name.
    pub fn name(&self) -> &'static str {
        &self.0.name
    }

    /// The number of arguments.
    pub fn arity(&self) -> usize {
        self.0.arity
    }

    /// True for the symbol of integer terms.
    pub fn is_int(&self) -> bool {
        self.0.is_int
    }

    /// Words stored after a term's header: one per argument, or the integer's value.
    #[inline]
    pub(crate) fn payload_len(&self) -> usize {
        if self.0.is_int {
            1
        } else {
            self.0.arity
        }
    }

    #[inline]
    pub(crate) fn addr(&self) -> usize {
        self.0 as *const SymbolInfo as usize
    }
}

impl PartialEq for Symbol {
    #[inline]
    fn eq(&self, other: &Symbol) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Symbol {}

impl Hash for Symbol {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.addr().hash(state);
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name(), self.arity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_interned_by_name_and_arity() {
        let f2 = Symbol::new("f", 2);
        assert_eq!(f2, Symbol::new("f", 2));
        assert_ne!(f2, Symbol::new("f", 1));
        assert_ne!(f2, Symbol::new("g", 2));
        assert_eq!(f2.name(), "f");
        assert_eq!(f2.arity(), 2);
        assert!(!f2.is_int());
        assert!(Symbol::int().is_int());
        assert_ne!(Symbol::int(), Symbol::new("<int>", 0));
    }
}
