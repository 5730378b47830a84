//! Interim Aldebaran (`.aut`) reader for the refinement checker's command and tests, until
//! `weft::lts::aut` lands on `main`; its entry points mirror that module's
//! (`read_aut_file(&Path, &AutOptions) -> Result<Lts, AutError>`) so that switching is a
//! change of import. Not part of the public API.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::lts::Lts;

/// Reader options.
#[derive(Clone, Debug)]
pub struct AutOptions {
    /// Labels read as the internal action (default: `tau` and `i`).
    pub tau_names: Vec<String>,
}

impl Default for AutOptions {
    fn default() -> Self {
        AutOptions {
            tau_names: vec!["tau".into(), "i".into()],
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AutError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line does not have the expected shape.
    #[error("line {line}: expected {expected}")]
    Syntax {
        /// 1-based line number.
        line: u64,
        /// What was expected there.
        expected: String,
    },
}

/// Reads a `.aut` file (gzipped when its name ends in `.gz`).
pub fn read_aut_file(path: &Path, opts: &AutOptions) -> Result<Lts, AutError> {
    let io = |source| AutError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    read_aut(BufReader::with_capacity(1 << 16, reader), opts).map_err(|e| match e {
        AutError::Io { source, .. } => io(source),
        other => other,
    })
}

fn syntax(line: u64, expected: &str) -> AutError {
    AutError::Syntax {
        line,
        expected: expected.to_string(),
    }
}

/// Reads `.aut` text: `des (initial, transitions, states)`, then one `(from, label, to)` per line.
pub fn read_aut(mut reader: impl BufRead, opts: &AutOptions) -> Result<Lts, AutError> {
    let io = |source| AutError::Io {
        path: PathBuf::new(),
        source,
    };
    let mut line = String::new();
    let mut number = 0u64;
    // Header.
    let (initial, num_transitions, num_states) = loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            return Err(syntax(
                number + 1,
                "a header `des (initial, transitions, states)`",
            ));
        }
        number += 1;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let expected = "a header `des (initial, transitions, states)`";
        let rest = text
            .strip_prefix("des")
            .ok_or_else(|| syntax(number, expected))?;
        let inner = rest
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(|| syntax(number, expected))?;
        let fields: Vec<&str> = inner.split(',').map(str::trim).collect();
        if fields.len() != 3 {
            return Err(syntax(number, expected));
        }
        let parse = |f: &str| f.parse::<u64>().map_err(|_| syntax(number, expected));
        break (parse(fields[0])?, parse(fields[1])?, parse(fields[2])?);
    };
    if num_states > u32::MAX as u64 || (num_states == 0 || initial >= num_states) {
        return Err(syntax(
            number,
            "an initial state below the number of states",
        ));
    }
    let mut label_names = vec!["tau".to_string()];
    let mut label_ids: HashMap<String, u32> = HashMap::new();
    for t in &opts.tau_names {
        label_ids.insert(t.clone(), 0);
    }
    let mut transitions: Vec<(u32, u32, u32)> =
        Vec::with_capacity(num_transitions.min(1 << 26) as usize);
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            break;
        }
        number += 1;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let expected = "a transition `(from, label, to)`";
        let inner = text
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(|| syntax(number, expected))?;
        let first = inner.find(',').ok_or_else(|| syntax(number, expected))?;
        let last = inner.rfind(',').ok_or_else(|| syntax(number, expected))?;
        if last <= first {
            return Err(syntax(number, expected));
        }
        let state = |f: &str| -> Result<u32, AutError> {
            let v = f
                .trim()
                .parse::<u64>()
                .map_err(|_| syntax(number, "a state number"))?;
            if v >= num_states {
                return Err(syntax(
                    number,
                    "a state below the number of states in the header",
                ));
            }
            Ok(v as u32)
        };
        let from = state(&inner[..first])?;
        let to = state(&inner[last + 1..])?;
        let mut label = inner[first + 1..last].trim();
        if let Some(quoted) = label.strip_prefix('"') {
            label = quoted
                .strip_suffix('"')
                .ok_or_else(|| syntax(number, "a closing quote"))?;
        }
        let id = match label_ids.get(label) {
            Some(&id) => id,
            None => {
                let id = label_names.len() as u32;
                label_names.push(label.to_string());
                label_ids.insert(label.to_string(), id);
                id
            }
        };
        transitions.push((from, id, to));
    }
    if transitions.len() as u64 != num_transitions {
        return Err(syntax(
            number,
            &format!(
                "{num_transitions} transitions as the header says (found {})",
                transitions.len()
            ),
        ));
    }
    Ok(Lts::from_transitions(
        initial as u32,
        num_states as u32,
        label_names,
        &transitions,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_and_bare_labels() {
        let text = "des (0, 3, 2)\n(0,\"send(1, 2)\",1)\n(1, tau, 0)\n(1,a,1)\n";
        let lts = read_aut(text.as_bytes(), &AutOptions::default()).unwrap();
        assert_eq!(lts.num_states(), 2);
        assert_eq!(lts.num_transitions(), 3);
        assert_eq!(lts.label_names(), &["tau", "send(1, 2)", "a"]);
        assert_eq!(lts.tau_successors(1).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn rejects_bad_input_with_line_numbers() {
        let bad = [
            ("", 1),
            ("des (0, 1, 1)\n(0, a)\n", 2),
            ("des (0, 1, 1)\n(0, a, 5)\n", 2),
            ("des (0, 2, 1)\n(0, a, 0)\n", 2),
            ("des (3, 0, 1)\n", 1),
        ];
        for (text, line) in bad {
            match read_aut(text.as_bytes(), &AutOptions::default()) {
                Err(AutError::Syntax { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
