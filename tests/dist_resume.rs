//! A checkpointed distributed exploration killed at any point of starting again with wider
//! keys resumes with the counts of a run never interrupted (`src/dist/resume.rs`).
//!
//! A run of `ex.csp` (keyed by its structural encoding) from keys of 3 words, with 2 workers,
//! writes a checkpoint at every level and starts again with wider keys; every part it ever
//! writes is kept aside as it runs. The checkpoint folders a kill could leave are then made
//! from those parts: the narrower keys' last checkpoint, with the wider keys' first one
//! written by no worker, by one, by both, or torn in one; the narrower keys' parts removed by
//! one worker only; the wider keys' second checkpoint written by one worker, or torn. Each
//! resumes (in this process, and in 2 processes of `weft explore`, the parts split between
//! their folders) with the uninterrupted run's counts, widest keys and restarts; a folder
//! with no level every worker wrote whole is refused with an error.

#[path = "common/dist.rs"]
mod dist;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dist::{default_process, root, scratch, weft_distributed_command};
use weft::csp::{load_script, CspSystem};
use weft::dist::checkpoint::Persistence;
use weft::dist::{explore_distributed, Cluster, DistExploration, DistOptions};
use weft::explore::{LevelReport, StopSignal};

fn script() -> PathBuf {
    root().join("tests/corpus/csp/cspmf_parser_inputs/ex.csp")
}

/// The process of `ex.csp` that `weft explore` explores.
fn system() -> CspSystem {
    let script = Arc::new(load_script(&script()).unwrap());
    let process = default_process(&script);
    CspSystem::new(&script, &process).unwrap()
}

/// The fingerprint `weft explore ex.csp --checkpoint` gives its parts (so that the command
/// resumes from the parts this process writes).
fn fingerprint() -> u64 {
    let bytes = std::fs::read(script()).unwrap();
    weft::explore::checkpoint::fingerprint(&[&bytes, b""])
}

/// A part's worker, keys' width and level, from its file name.
fn parse(name: &str) -> Option<(u64, u64, u64)> {
    let rest = name.strip_prefix("worker-")?.strip_suffix(".ckpt")?;
    let (worker, rest) = rest.split_once("-words-")?;
    let (width, level) = rest.split_once("-level-")?;
    Some((
        worker.parse().ok()?,
        width.parse().ok()?,
        level.parse().ok()?,
    ))
}

/// Copies every part in `dir` not yet in `pool` there (a part a worker removes meanwhile is
/// skipped: the next level's copy has the parts that matter).
fn keep_parts(dir: &Path, pool: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| parse(n).is_some()) else {
            continue;
        };
        let target = pool.join(name);
        if !target.exists() {
            let temporary = pool.join(format!("{name}.copying"));
            if std::fs::copy(entry.path(), &temporary).is_ok() {
                std::fs::rename(&temporary, &target).unwrap();
            }
        }
    }
}

fn run(
    persist: Persistence,
    on_level: Option<weft::explore::LevelObserver>,
) -> Result<DistExploration, weft::dist::DistError> {
    let opts = DistOptions {
        persist: Some(persist),
        first_key_words: Some(3),
        on_level,
        ..Default::default()
    };
    explore_distributed(
        Arc::new(system()),
        &Cluster::single(2).unwrap(),
        &opts,
        &StopSignal::new(),
    )
}

fn persistence(checkpoint: Option<PathBuf>, resume: Option<PathBuf>) -> Persistence {
    Persistence {
        checkpoint,
        interval: std::time::Duration::ZERO,
        resume,
        fingerprint: fingerprint(),
        process: 0,
        processes: 1,
        key_restarts: 0,
    }
}

/// A part of the pool: worker, keys' width, level; and whether it is torn (cut in half).
#[derive(Clone, Copy, Debug)]
struct Placed {
    worker: u64,
    width: u64,
    level: u64,
    torn: bool,
}

fn part(worker: u64, width: u64, level: u64) -> Placed {
    Placed {
        worker,
        width,
        level,
        torn: false,
    }
}

fn torn(worker: u64, width: u64, level: u64) -> Placed {
    Placed {
        torn: true,
        ..part(worker, width, level)
    }
}

/// Makes in `dir` a checkpoint folder of the parts `placed` from `pool`: all in process 0's
/// folder (`split`: false), or each worker's in its process's (2 processes of 1 worker).
fn make_folder(pool: &Path, dir: &Path, placed: &[Placed], split: bool) {
    let _ = std::fs::remove_dir_all(dir);
    for p in placed {
        let name = format!(
            "worker-{}-words-{}-level-{}.ckpt",
            p.worker, p.width, p.level
        );
        let process = if split { p.worker } else { 0 };
        let folder = dir.join(format!("process-{process}"));
        std::fs::create_dir_all(&folder).unwrap();
        let bytes = std::fs::read(pool.join(&name))
            .unwrap_or_else(|e| panic!("{name} was written by the run: {e}"));
        let bytes = if p.torn {
            &bytes[..bytes.len() / 2]
        } else {
            &bytes[..]
        };
        std::fs::write(folder.join(&name), bytes).unwrap();
    }
}

#[test]
fn a_run_killed_anywhere_in_starting_again_with_wider_keys_resumes_with_the_same_counts() {
    let dir = scratch("resume-restarts");
    let checkpoint = dir.join("checkpoint");
    let pool = dir.join("pool");
    let _ = std::fs::remove_dir_all(&checkpoint);
    let _ = std::fs::remove_dir_all(&pool);
    std::fs::create_dir_all(&pool).unwrap();
    let observer = {
        let (from, pool) = (checkpoint.join("process-0"), pool.clone());
        Arc::new(move |_: &LevelReport| keep_parts(&from, &pool))
    };
    let whole = run(persistence(Some(checkpoint.clone()), None), Some(observer)).unwrap();
    keep_parts(&checkpoint.join("process-0"), &pool);
    assert!(whole.stats.complete);
    assert!(whole.key_restarts >= 1, "the run started again");
    let words = whole.key_words.expect("keyed by the structural encoding");

    // The parts written: by width, the levels each worker wrote.
    let mut written: BTreeMap<u64, BTreeMap<u64, Vec<u64>>> = BTreeMap::new();
    for entry in std::fs::read_dir(&pool).unwrap().flatten() {
        if let Some((worker, width, level)) = parse(entry.file_name().to_str().unwrap()) {
            let workers = written.entry(width).or_default().entry(level).or_default();
            workers.push(worker);
            workers.sort_unstable();
        }
    }
    let widths: Vec<u64> = written.keys().copied().collect();
    assert!(widths.len() >= 2, "parts of two widths: {written:?}");
    let (narrow, wide) = (widths[widths.len() - 2], widths[widths.len() - 1]);
    assert_eq!(
        wide,
        words as u64 + 1,
        "the widest parts are of the final keys"
    );
    let last_narrow = *written[&narrow].keys().max().unwrap();
    for (width, level) in [(narrow, last_narrow), (wide, 1), (wide, 2)] {
        assert_eq!(
            written[&width][&level],
            vec![0, 1],
            "{width} words, level {level}"
        );
    }
    let n = |worker| part(worker, narrow, last_narrow);
    let cases: Vec<(&str, Vec<Placed>)> = vec![
        ("the narrower keys' checkpoint", vec![n(0), n(1)]),
        (
            "worker 0 wrote the wider keys' first part",
            vec![n(0), n(1), part(0, wide, 1)],
        ),
        (
            "worker 1 wrote the wider keys' first part",
            vec![n(0), n(1), part(1, wide, 1)],
        ),
        (
            "worker 1's wider part is torn",
            vec![n(0), n(1), part(0, wide, 1), torn(1, wide, 1)],
        ),
        (
            "both wrote the wider keys' first part, neither removed the narrower",
            vec![n(0), n(1), part(0, wide, 1), part(1, wide, 1)],
        ),
        (
            "worker 0 removed its narrower part",
            vec![n(1), part(0, wide, 1), part(1, wide, 1)],
        ),
        (
            "worker 0 wrote the wider keys' second part",
            vec![part(0, wide, 1), part(1, wide, 1), part(0, wide, 2)],
        ),
        (
            "worker 0's second wider part is torn",
            vec![
                part(0, wide, 1),
                part(1, wide, 1),
                torn(0, wide, 2),
                part(1, wide, 2),
            ],
        ),
    ];
    let folder = dir.join("killed");
    for (what, placed) in &cases {
        make_folder(&pool, &folder, placed, false);
        let resumed = run(persistence(None, Some(folder.clone())), None)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(resumed.stats.complete, "{what}");
        assert_eq!(resumed.stats.states, whole.stats.states, "{what}");
        assert_eq!(resumed.stats.transitions, whole.stats.transitions, "{what}");
        assert_eq!(resumed.stats.levels, whole.stats.levels, "{what}");
        assert_eq!(resumed.stats.deadlocks, whole.stats.deadlocks, "{what}");
        assert_eq!(resumed.key_words, whole.key_words, "{what}");
        assert_eq!(resumed.key_restarts, whole.key_restarts, "{what}");
    }

    // The same folders, each worker's parts in its own process's folder, resumed by 2
    // processes of `weft explore`.
    let script = script();
    let script = script.to_str().unwrap();
    for (what, placed) in &cases[1..4] {
        make_folder(&pool, &folder, placed, true);
        let (resumed, code) = weft_distributed_command(
            "explore",
            &[script],
            2,
            1,
            &["--resume", folder.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{what}: {resumed}");
        assert_eq!(resumed["states"], whole.stats.states, "{what}");
        assert_eq!(resumed["transitions"], whole.stats.transitions, "{what}");
        assert_eq!(resumed["levels"], whole.stats.levels, "{what}");
        assert_eq!(resumed["deadlocks"], whole.stats.deadlocks, "{what}");
        assert_eq!(resumed["key_words"], words, "{what}");
        assert_eq!(resumed["key_restarts"], whole.key_restarts, "{what}");
    }

    // No level that every worker wrote whole: refused, whatever else is there.
    for placed in [
        vec![part(0, wide, 1), part(1, narrow, last_narrow)],
        vec![torn(0, narrow, last_narrow), n(1), part(0, wide, 1)],
    ] {
        make_folder(&pool, &folder, &placed, false);
        let error = run(persistence(None, Some(folder.clone())), None)
            .expect_err("no whole level")
            .to_string();
        assert!(
            error.contains("every worker of the run wrote whole"),
            "{error}"
        );
    }
}
