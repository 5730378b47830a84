//! Graphviz DOT output of an [`Lts`].

use std::io::{self, Write};

use super::Lts;
use crate::ts::TAU;

/// Writes `lts` as a Graphviz digraph: one node `sN` per state (the initial state drawn with a
/// double circle and pointed at by an unlabelled arrow), one edge per transition labelled with
/// its label name (tau edges dashed).
pub fn write_dot<W: Write>(lts: &Lts, w: W) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, w);
    let names: Vec<String> = lts
        .label_names()
        .iter()
        .enumerate()
        .map(|(id, name)| {
            let name = if id == TAU as usize { "tau" } else { name };
            quote(name)
        })
        .collect();
    writeln!(w, "digraph lts {{")?;
    writeln!(w, "  rankdir=LR;")?;
    writeln!(w, "  node [shape=circle];")?;
    if lts.num_states() > 0 {
        writeln!(w, "  __start [shape=point];")?;
        writeln!(w, "  __start -> s{};", lts.initial())?;
    }
    for s in 0..lts.num_states() {
        if s == lts.initial() {
            writeln!(w, "  s{s} [label=\"{s}\", shape=doublecircle];")?;
        } else {
            writeln!(w, "  s{s} [label=\"{s}\"];")?;
        }
    }
    for (s, l, t) in lts.transitions() {
        let style = if l == TAU { ", style=dashed" } else { "" };
        writeln!(w, "  s{s} -> s{t} [label={}{style}];", names[l as usize])?;
    }
    writeln!(w, "}}")?;
    w.flush()
}

/// A DOT string literal for `text`: quotes and backslashes escaped, line breaks as `\n`.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_states_edges_and_escaped_labels() {
        let names = vec!["tau".to_string(), "say \"hi\\\"".to_string()];
        let lts = Lts::from_transitions(1, 2, names, &[(1, 1, 0), (0, 0, 1)]);
        let mut out = Vec::new();
        write_dot(&lts, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("digraph lts {\n"));
        assert!(text.ends_with("}\n"));
        assert!(text.contains("__start -> s1;"));
        assert!(text.contains("s1 [label=\"1\", shape=doublecircle];"));
        assert!(text.contains("s0 [label=\"0\"];"));
        assert!(text.contains("s0 -> s1 [label=\"tau\", style=dashed];"));
        assert!(text.contains("s1 -> s0 [label=\"say \\\"hi\\\\\\\"\"];"));
        assert_eq!(text.matches("->").count(), 3);
    }
}
