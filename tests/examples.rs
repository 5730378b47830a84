//! Every bundled example in `examples/` loads with the CSPm front end, has a header comment
//! that states the expected verdict of each of its assertions, and evaluates every process
//! its assertions name (unfolding their terms up to a bound).

mod common;

use std::path::PathBuf;

use weft::csp::load_script;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csp"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_loads_and_documents_its_verdicts() {
    let files = examples();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().to_string())
        .collect();
    for wanted in [
        "dining_philosophers.csp",
        "bounded_buffer.csp",
        "mutual_exclusion.csp",
        "busy_forbidden.csp",
        "scaling_philosophers.csp",
    ] {
        assert!(names.iter().any(|n| n == wanted), "missing {wanted}");
    }
    for path in &files {
        let script = load_script(path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(path).expect("readable");
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("--")).collect();
        assert!(header.len() >= 5, "{}: no header comment", path.display());
        assert!(
            !script.assertions().is_empty(),
            "{}: no assertions",
            path.display()
        );
        for a in script.assertions() {
            // The header names the assertion (as written) with HOLDS or FAILS after it.
            let documented = header
                .iter()
                .any(|l| l.contains(&a.text) && (l.contains("HOLDS") || l.contains("FAILS")));
            assert!(
                documented,
                "{}:{}: `{}` has no expected verdict in the header",
                path.display(),
                a.location.line,
                a.text
            );
            for p in a.check.processes() {
                common::walk(&script, p, 20_000)
                    .unwrap_or_else(|e| panic!("{}: `{}`: {e}", path.display(), a.text));
            }
        }
    }
}
