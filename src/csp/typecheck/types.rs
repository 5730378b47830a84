//! CSPm types, type variables and unification.
//!
//! A type variable is flexible (bound by unification, with the type classes it must be an
//! instance of) or rigid (a variable of a type annotation, which stands for every type with
//! its declared classes and so matches only itself). [`Ty::Any`] is the type the checker
//! gives what it cannot type with certainty: it unifies with every type and binds nothing.
//!
//! A type's children are shared ([`Rc`]): copying a type, looking through a bound variable
//! and resolving a type that has nothing left to resolve copy no tree, so deep types (a
//! sequence of sequences of tuples, a function of many curried arguments) cost time in
//! proportion to their size, not its square.

use std::fmt;
use std::rc::Rc;

pub(super) use super::classes::{Class, Classes};

/// A type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// A flexible type variable.
    Var(u32),
    /// A rigid type variable (of an annotation being checked).
    Rigid(u32),
    /// What the checker cannot type with certainty: unifies with everything.
    Any,
    Int,
    Bool,
    Char,
    Proc,
    Event,
    Seq(Rc<Ty>),
    Set(Rc<Ty>),
    Tuple(Rc<[Ty]>),
    /// `(args) -> result`
    Fun(Rc<[Ty]>, Rc<Ty>),
    /// `(| k => v |)`
    Map(Rc<Ty>, Rc<Ty>),
    /// A datatype (its index and name).
    Data(u32, std::sync::Arc<str>),
    /// `a => b`: a value that, dotted with an `a`, gives a `b` (a channel or constructor
    /// with fields left).
    Dotable(Rc<Ty>, Rc<Ty>),
    /// `a.b.c`: a dotted value that is not one event or datatype value (`1.2`, `true.B.0`),
    /// with the types of its parts: at least two, each a single field (never a dotted
    /// value or a variable; a value still waiting for fields only as the last part, a bare
    /// constructor after a datatype's value, as in `A.1.A`).
    Dot(Rc<[Ty]>),
}

impl Ty {
    /// `<t>`
    pub(super) fn seq(t: Ty) -> Ty {
        Ty::Seq(Rc::new(t))
    }
    /// `{t}`
    pub(super) fn set(t: Ty) -> Ty {
        Ty::Set(Rc::new(t))
    }
    /// `(ts)`
    pub(super) fn tuple(ts: Vec<Ty>) -> Ty {
        Ty::Tuple(ts.into())
    }
    /// `(args) -> result`
    pub(super) fn fun(args: Vec<Ty>, result: Ty) -> Ty {
        Ty::Fun(args.into(), Rc::new(result))
    }
    /// `(| k => v |)`
    pub(super) fn map(k: Ty, v: Ty) -> Ty {
        Ty::Map(Rc::new(k), Rc::new(v))
    }
    /// `a => b`
    pub(super) fn dotable(a: Ty, b: Ty) -> Ty {
        Ty::Dotable(Rc::new(a), Rc::new(b))
    }
}

/// `t` rebuilt from `rebuilt`, the children some transformation gave where it changed them
/// (`None`: unchanged, shared with `t`); `None` when it changed none.
fn rebuild(t: &Ty, mut child: impl FnMut(&Ty) -> Option<Ty>) -> Option<Ty> {
    let one = |a: &Rc<Ty>, c: Option<Ty>| c.map(Rc::new).unwrap_or_else(|| a.clone());
    let many = |ts: &Rc<[Ty]>, child: &mut dyn FnMut(&Ty) -> Option<Ty>| -> Option<Rc<[Ty]>> {
        let new: Vec<Option<Ty>> = ts.iter().map(&mut *child).collect();
        if new.iter().all(Option::is_none) {
            return None;
        }
        Some(
            new.into_iter()
                .zip(ts.iter())
                .map(|(n, t)| n.unwrap_or_else(|| t.clone()))
                .collect(),
        )
    };
    match t {
        Ty::Seq(a) => child(a).map(|a| Ty::Seq(Rc::new(a))),
        Ty::Set(a) => child(a).map(|a| Ty::Set(Rc::new(a))),
        Ty::Tuple(ts) => many(ts, &mut child).map(Ty::Tuple),
        Ty::Dot(ts) => many(ts, &mut child).map(Ty::Dot),
        Ty::Fun(args, r) => {
            let new_args = many(args, &mut child);
            let new_r = child(r);
            if new_args.is_none() && new_r.is_none() {
                return None;
            }
            Some(Ty::Fun(
                new_args.unwrap_or_else(|| args.clone()),
                one(r, new_r),
            ))
        }
        Ty::Map(a, b) | Ty::Dotable(a, b) => {
            let (na, nb) = (child(a), child(b));
            if na.is_none() && nb.is_none() {
                return None;
            }
            let (a, b) = (one(a, na), one(b, nb));
            Some(match t {
                Ty::Map(..) => Ty::Map(a, b),
                _ => Ty::Dotable(a, b),
            })
        }
        _ => None,
    }
}

/// `t` with flexible variables in `flex` and rigid ones in `rigid` replaced (its parts
/// without such variables shared with `t`).
pub(super) fn subst(
    t: &Ty,
    flex: &std::collections::HashMap<u32, Ty>,
    rigid: &std::collections::HashMap<u32, Ty>,
) -> Ty {
    subst_changed(t, flex, rigid).unwrap_or_else(|| t.clone())
}

fn subst_changed(
    t: &Ty,
    flex: &std::collections::HashMap<u32, Ty>,
    rigid: &std::collections::HashMap<u32, Ty>,
) -> Option<Ty> {
    match t {
        Ty::Var(v) => flex.get(v).cloned(),
        Ty::Rigid(r) => rigid.get(r).cloned(),
        t => rebuild(t, |c| subst_changed(c, flex, rigid)),
    }
}

/// A type mismatch: the two types (as far as resolved) that could not be unified, or a
/// class a type is not an instance of.
#[derive(Clone, Debug)]
pub(super) enum Mismatch {
    Types(Ty, Ty),
    NoInstance(Class, Ty),
    Occurs(Ty, Ty),
    /// A dot pattern of (at least) this many parts matched with a dotted value of fewer
    /// fields.
    DotParts(usize, Ty),
}

/// The most unbound variables [`Vars`] remembers below one bound variable (a bigger set is
/// not remembered, and the occurs check walks that binding).
const FREE_BELOW_CAP: usize = 16;

/// The type variables: bindings of flexible ones and the names and classes of rigid ones.
#[derive(Default)]
pub(super) struct Vars {
    bound: Vec<Option<Ty>>,
    classes: Vec<Classes>,
    rigid: Vec<(String, Classes)>,
    /// For a bound flexible variable, the unbound variables of what it stands for, as last
    /// computed (when there were at most [`FREE_BELOW_CAP`] of them). Binding only ever
    /// replaces an unbound variable, so the set is still exact while all its members are
    /// unbound; when some are bound, each of those is replaced by its own set. The occurs
    /// check reads it instead of walking the binding again, so a chain of bindings, each
    /// the type below it in one more constructor (the types of a chain of monomorphic
    /// `let`s), is checked in time linear in the chain, not quadratic.
    free_below: Vec<FreeBelow>,
    /// The datatypes (by index) that are not instances of `Eq` (nor `Ord`): those with a
    /// field of processes or functions (see `Checker::find_datatypes_without_eq`).
    data_without_eq: std::collections::HashSet<u32>,
}

/// What [`Vars`] remembers of the unbound variables below a bound variable.
#[derive(Clone, Default)]
enum FreeBelow {
    /// Not computed yet.
    #[default]
    Unknown,
    /// These (exact while all are unbound).
    Known(Rc<[u32]>),
    /// More than [`FREE_BELOW_CAP`] when last computed: the occurs check walks the binding.
    Many,
}

impl Vars {
    /// A new flexible variable.
    pub(super) fn fresh(&mut self) -> Ty {
        self.fresh_with(Classes::default())
    }

    /// A new flexible variable that must be an instance of `classes`.
    pub(super) fn fresh_with(&mut self, classes: Classes) -> Ty {
        self.bound.push(None);
        self.classes.push(classes);
        Ty::Var(self.bound.len() as u32 - 1)
    }

    /// A new rigid variable.
    pub(super) fn rigid(&mut self, name: &str, classes: Classes) -> Ty {
        self.rigid.push((name.to_string(), classes));
        Ty::Rigid(self.rigid.len() as u32 - 1)
    }

    /// The classes of rigid variable `r`.
    pub(super) fn rigid_classes(&self, r: u32) -> Classes {
        self.rigid[r as usize].1
    }

    /// The classes of flexible variable `v`.
    pub(super) fn var_classes(&self, v: u32) -> Classes {
        self.classes[v as usize]
    }

    /// `t` with its bound variables replaced, at the top only.
    pub(super) fn shallow(&self, t: &Ty) -> Ty {
        self.shallow_ref(t).clone()
    }

    /// What `t` stands for, at the top only, without copying.
    fn shallow_ref<'a>(&'a self, mut t: &'a Ty) -> &'a Ty {
        while let Ty::Var(v) = t {
            match &self.bound[*v as usize] {
                Some(b) => t = b,
                None => break,
            }
        }
        t
    }

    /// `t` with every bound variable replaced (its parts without bound variables shared
    /// with `t`).
    pub(super) fn resolve(&self, t: &Ty) -> Ty {
        self.resolve_changed(t).unwrap_or_else(|| t.clone())
    }

    /// `t` with every bound variable replaced; `None` when it has none.
    fn resolve_changed(&self, t: &Ty) -> Option<Ty> {
        let s = self.shallow_ref(t);
        let changed = rebuild(s, |c| self.resolve_changed(c));
        match (changed, std::ptr::eq(s, t)) {
            (Some(r), _) => Some(r),
            (None, true) => None,
            (None, false) => Some(s.clone()),
        }
    }

    /// The unbound flexible variables of `t`, in order of first occurrence.
    pub(super) fn free_vars(&self, t: &Ty, out: &mut Vec<u32>) {
        let mut seen = std::collections::HashSet::new();
        seen.extend(out.iter().copied());
        self.each_free_var(t, &mut |v| {
            if seen.insert(v) {
                out.push(v);
            }
            false
        });
    }

    /// Calls `f` on each occurrence of an unbound flexible variable of `t`, in order,
    /// until it returns true; whether it did.
    fn each_free_var(&self, t: &Ty, f: &mut dyn FnMut(u32) -> bool) -> bool {
        match self.shallow_ref(t) {
            Ty::Var(v) => f(*v),
            Ty::Seq(a) | Ty::Set(a) => self.each_free_var(a, f),
            Ty::Tuple(ts) | Ty::Dot(ts) => ts.iter().any(|t| self.each_free_var(t, f)),
            Ty::Fun(a, r) => a.iter().any(|t| self.each_free_var(t, f)) || self.each_free_var(r, f),
            Ty::Map(a, r) | Ty::Dotable(a, r) => {
                self.each_free_var(a, f) || self.each_free_var(r, f)
            }
            _ => false,
        }
    }

    /// Whether the datatype `d` is (as far as known) an instance of `Eq`.
    pub(super) fn data_has_eq(&self, d: u32) -> bool {
        !self.data_without_eq.contains(&d)
    }

    /// Records that the datatype `d` is not an instance of `Eq`.
    pub(super) fn set_data_without_eq(&mut self, d: u32) {
        self.data_without_eq.insert(d);
    }

    /// False when `t` (resolved) is certainly not an instance of `Eq`: it is or contains
    /// (in a tuple, sequence, set or map) a process, a function or a datatype without
    /// equality. Variables and what is not typed with certainty may have it.
    pub(super) fn may_have_eq(&self, t: &Ty) -> bool {
        match self.shallow_ref(t) {
            Ty::Proc | Ty::Fun(..) => false,
            Ty::Data(d, _) => self.data_has_eq(*d),
            Ty::Seq(a) | Ty::Set(a) => self.may_have_eq(a),
            Ty::Tuple(ts) | Ty::Dot(ts) => ts.iter().all(|t| self.may_have_eq(t)),
            Ty::Map(k, v) => self.may_have_eq(k) && self.may_have_eq(v),
            _ => true,
        }
    }

    /// Requires `t` to be an instance of class `c`. Only what is certain is refused:
    /// processes and functions are not comparable, and a rigid variable has only its
    /// declared classes.
    pub(super) fn require(&mut self, c: Class, t: &Ty) -> Result<(), Mismatch> {
        match self.shallow(t) {
            Ty::Var(v) => {
                self.classes[v as usize].insert(c);
                Ok(())
            }
            Ty::Rigid(r) => {
                let have = self.rigid[r as usize].1;
                // Ord implies Eq; Complete and Yieldable are not checked on variables
                let ok = have.contains(c)
                    || (c == Class::Eq && have.contains(Class::Ord))
                    || matches!(c, Class::Set | Class::Yieldable | Class::Complete);
                if ok {
                    Ok(())
                } else {
                    Err(Mismatch::NoInstance(c, Ty::Rigid(r)))
                }
            }
            Ty::Proc if matches!(c, Class::Eq | Class::Ord) => {
                Err(Mismatch::NoInstance(c, Ty::Proc))
            }
            // functions cannot be compared
            Ty::Fun(..) if matches!(c, Class::Eq | Class::Ord) => {
                Err(Mismatch::NoInstance(c, self.resolve(t)))
            }
            Ty::Data(d, name) if matches!(c, Class::Eq | Class::Ord) && !self.data_has_eq(d) => {
                Err(Mismatch::NoInstance(c, Ty::Data(d, name)))
            }
            Ty::Seq(a) | Ty::Set(a) if matches!(c, Class::Eq | Class::Ord) => self.require(c, &a),
            Ty::Tuple(ts) | Ty::Dot(ts) if matches!(c, Class::Eq | Class::Ord) => {
                ts.iter().try_for_each(|t| self.require(c, t))
            }
            _ => Ok(()),
        }
    }

    /// Whether the unbound flexible variable `v` occurs in `t` (bound variables looked
    /// through).
    fn occurs(&mut self, v: u32, t: &Ty) -> bool {
        match t {
            Ty::Var(w) => match self.bound[*w as usize].clone() {
                None => *w == v,
                Some(b) => match self.free_below(*w) {
                    Some(set) => set.contains(&v),
                    None => self.occurs(v, &b),
                },
            },
            Ty::Seq(a) | Ty::Set(a) => self.occurs(v, a),
            Ty::Tuple(ts) | Ty::Dot(ts) => ts.iter().any(|t| self.occurs(v, t)),
            Ty::Fun(a, r) => a.iter().any(|t| self.occurs(v, t)) || self.occurs(v, r),
            Ty::Map(a, r) | Ty::Dotable(a, r) => self.occurs(v, a) || self.occurs(v, r),
            _ => false,
        }
    }

    /// The unbound variables below the bound variable `w` (see [`Vars::free_below`]'s
    /// field), or `None` when there are more than [`FREE_BELOW_CAP`].
    fn free_below(&mut self, w: u32) -> Option<Rc<[u32]>> {
        if self.free_below.len() < self.bound.len() {
            self.free_below.resize(self.bound.len(), FreeBelow::Unknown);
        }
        let mut set: Vec<u32> = Vec::new();
        let complete = match self.free_below[w as usize].clone() {
            FreeBelow::Many => return None,
            FreeBelow::Known(old) if old.iter().all(|&u| self.bound[u as usize].is_none()) => {
                return Some(old)
            }
            FreeBelow::Known(old) => old
                .iter()
                .all(|&u| self.collect_free(&Ty::Var(u), &mut set)),
            FreeBelow::Unknown => match self.bound[w as usize].clone() {
                Some(b) => self.collect_free(&b, &mut set),
                None => return None,
            },
        };
        if !complete {
            self.free_below[w as usize] = FreeBelow::Many;
            return None;
        }
        let set: Rc<[u32]> = set.into();
        self.free_below[w as usize] = FreeBelow::Known(set.clone());
        Some(set)
    }

    /// Adds the unbound variables of `t` to `set` (each once); false when they are more
    /// than [`FREE_BELOW_CAP`].
    fn collect_free(&mut self, t: &Ty, set: &mut Vec<u32>) -> bool {
        match t {
            Ty::Var(w) if self.bound[*w as usize].is_none() => {
                if !set.contains(w) {
                    set.push(*w);
                }
                set.len() <= FREE_BELOW_CAP
            }
            Ty::Var(w) => match self.free_below(*w) {
                Some(below) => {
                    for &x in below.iter() {
                        if !set.contains(&x) {
                            set.push(x);
                        }
                    }
                    set.len() <= FREE_BELOW_CAP
                }
                None => false,
            },
            Ty::Seq(a) | Ty::Set(a) => self.collect_free(a, set),
            Ty::Tuple(ts) | Ty::Dot(ts) => ts.iter().all(|t| self.collect_free(t, set)),
            Ty::Fun(a, r) => {
                a.iter().all(|t| self.collect_free(t, set)) && self.collect_free(r, set)
            }
            Ty::Map(a, r) | Ty::Dotable(a, r) => {
                self.collect_free(a, set) && self.collect_free(r, set)
            }
            _ => true,
        }
    }

    fn bind(&mut self, v: u32, t: &Ty) -> Result<(), Mismatch> {
        if let Ty::Var(w) = t {
            if *w == v {
                return Ok(());
            }
            let c = self.classes[v as usize].union(self.classes[*w as usize]);
            self.classes[*w as usize] = c;
            self.bound[v as usize] = Some(t.clone());
            return Ok(());
        }
        if self.occurs(v, t) {
            return Err(Mismatch::Occurs(Ty::Var(v), self.resolve(t)));
        }
        let classes = self.classes[v as usize];
        if classes.first_field() && !self.is_one_field(t) {
            self.bound[v as usize] = Some(Ty::Any);
            return Ok(());
        }
        if let Ty::Dot(ts) = t {
            if ts.len() < classes.dot_parts() {
                return Err(Mismatch::DotParts(classes.dot_parts(), self.resolve(t)));
            }
        }
        if classes.maybe_dotted() {
            self.mark_maybe_dotted(t);
        }
        self.bound[v as usize] = Some(t.clone());
        for c in classes.iter() {
            self.require(c, t)?;
        }
        Ok(())
    }

    /// Whether `t` (not a flexible variable) is certainly one field of a dotted value, or
    /// a type standing for one (a rigid variable, [`Ty::Any`]).
    fn is_one_field(&self, t: &Ty) -> bool {
        matches!(
            self.shallow_ref(t),
            Ty::Int
                | Ty::Bool
                | Ty::Char
                | Ty::Proc
                | Ty::Seq(_)
                | Ty::Set(_)
                | Ty::Tuple(_)
                | Ty::Map(..)
                | Ty::Fun(..)
                | Ty::Data(..)
                | Ty::Rigid(_)
                | Ty::Any
        )
    }

    /// Gives the unbound flexible variable `t` the classes `extra` too (see
    /// [`Classes::DOT_PARTS`], [`Classes::FIRST_FIELD`]); nothing where `t` is not one.
    pub(super) fn add_classes(&mut self, t: &Ty, extra: Classes) {
        if let Ty::Var(v) = self.shallow_ref(t) {
            let v = *v as usize;
            self.classes[v] = self.classes[v].union(extra);
        }
    }

    /// Marks the unbound flexible variables of `t` as maybe dotted (see
    /// [`Classes::MAYBE_DOTTED`]).
    pub(super) fn mark_maybe_dotted(&mut self, t: &Ty) {
        let mut vs = Vec::new();
        self.each_free_var(t, &mut |v| {
            vs.push(v);
            false
        });
        for v in vs {
            self.classes[v as usize] = self.classes[v as usize].with_maybe_dotted();
        }
    }

    /// Whether `t` is an unbound flexible variable marked maybe dotted.
    pub(super) fn is_maybe_dotted(&self, t: &Ty) -> bool {
        match self.shallow_ref(t) {
            Ty::Var(v) => self.classes[*v as usize].maybe_dotted(),
            _ => false,
        }
    }

    /// Unifies `a` (the expected type) with `b` (the actual one).
    pub(super) fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), Mismatch> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        let fail = |s: &Self| Err(Mismatch::Types(s.resolve(&a), s.resolve(&b)));
        match (&a, &b) {
            // what libcspm gives the loose side may be dotted: its variables may be too
            (Ty::Any, Ty::Any) => Ok(()),
            (Ty::Any, t) | (t, Ty::Any) => {
                self.mark_maybe_dotted(t);
                Ok(())
            }
            (Ty::Var(v), t) | (t, Ty::Var(v)) => self.bind(*v, t),
            (Ty::Rigid(x), Ty::Rigid(y)) if x == y => Ok(()),
            (Ty::Int, Ty::Int)
            | (Ty::Bool, Ty::Bool)
            | (Ty::Char, Ty::Char)
            | (Ty::Proc, Ty::Proc)
            | (Ty::Event, Ty::Event) => Ok(()),
            (Ty::Data(x, _), Ty::Data(y, _)) if x == y => Ok(()),
            (Ty::Seq(x), Ty::Seq(y)) | (Ty::Set(x), Ty::Set(y)) => self.unify(x, y),
            // dotted values of as many parts: part by part; of different numbers of parts:
            // unlike when each part is known (a variable's part may be dotted in libcspm)
            (Ty::Dot(xs), Ty::Dot(ys)) if xs.len() != ys.len() => {
                let mut free = Vec::new();
                self.free_vars(&a, &mut free);
                self.free_vars(&b, &mut free);
                if free.is_empty() {
                    return fail(self);
                }
                self.mark_maybe_dotted(&a);
                self.mark_maybe_dotted(&b);
                Ok(())
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) | (Ty::Dot(xs), Ty::Dot(ys)) if xs.len() == ys.len() => {
                xs.iter()
                    .zip(ys.iter())
                    .try_for_each(|(x, y)| self.unify(x, y))
            }
            (Ty::Fun(xa, xr), Ty::Fun(ya, yr)) if xa.len() == ya.len() => {
                for (x, y) in xa.iter().zip(ya.iter()) {
                    self.unify(x, y)?;
                }
                self.unify(xr, yr)
            }
            (Ty::Map(xk, xv), Ty::Map(yk, yv)) | (Ty::Dotable(xk, xv), Ty::Dotable(yk, yv)) => {
                self.unify(xk, yk)?;
                self.unify(xv, yv)
            }
            _ => fail(self),
        }
    }

    /// `t` resolved and written as CSPm writes types.
    pub(super) fn show(&self, t: &Ty) -> String {
        Shown(self, &self.resolve(t)).to_string()
    }

    /// The text of a mismatch.
    pub(super) fn describe(&self, m: &Mismatch) -> String {
        match m {
            Mismatch::Types(e, a) => format!(
                "Couldn't match expected type {} with actual type {}",
                self.show(e),
                self.show(a)
            ),
            Mismatch::NoInstance(c, t) => {
                format!("No instance of {} for {}", c.name(), self.show(t))
            }
            Mismatch::Occurs(v, t) => format!(
                "Cannot construct the infinite type {} = {}",
                self.show(v),
                self.show(t)
            ),
            Mismatch::DotParts(n, t) => format!(
                "a dot pattern of {n} parts cannot match a dotted value of type {}, which has \
                 fewer fields: each part of the pattern takes at least one field",
                self.show(t)
            ),
        }
    }
}

struct Shown<'a>(&'a Vars, &'a Ty);

impl<'a> fmt::Display for Shown<'a> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vars = self.0;
        let sh = |t: &'a Ty| Shown(vars, t);
        let list = |f: &mut fmt::Formatter<'_>, ts: &'a [Ty]| -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{}", sh(t))?;
            }
            Ok(())
        };
        match self.1 {
            Ty::Var(v) => write!(f, "t{v}"),
            Ty::Rigid(r) => write!(f, "{}", vars.rigid[*r as usize].0),
            Ty::Any => write!(f, "?"),
            Ty::Int => write!(f, "Int"),
            Ty::Bool => write!(f, "Bool"),
            Ty::Char => write!(f, "Char"),
            Ty::Proc => write!(f, "Proc"),
            Ty::Event => write!(f, "Event"),
            Ty::Seq(a) => write!(f, "<{}>", sh(a)),
            Ty::Set(a) => write!(f, "{{{}}}", sh(a)),
            Ty::Tuple(ts) => {
                write!(f, "(")?;
                list(f, ts)?;
                write!(f, ")")
            }
            Ty::Fun(a, r) => {
                write!(f, "(")?;
                list(f, a)?;
                write!(f, ") -> {}", sh(r))
            }
            Ty::Map(k, v) => write!(f, "(| {} => {} |)", sh(k), sh(v)),
            Ty::Data(_, name) => write!(f, "{name}"),
            Ty::Dotable(a, r) => write!(f, "{}=>{}", sh(a), sh(r)),
            Ty::Dot(ts) => {
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ".")?;
                    }
                    match t {
                        Ty::Dotable(..) => write!(f, "({})", sh(t))?,
                        _ => write!(f, "{}", sh(t))?,
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracle: whether `v` occurs in `t`, walking every binding (no memory).
    fn occurs_by_walking(vars: &Vars, v: u32, t: &Ty) -> bool {
        vars.each_free_var(t, &mut |w| w == v)
    }

    /// A type built from the choices `c` over the variables `0..n`.
    fn build(c: &mut impl Iterator<Item = u8>, n: u32, depth: u32) -> Ty {
        let k = c.next().unwrap_or(0);
        if depth == 0 {
            return if k.is_multiple_of(3) {
                Ty::Int
            } else {
                Ty::Var(u32::from(k) % n)
            };
        }
        match k % 6 {
            0 => Ty::Int,
            1 | 2 => Ty::Var(u32::from(k / 6) % n),
            3 => Ty::seq(build(c, n, depth - 1)),
            4 => Ty::tuple(vec![build(c, n, depth - 1), build(c, n, depth - 1)]),
            _ => Ty::fun(vec![build(c, n, depth - 1)], build(c, n, depth - 1)),
        }
    }

    /// A dotted type of `n` integer fields.
    fn ints(n: usize) -> Ty {
        Ty::Dot(vec![Ty::Int; n].into())
    }

    #[test]
    fn a_dot_pattern_type_refuses_fewer_fields_only() {
        for (parts, fields, ok) in [(3, 2, false), (3, 3, true), (3, 4, true), (2, 2, true)] {
            let mut vars = Vars::default();
            let t = vars.fresh_with(Classes::default().with_dot_parts(parts));
            let r = vars.unify(&t, &ints(fields));
            assert_eq!(r.is_ok(), ok, "{parts} parts, {fields} fields");
        }
        // the bound survives a variable standing for another, and instantiation's copy
        let mut vars = Vars::default();
        let t = vars.fresh_with(Classes::default().with_dot_parts(3));
        let u = vars.fresh_with(Classes::default().with_dot_parts(2));
        vars.unify(&u, &t).expect("two variables");
        assert!(vars.unify(&u, &ints(2)).is_err());
        let Ty::Var(w) = vars.shallow(&t) else {
            panic!("unbound")
        };
        let copy = vars.fresh_with(vars.var_classes(w));
        assert!(vars.unify(&copy, &ints(2)).is_err());
        assert!(vars.unify(&copy, &ints(3)).is_ok());
    }

    #[test]
    fn a_first_field_gives_up_on_what_is_not_one_field() {
        let mut vars = Vars::default();
        let first = Classes::default().with_first_field();
        // one field: then of that type only
        let t = vars.fresh_with(first);
        vars.unify(&t, &Ty::Int).expect("a single field");
        assert!(vars.unify(&t, &Ty::Bool).is_err());
        // a dotted value first: unknown, so anything after
        let t = vars.fresh_with(first);
        vars.unify(&t, &ints(2)).expect("a dotted value");
        assert_eq!(vars.resolve(&t), Ty::Any);
        vars.unify(&t, &Ty::Bool).expect("unknown");
        // through a variable
        let t = vars.fresh_with(first);
        let y = vars.fresh();
        vars.unify(&t, &y).expect("two variables");
        vars.unify(&y, &Ty::Event).expect("an event");
        assert_eq!(vars.resolve(&t), Ty::Any);
    }

    proptest! {
        /// Random bindings, made as unification makes them (never a cycle), with the
        /// occurs check asked between them: the remembered sets answer as the walk does.
        #[test]
        fn remembered_occurs_check_agrees_with_walking(
            choices in proptest::collection::vec(any::<u8>(), 50..400),
            n in 2u32..12,
        ) {
            let mut vars = Vars::default();
            for _ in 0..n {
                vars.fresh();
            }
            let mut c = choices.into_iter();
            while let Some(v) = c.next() {
                let v = u32::from(v) % n;
                let t = build(&mut c, n, 3);
                for w in 0..n {
                    if vars.bound[w as usize].is_none() {
                        let expected = occurs_by_walking(&vars, w, &t);
                        prop_assert_eq!(vars.occurs(w, &t), expected);
                    }
                }
                if vars.bound[v as usize].is_none() {
                    let itself = vars.shallow(&t) == Ty::Var(v);
                    let cycle = occurs_by_walking(&vars, v, &t) && !itself;
                    let r = vars.unify(&Ty::Var(v), &t);
                    prop_assert_eq!(r.is_err(), cycle, "{:?}", r);
                }
            }
        }
    }

    #[test]
    fn an_infinite_type_is_refused_through_a_chain_of_bindings() {
        // a = <b>, b = <c>, ..., then the last = <a>: a cycle through the whole chain
        let mut vars = Vars::default();
        let vs: Vec<Ty> = (0..50).map(|_| vars.fresh()).collect();
        for w in vs.windows(2) {
            assert!(vars.unify(&w[0], &Ty::seq(w[1].clone())).is_ok());
            // ask the occurs check through the head on the way, so that sets are remembered
            let below = Ty::seq(vs[0].clone());
            assert!(!vars.occurs(u32::MAX, &below));
        }
        let last = vs.last().cloned().unwrap_or(Ty::Int);
        let err = vars.unify(&last, &Ty::seq(vs[0].clone()));
        assert!(matches!(err, Err(Mismatch::Occurs(..))), "{err:?}");
    }
}
