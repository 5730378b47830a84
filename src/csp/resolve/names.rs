//! Names: the built-in names, the names outside weft's subset, lookup of a name in scope and
//! among the globals, and the suggestion of a near name for an unknown one.

use super::*;

/// FDR's compression functions (see [`crate::reduce::Compression`]): built in, and accepted in
/// `transparent` and `external` declarations; the names of [`crate::reduce::compressions::NAMES`].
pub const COMPRESSIONS: [&str; crate::reduce::compressions::NAMES.len()] = {
    let names = crate::reduce::compressions::NAMES;
    let mut out = [""; crate::reduce::compressions::NAMES.len()];
    let mut i = 0;
    while i < names.len() {
        out[i] = names[i].0;
        i += 1;
    }
    out
};

/// FDR built-ins that weft does not support, with the reason given to users.
const UNSUPPORTED_BUILTINS: &[(&str, &str)] =
    &[("WEAK_BUFFER", "the built-in process `WEAK_BUFFER`")];

/// FDR's `external` functions that weft does not have, with what they are. FDR's manual does
/// not define their semantics (they serve FDR's own checks: determinisation and the watchdog
/// transformations of a specification), so weft accepts their declaration and rejects a use,
/// at the use, as outside its subset.
pub(super) const UNSUPPORTED_EXTERNALS: &[(&str, &str)] = &[
    ("deter", "determinisation"),
    (
        "failure_watchdog",
        "the failures watchdog of a specification",
    ),
    ("trace_watchdog", "the traces watchdog of a specification"),
];

/// The description of FDR's external function `name` if weft does not have it.
pub(super) fn unsupported_external(name: &str) -> Option<&'static str> {
    UNSUPPORTED_EXTERNALS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, what)| *what)
}

/// The built-ins FDR provides only once declared `external` (`external prioritise`).
pub const EXTERNAL_BUILTINS: [Builtin; 2] = [Builtin::Prioritise, Builtin::PrioritisePo];

/// The built-in declared by `external name`, if weft has it (`prioritise_nocache` is
/// `prioritise`, which weft never caches).
pub(super) fn external_builtin(name: &str) -> Option<Builtin> {
    if name == "prioritise_nocache" {
        return Some(Builtin::Prioritise);
    }
    EXTERNAL_BUILTINS.iter().copied().find(|b| b.name() == name)
}

pub(super) fn builtin_global(name: &str) -> Option<GlobalKind> {
    if let Some(b) = Builtin::ALL
        .iter()
        .find(|b| b.name() == name && !EXTERNAL_BUILTINS.contains(b))
    {
        return Some(GlobalKind::Builtin(*b));
    }
    Some(match name {
        "STOP" => GlobalKind::Stop,
        "SKIP" => GlobalKind::Skip,
        "DIV" => GlobalKind::Div,
        "Int" => GlobalKind::Int,
        "Char" => GlobalKind::Char,
        "emptyMap" => GlobalKind::EmptyMap,
        "Proc" => GlobalKind::ProcType,
        "Bool" => GlobalKind::Bool,
        "Events" => GlobalKind::Events,
        "True" => GlobalKind::True,
        "False" => GlobalKind::False,
        _ => return None,
    })
}

/// A local name in scope, with the arity of its first argument group if it is a `let`
/// function.
#[derive(Clone)]
pub(super) struct Local {
    pub(super) name: Name,
    pub(super) arity: Option<usize>,
}

/// The candidate nearest to `name` in edit distance (insertions, deletions, substitutions
/// and transpositions of adjacent characters, ignoring case), if it is close: at most one
/// edit for names of three or four characters, two up to eight, three beyond; a name that
/// differs only in case always qualifies. Ties go to the candidate with fewer edits when case
/// counts, then to the first in alphabetical order.
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = match len {
        0..=2 => 0,
        3..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    let lower = name.to_lowercase();
    let mut best: Option<((usize, usize, &str), &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = edit_distance(&lower, &c.to_lowercase());
        if d > limit {
            continue;
        }
        let key = (d, edit_distance(name, c), c);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance between `a` and `b` (by characters).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows i-2, i-1 and i of the table
    let mut prev2 = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

impl Resolver<'_> {
    /// True if `name` used as a pattern is a constant (a channel or constructor) rather than
    /// a variable.
    pub(super) fn is_constant_name(&self, name: &Name) -> bool {
        !self.scope.iter().any(|l| &l.name == name)
            && matches!(
                self.prog.globals.get(name),
                Some(
                    GlobalKind::Chan(_)
                        | GlobalKind::Ctor(_)
                        | GlobalKind::True
                        | GlobalKind::False
                )
            )
    }

    pub(super) fn lookup_local(&self, name: &str) -> Option<&Local> {
        self.scope.iter().rev().find(|l| &*l.name == name)
    }

    pub(super) fn resolve_name(&mut self, name: &Name, span: Span) -> CResult<Free> {
        if self.lookup_local(name).is_some() {
            return Ok(BTreeSet::from([name.clone()]));
        }
        if self.prog.globals.contains_key(name) || self.prog.broken.contains_key(name) {
            self.refs.insert(name.clone());
            return Ok(BTreeSet::new());
        }
        if let Some(g) = builtin_global(name) {
            self.refs.insert(name.clone());
            self.prog.globals.insert(name.clone(), g);
            return Ok(BTreeSet::new());
        }
        if let Some(c) = COMPRESSIONS.iter().find(|c| **c == &**name) {
            self.refs.insert(name.clone());
            self.prog
                .globals
                .insert(name.clone(), GlobalKind::Compression(c));
            return Ok(BTreeSet::new());
        }
        if external_builtin(name).is_some() {
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!("`{name}` must be declared first: `external {name}`"),
            ));
        }
        if matches!(&**name, "TSTOP" | "TSKIP") {
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!("`{name}` is defined only inside a timed section (`Timed(et) {{ ... }}`)"),
            ));
        }
        if matches!(&**name, "WAIT" | "timed_priority") {
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!(
                    "`{name}` is defined only inside a timed section (`Timed(et) {{ ... }}`), \
                     applied to one argument"
                ),
            ));
        }
        if let Some(module) = name.strip_suffix(crate::csp::syntax::modules::MODULE_SUFFIX) {
            let simple = module.rsplit("::").next().unwrap_or(module);
            let outside = if self.prog.globals.contains_key(simple) {
                format!(
                    ", and it is ambiguous with the `{simple}` declared outside the module \
                     (FDR refuses such a name)"
                )
            } else {
                String::new()
            };
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!("`{simple}` names the module `{module}` here, which is no value{outside}"),
            ));
        }
        let private = format!("{name}{}", crate::csp::syntax::modules::PRIVATE_SUFFIX);
        if self.prog.globals.contains_key(&*private) {
            let module = name.rsplit_once("::").map_or("", |(m, _)| m);
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!(
                    "`{name}` is private to the module `{module}` (it is declared before \
                     `exports`)"
                ),
            ));
        }
        if let Some(what) = unsupported_external(name) {
            return Err(RawError::new(
                span,
                ErrorKind::Unsupported,
                format!(
                    "the external function `{name}` ({what}) is outside weft's CSPm subset \
                     (FDR's manual does not define it)"
                ),
            ));
        }
        if &**name == "Event" {
            // a type (of type annotations), as in FDR, where `Events` is the set
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                "`Event` is the type of events, which is no value: it is written only in type \
                 annotations (`f :: (Event) -> Bool`); the set of all events is `Events`"
                    .to_string(),
            ));
        }
        if let Some((_, what)) = UNSUPPORTED_BUILTINS.iter().find(|(n, _)| *n == &**name) {
            return Err(RawError::new(
                span,
                ErrorKind::Unsupported,
                format!("{what} is outside weft's CSPm subset"),
            ));
        }
        let suggestion = match self.nearest_name(name) {
            Some(n) => format!("; did you mean `{n}`?"),
            None => String::new(),
        };
        Err(RawError::new(
            span,
            ErrorKind::UnknownName,
            format!("unknown name `{name}`{suggestion}"),
        ))
    }

    /// The defined name nearest to the unknown `name`, if one is close enough to be a
    /// likely misspelling (see [`nearest`]).
    pub(super) fn nearest_name(&self, name: &str) -> Option<Name> {
        let locals = self.scope.iter().map(|l| &*l.name);
        let globals = self.prog.globals.keys().map(|n| &**n);
        let broken = self.prog.broken.keys().map(|n| &**n);
        let builtins = Builtin::ALL.iter().map(|b| b.name());
        let fixed = [
            "STOP", "SKIP", "DIV", "Int", "Proc", "Bool", "Events", "True", "False", "true",
            "false", "Char", "emptyMap",
        ];
        let candidates = locals
            .chain(globals)
            .chain(broken)
            .chain(builtins)
            .chain(fixed)
            .chain(COMPRESSIONS);
        nearest(name, candidates).map(Name::from)
    }
}
