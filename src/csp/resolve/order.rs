//! Dependency order: the top-level declarations grouped into strongly connected components
//! of the "refers to" relation, each group after the groups it refers to. The loader fills
//! the program's tables in this order, and the type checker generalises one group at a time.

use super::*;

/// One group of the dependency order: declarations (indices into
/// [`Program::decl_refs`]) that refer to each other, directly or through other members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeclGroup {
    /// The declarations of the group, in source order.
    pub decls: Vec<usize>,
    /// True if the group is mutually recursive (more than one declaration, or one that
    /// refers to itself): its processes are bound lazily, as names unfolded on demand.
    pub recursive: bool,
}

/// The declarations of `decl_refs` (names defined, names referred to) in dependency order:
/// every group comes after the groups it refers to.
pub(crate) fn dependency_order(decl_refs: &[(Arc<[Name]>, BTreeSet<Name>)]) -> Vec<DeclGroup> {
    let mut node_of: HashMap<&Name, usize> = HashMap::new();
    for (i, (names, _)) in decl_refs.iter().enumerate() {
        for n in names.iter() {
            node_of.insert(n, i);
        }
    }
    let edges: Vec<Vec<usize>> = decl_refs
        .iter()
        .map(|(_, refs)| {
            refs.iter()
                .filter_map(|r| node_of.get(r).copied())
                .collect()
        })
        .collect();
    strongly_connected(&edges)
        .into_iter()
        .map(|decls| {
            let recursive = decls.len() > 1 || edges[decls[0]].contains(&decls[0]);
            DeclGroup { decls, recursive }
        })
        .collect()
}

/// The strongly connected components of a graph (Tarjan), each after those it reaches, each
/// sorted.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for k in 0..s.edges[v].len() {
            let w = s.edges[v][k];
            match s.index[w] {
                None => {
                    stacker::maybe_grow(
                        crate::csp::syntax::parser::RED_ZONE,
                        crate::csp::syntax::parser::STACK_PER_RECURSION,
                        || visit(s, w),
                    );
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            comp.sort_unstable();
            s.out.push(comp);
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(names: &[&str], refs: &[&str]) -> (Arc<[Name]>, BTreeSet<Name>) {
        (
            names.iter().map(|n| Name::from(*n)).collect(),
            refs.iter().map(|n| Name::from(*n)).collect(),
        )
    }

    #[test]
    fn groups_come_after_what_they_refer_to() {
        // 0: N = 3; 1: P = a -> Q; 2: Q = b -> P; 3: S = {0..N}; 4: R = R
        let refs = [
            decl(&["N"], &[]),
            decl(&["P"], &["Q", "a"]),
            decl(&["Q"], &["P", "S"]),
            decl(&["S"], &["N"]),
            decl(&["R"], &["R"]),
        ];
        let order = dependency_order(&refs);
        let pos = |d: usize| order.iter().position(|g| g.decls.contains(&d)).unwrap();
        assert!(pos(0) < pos(3) && pos(3) < pos(1));
        assert_eq!(pos(1), pos(2));
        let pq = &order[pos(1)];
        assert_eq!((pq.decls.clone(), pq.recursive), (vec![1, 2], true));
        assert!(order[pos(4)].recursive);
        assert!(!order[pos(0)].recursive && !order[pos(3)].recursive);
        assert_eq!(order.iter().map(|g| g.decls.len()).sum::<usize>(), 5);
    }
}
