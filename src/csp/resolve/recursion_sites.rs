//! Where a name is written in its definition's body, as far as recursion cares.
//!
//! A process may name a definition that is still being evaluated (recursion through other
//! definitions: `I = (a -> SKIP) ; A` with `A = SKIP ; (b -> SKIP) ; I`). Whether that name can
//! stand for itself (a call unfolded when the semantics reaches it) depends on where it is
//! written: behind the right operand of `;` it is reached only after the left operand has
//! terminated, so unfolding it needs nothing of the definition's own first steps; as an
//! operand of `[]`, `|||`, `\`, ... (or the left of `;`) the definition's first steps would
//! need its own. This module marks, once at load, the names and calls written where the
//! value flows unchanged to the body's result ([`Site::Transparent`]: the body itself, a
//! branch of `if`, a guarded process `b & P`, the body of a `let`) or behind the right
//! operand of `;` through such positions only ([`Site::Tail`]), and those written where a
//! process named in its own body would grow without end ([`Site::Mixed`]). Every other name
//! is [`Site::Opaque`] (not recorded).

use super::*;

/// The position of a name or call in the body of the definition it is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Site {
    /// Anywhere else (an operand of a process operator other than the right of `;`, an
    /// argument, a set, a condition, ...).
    Opaque,
    /// Where the body's value is the name's value: the body itself, a branch of `if`, the
    /// process of a guard `b & P`, the body of a `let`.
    Transparent,
    /// Behind the right operand of `;` (the last operand of a chain `P1 ; ... ; Pn`),
    /// reached from the body through transparent positions only.
    Tail,
    /// Reached through process operators only, among them one whose operand stays around
    /// the process (an operand of `[]`, `|||`, `[| |]`, `[A || B]`, `/\`, the left of `;` or
    /// of `[>`) and one whose operand is activated later by a tau (the right of `;` or of
    /// `[>`, an operand of `|~|`): a process named there in its own body (`P = (SKIP ; P) []
    /// b -> STOP`) would add the operator around itself at every unfolding, without end.
    Mixed,
}

/// Records the sites of the names and calls of every body of the program: top-level
/// definitions, the definitions of `let` groups and lambdas.
pub(super) fn record_sites(p: &mut Program) {
    let mut sites = HashMap::new();
    walk_group(&p.top, &mut sites);
    for info in p.lets.values() {
        walk_group(&info.group, &mut sites);
    }
    for (l, _) in p.lambdas.values() {
        walk(&l.body, &mut sites);
    }
    p.sites = sites;
}

/// Walks the bodies of the constants and functions of `group`.
fn walk_group(group: &DefGroup, sites: &mut HashMap<u32, Site>) {
    for d in &group.defs {
        match &d.kind {
            DefKind::Constant { expr } => walk(expr, sites),
            DefKind::Function { clauses, .. } => {
                for c in clauses {
                    walk(&c.body, sites);
                }
            }
            DefKind::Part { .. } => {}
        }
    }
}

/// How a position is reached from a body.
#[derive(Clone, Copy)]
struct Path {
    /// Through transparent positions and right operands of `;` only.
    sequential: bool,
    /// Through at least one right operand of `;`.
    tail: bool,
    /// Through an operand activated later by a tau (right of `;` or `[>`, `|~|`).
    lazy: bool,
    /// Through an operand that stays around the process.
    persistent: bool,
}

impl Path {
    fn site(self) -> Option<Site> {
        match self {
            Path {
                sequential: true,
                tail,
                ..
            } => Some(if tail { Site::Tail } else { Site::Transparent }),
            Path {
                lazy: true,
                persistent: true,
                ..
            } => Some(Site::Mixed),
            _ => None,
        }
    }

    fn persistent(self) -> Path {
        Path {
            sequential: false,
            persistent: true,
            ..self
        }
    }

    fn lazy(self) -> Path {
        Path {
            sequential: false,
            lazy: true,
            ..self
        }
    }
}

/// Records the sites of the names and calls reached from `body` through transparent
/// positions and process operators (iteratively: bodies may be nested deeply). Hiding and
/// renaming are not followed (the semantics merges them, so recursion through them stays
/// finite), nor anything else (arguments, prefixes, replicated operators, ...).
fn walk(body: &Expr, sites: &mut HashMap<u32, Site>) {
    let start = Path {
        sequential: true,
        tail: false,
        lazy: false,
        persistent: false,
    };
    let mut todo: Vec<(&Expr, Path)> = vec![(body, start)];
    while let Some((e, path)) = todo.pop() {
        match &e.kind {
            ExprKind::Var(_) | ExprKind::App(..) => {
                if let Some(site) = path.site() {
                    sites.insert(e.id, site);
                }
            }
            ExprKind::If(_, t, f) => {
                todo.push((t, path));
                todo.push((f, path));
            }
            ExprKind::Guard(_, q) => todo.push((q, path)),
            ExprKind::Let(l) => todo.push((&l.body, path)),
            // only the last operand of a chain `P1 ; ... ; Pn` is a tail position (the left
            // of a chain `(P ; Q) ; R` is not either)
            ExprKind::Proc(ProcOp::Seq, left, right) => {
                todo.push((left, path.persistent()));
                let lazy = path.lazy();
                todo.push((
                    right,
                    Path {
                        sequential: path.sequential,
                        tail: true,
                        ..lazy
                    },
                ));
            }
            ExprKind::Proc(ProcOp::IntChoice, a, b) => {
                todo.push((a, path.lazy()));
                todo.push((b, path.lazy()));
            }
            ExprKind::Proc(ProcOp::Timeout, a, b) => {
                todo.push((a, path.persistent()));
                todo.push((b, path.lazy()));
            }
            ExprKind::Proc(ProcOp::ExtChoice | ProcOp::Interleave | ProcOp::Interrupt, a, b)
            | ExprKind::Parallel(a, _, b)
            | ExprKind::AlphaParallel(a, _, _, b) => {
                todo.push((a, path.persistent()));
                todo.push((b, path.persistent()));
            }
            _ => {}
        }
    }
}

impl Program {
    /// The site of the name or call with expression id `id` in its definition's body.
    #[inline]
    pub(crate) fn site(&self, id: u32) -> Site {
        if self.sites.is_empty() {
            return Site::Opaque;
        }
        self.sites.get(&id).copied().unwrap_or(Site::Opaque)
    }
}
