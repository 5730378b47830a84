//! CSPm types, type variables and unification.
//!
//! A type variable is flexible (bound by unification, with the type classes it must be an
//! instance of) or rigid (a variable of a type annotation, which stands for every type with
//! its declared classes and so matches only itself). [`Ty::Any`] is the type the checker
//! gives what it cannot type with certainty: it unifies with every type and binds nothing.

use std::fmt;
use std::rc::Rc;

/// A type class of CSPm (libcspm's `Eq`, `Ord`, `Set`, `Yieldable`, `Complete`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Eq,
    Ord,
    Set,
    Yieldable,
    Complete,
}

impl Class {
    /// The class named `name`, if there is one.
    pub(super) fn from_name(name: &str) -> Option<Class> {
        Some(match name {
            "Eq" => Class::Eq,
            "Ord" => Class::Ord,
            "Set" => Class::Set,
            "Yieldable" => Class::Yieldable,
            "Complete" => Class::Complete,
            _ => return None,
        })
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    fn name(self) -> &'static str {
        match self {
            Class::Eq => "Eq",
            Class::Ord => "Ord",
            Class::Set => "Set",
            Class::Yieldable => "Yieldable",
            Class::Complete => "Complete",
        }
    }
}

/// A set of type classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Classes(u8);

impl Classes {
    /// Adds `c`.
    pub(super) fn insert(&mut self, c: Class) {
        self.0 |= c.bit();
    }
    fn union(self, o: Classes) -> Classes {
        Classes(self.0 | o.0)
    }
    fn contains(self, c: Class) -> bool {
        self.0 & c.bit() != 0
    }
    fn iter(self) -> impl Iterator<Item = Class> {
        [
            Class::Eq,
            Class::Ord,
            Class::Set,
            Class::Yieldable,
            Class::Complete,
        ]
        .into_iter()
        .filter(move |c| self.contains(*c))
    }
}

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
    Tuple(Vec<Ty>),
    /// `(args) -> result`
    Fun(Vec<Ty>, Rc<Ty>),
    /// `(| k => v |)`
    Map(Rc<Ty>, Rc<Ty>),
    /// A datatype (its index and name).
    Data(u32, std::sync::Arc<str>),
    /// `a => b`: a value that, dotted with an `a`, gives a `b` (a channel or constructor
    /// with fields left).
    Dotable(Rc<Ty>, Rc<Ty>),
}

/// A type mismatch: the two types (as far as resolved) that could not be unified, or a
/// class a type is not an instance of.
#[derive(Clone, Debug)]
pub(super) enum Mismatch {
    Types(Ty, Ty),
    NoInstance(Class, Ty),
    Occurs(Ty, Ty),
}

/// The type variables: bindings of flexible ones and the names and classes of rigid ones.
#[derive(Default)]
pub(super) struct Vars {
    bound: Vec<Option<Ty>>,
    classes: Vec<Classes>,
    rigid: Vec<(String, Classes)>,
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

    /// [`Vars::shallow`] without a copy (the walks over a type call it at every level, and a
    /// type can be thousands of levels deep).
    fn shallow_ref<'a>(&'a self, mut t: &'a Ty) -> &'a Ty {
        while let Ty::Var(v) = t {
            match &self.bound[*v as usize] {
                Some(b) => t = b,
                None => break,
            }
        }
        t
    }

    /// `t` with every bound variable replaced.
    pub(super) fn resolve(&self, t: &Ty) -> Ty {
        match self.shallow_ref(t) {
            Ty::Seq(a) => Ty::Seq(Rc::new(self.resolve(a))),
            Ty::Set(a) => Ty::Set(Rc::new(self.resolve(a))),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.resolve(t)).collect()),
            Ty::Fun(a, r) => Ty::Fun(
                a.iter().map(|t| self.resolve(t)).collect(),
                Rc::new(self.resolve(r)),
            ),
            Ty::Map(k, v) => Ty::Map(Rc::new(self.resolve(k)), Rc::new(self.resolve(v))),
            Ty::Dotable(a, r) => Ty::Dotable(Rc::new(self.resolve(a)), Rc::new(self.resolve(r))),
            t => t.clone(),
        }
    }

    /// The unbound flexible variables of `t`, in order of first occurrence.
    pub(super) fn free_vars(&self, t: &Ty, out: &mut Vec<u32>) {
        match self.shallow_ref(t) {
            Ty::Var(v) if !out.contains(v) => out.push(*v),
            Ty::Seq(a) | Ty::Set(a) => self.free_vars(a, out),
            Ty::Tuple(ts) => ts.iter().for_each(|t| self.free_vars(t, out)),
            Ty::Fun(a, r) => {
                a.iter().for_each(|t| self.free_vars(t, out));
                self.free_vars(r, out);
            }
            Ty::Map(a, r) | Ty::Dotable(a, r) => {
                self.free_vars(a, out);
                self.free_vars(r, out);
            }
            _ => {}
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
            Ty::Seq(a) | Ty::Set(a) if matches!(c, Class::Eq | Class::Ord) => self.require(c, &a),
            Ty::Tuple(ts) if matches!(c, Class::Eq | Class::Ord) => {
                ts.iter().try_for_each(|t| self.require(c, t))
            }
            _ => Ok(()),
        }
    }

    /// Whether the unbound variable `v` occurs in `t`.
    fn occurs(&self, v: u32, t: &Ty) -> bool {
        match self.shallow_ref(t) {
            Ty::Var(w) => *w == v,
            Ty::Seq(a) | Ty::Set(a) => self.occurs(v, a),
            Ty::Tuple(ts) => ts.iter().any(|t| self.occurs(v, t)),
            Ty::Fun(a, r) => a.iter().any(|t| self.occurs(v, t)) || self.occurs(v, r),
            Ty::Map(a, r) | Ty::Dotable(a, r) => self.occurs(v, a) || self.occurs(v, r),
            _ => false,
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
        self.bound[v as usize] = Some(t.clone());
        for c in classes.iter() {
            self.require(c, t)?;
        }
        Ok(())
    }

    /// Unifies `a` (the expected type) with `b` (the actual one).
    pub(super) fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), Mismatch> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        let fail = |s: &Self| Err(Mismatch::Types(s.resolve(&a), s.resolve(&b)));
        match (&a, &b) {
            (Ty::Any, _) | (_, Ty::Any) => Ok(()),
            (Ty::Var(v), t) | (t, Ty::Var(v)) => self.bind(*v, t),
            (Ty::Rigid(x), Ty::Rigid(y)) if x == y => Ok(()),
            (Ty::Int, Ty::Int)
            | (Ty::Bool, Ty::Bool)
            | (Ty::Char, Ty::Char)
            | (Ty::Proc, Ty::Proc)
            | (Ty::Event, Ty::Event) => Ok(()),
            (Ty::Data(x, _), Ty::Data(y, _)) if x == y => Ok(()),
            (Ty::Seq(x), Ty::Seq(y)) | (Ty::Set(x), Ty::Set(y)) => self.unify(x, y),
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                xs.iter().zip(ys).try_for_each(|(x, y)| self.unify(x, y))
            }
            (Ty::Fun(xa, xr), Ty::Fun(ya, yr)) if xa.len() == ya.len() => {
                for (x, y) in xa.iter().zip(ya) {
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
        }
    }
}

struct Shown<'a>(&'a Vars, &'a Ty);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vars = self.0;
        let sh = |t: &Ty| Shown(vars, t).to_string();
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
                let parts: Vec<String> = ts.iter().map(sh).collect();
                write!(f, "({})", parts.join(", "))
            }
            Ty::Fun(a, r) => {
                let parts: Vec<String> = a.iter().map(sh).collect();
                write!(f, "({}) -> {}", parts.join(", "), sh(r))
            }
            Ty::Map(k, v) => write!(f, "(| {} => {} |)", sh(k), sh(v)),
            Ty::Data(_, name) => write!(f, "{name}"),
            Ty::Dotable(a, r) => write!(f, "{}=>{}", sh(a), sh(r)),
        }
    }
}
