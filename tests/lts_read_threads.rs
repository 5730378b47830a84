//! Every `.aut` and `.aut.gz` file of the corpus reads the same on 2 and 4 threads (read in
//! pieces on several workers) as on one: equal LTSs, label names in the same order, the same
//! state numbers.

use std::path::{Path, PathBuf};

use weft::lts::{read_aut_file, read_aut_file_on, AutOptions};
use weft::threads::Threads;

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/aut")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".aut") || name.ends_with(".aut.gz") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn corpus_reads_the_same_on_every_thread_count() {
    let opts = AutOptions::default();
    let files = corpus_files();
    assert!(files.len() >= 20, "{} corpus files", files.len());
    for path in files {
        let one = read_aut_file(&path, &opts);
        for threads in [2, 4] {
            let many = read_aut_file_on(&path, &opts, Threads::new(threads).unwrap());
            match (&one, &many) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{} on {threads} threads", path.display());
                    assert_eq!(a.label_names(), b.label_names(), "{}", path.display());
                    for s in 0..a.num_states().min(1 << 20) {
                        assert_eq!(a.state_number(s), b.state_number(s));
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                _ => panic!(
                    "{}: {:?} on one thread, {:?} on {threads}",
                    path.display(),
                    one.as_ref().err().map(ToString::to_string),
                    many.as_ref().err().map(ToString::to_string)
                ),
            }
        }
    }
}
