//! Definitions: the clauses of functions and the pattern bindings of a group of definitions
//! (top level or `let`), and the checks on their patterns.

use super::*;

/// Adds the definitions of a function or pattern-binding declaration to `group`.
pub(super) fn add_definition(
    group: &mut DefGroup,
    d: &Decl,
    is_constant: &dyn Fn(&Name) -> bool,
) -> CResult<()> {
    let push = |group: &mut DefGroup, name: Name, span: Span, kind: DefKind| -> CResult<()> {
        if group.index.contains_key(&name) {
            return Err(RawError::new(
                span,
                ErrorKind::Duplicate,
                format!("`{name}` is defined more than once"),
            ));
        }
        group.index.insert(name.clone(), group.defs.len() as u32);
        group.defs.push(Def { name, span, kind });
        Ok(())
    };
    match &d.kind {
        DeclKind::Function(name, clauses) => {
            let groups: Vec<usize> = clauses[0].groups.iter().map(Vec::len).collect();
            for c in clauses {
                let sizes: Vec<usize> = c.groups.iter().map(Vec::len).collect();
                if sizes != groups {
                    return Err(RawError::new(
                        c.span,
                        ErrorKind::Arity,
                        format!(
                            "this clause of `{}` has {} but its first clause has {}",
                            name.name,
                            describe_groups(&sizes),
                            describe_groups(&groups)
                        ),
                    ));
                }
            }
            push(
                group,
                name.name.clone(),
                name.span,
                DefKind::Function {
                    clauses: clauses.clone(),
                    groups,
                },
            )
        }
        DeclKind::PatBind(pat, expr) => {
            if let PatKind::Var(n) = &pat.kind {
                return push(
                    group,
                    n.clone(),
                    pat.span,
                    DefKind::Constant { expr: expr.clone() },
                );
            }
            let bind = group.binds.len() as u32;
            let mut names = Vec::new();
            pattern_vars(pat, &mut names);
            names.retain(|(n, _)| !is_constant(n));
            group.binds.push(PatBindDef {
                pat: pat.clone(),
                expr: expr.clone(),
            });
            for (n, span) in names {
                push(group, n, span, DefKind::Part { bind })?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

pub(super) fn describe_groups(sizes: &[usize]) -> String {
    let parts: Vec<String> = sizes.iter().map(|n| format!("{n}")).collect();
    format!("argument groups of sizes ({})", parts.join(")("))
}

/// All variable names of a pattern (names that are constants are filtered by the caller's
/// context: at the point of definition every name in a pattern binds).
pub(super) fn pattern_vars(p: &Pattern, out: &mut Vec<(Name, Span)>) {
    match &p.kind {
        PatKind::Var(n) => out.push((n.clone(), p.span)),
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            for q in ps {
                pattern_vars(q, out);
            }
        }
        PatKind::Concat(a, b) | PatKind::Both(a, b) => {
            pattern_vars(a, out);
            pattern_vars(b, out);
        }
        PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) | PatKind::Char(_) => {}
    }
}

/// `p ^ q` patterns need a sequence of fixed length on one side.
pub(super) fn check_concat_patterns(p: &Pattern) -> CResult<()> {
    match &p.kind {
        PatKind::Concat(a, b) => {
            if a.fixed_seq_len().is_none() && b.fixed_seq_len().is_none() {
                return Err(RawError::new(
                    p.span,
                    ErrorKind::Syntax,
                    "a `^` pattern needs a sequence literal such as `<x>` on one side",
                ));
            }
            check_concat_patterns(a)?;
            check_concat_patterns(b)
        }
        PatKind::Both(a, b) => {
            check_concat_patterns(a)?;
            check_concat_patterns(b)
        }
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            ps.iter().try_for_each(check_concat_patterns)
        }
        _ => Ok(()),
    }
}
