//! The operational semantics of CSPm processes (`CspSystem`) against the slow interpreter of
//! `common::csp_oracle`: hand-written cases per operator, every process of the corpus scripts,
//! the itdojp problems' state counts, and thread-count independence.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::csp_oracle::{compare, system_lts, ORACLE_LIMIT};
use weft::csp::{load_script, load_str, CspSystem, Script};
use weft::explore::{explore, ExploreOptions};

fn script_of(src: &str) -> Arc<Script> {
    Arc::new(load_str("t.csp", src, Path::new(".")).unwrap())
}

/// States, transitions (checked against the oracle too).
fn counts(src: &str, name: &str) -> (u32, usize) {
    let script = script_of(src);
    let p = script.process(name, &[]).unwrap();
    assert!(compare(&script, &p, src), "{src}: too big");
    let lts = system_lts(&script, &p, 2).unwrap().unwrap();
    (lts.states, lts.transitions.len())
}

fn transitions(src: &str, name: &str) -> Vec<(u32, String, u32)> {
    let script = script_of(src);
    let p = script.process(name, &[]).unwrap();
    let mut t = system_lts(&script, &p, 1).unwrap().unwrap().transitions;
    t.sort();
    t
}

const AB: &str = "channel a, b, c\n";

#[test]
fn dining_philosophers_five() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/csp/dining.csp");
    let script = Arc::new(load_script(&path).unwrap());
    let p = script.process("SYSTEM", &[]).unwrap();
    for threads in [1, 2, 4] {
        let sys = CspSystem::new(&script, &p).unwrap();
        let opts = ExploreOptions {
            threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
            ..Default::default()
        };
        let r = explore(&sys, &opts);
        assert!(sys.take_error().is_none());
        // Independently: a direct model of the 5 philosophers and forks (7 x 3 local states).
        assert_eq!(
            (r.stats.states, r.stats.transitions, r.stats.deadlocks),
            (7774, 34240, 1)
        );
    }
}

#[test]
fn prefix_choice_and_internal_choice() {
    assert_eq!(
        counts(&format!("{AB}P = (a -> STOP) |~| (a -> b -> STOP)"), "P"),
        (5, 5)
    );
    // External choice: a tau of a side does not resolve it; an event does.
    let t = transitions(&format!("{AB}P = (STOP |~| a -> STOP) [] b -> STOP"), "P");
    let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
    assert_eq!(labels.iter().filter(|l| **l == "tau").count(), 2);
    assert_eq!(
        counts(&format!("{AB}P = (STOP |~| a -> STOP) [] b -> STOP"), "P"),
        (4, 6)
    );
}

#[test]
fn tick_synchronises_in_parallel() {
    // Distributed termination (FDR's operational semantics): an operand's ✓ is a tau of the
    // parallel, to that operand's Ω; the parallel's one ✓ comes when every operand is Ω.
    // SKIP ||| SKIP: (S,S) -> (Ω,S), (S,Ω) -> (Ω,Ω) -✓-> Ω.
    assert_eq!(counts(&format!("{AB}P = SKIP ||| SKIP"), "P"), (5, 5));
    // 3 x 3 operand states and Ω; 2 moves per operand per state of the other, and the ✓.
    assert_eq!(
        counts(&format!("{AB}P = (a -> SKIP) ||| (b -> SKIP)"), "P"),
        (10, 13)
    );
    assert_eq!(
        counts(&format!("{AB}P = (a -> SKIP) [| {{a}} |] (a -> SKIP)"), "P"),
        (6, 6)
    );
    assert_eq!(
        counts(
            &format!("{AB}P = (a -> SKIP) [{{a}} || {{a, b}}] (a -> b -> SKIP)"),
            "P"
        ),
        (8, 9)
    );
    // A component that cannot terminate blocks ✓ (the other still terminates by itself).
    assert_eq!(counts(&format!("{AB}P = SKIP ||| STOP"), "P"), (2, 1));
    // 2^3 operand states and Ω; a tau per operand not yet Ω in each, and the ✓.
    assert_eq!(
        counts(&format!("{AB}P = ||| i : {{0..2}} @ SKIP"), "P"),
        (9, 13)
    );
    // Sequential composition after a terminated parallel: 2 x 3 parallel states, then
    // b -> STOP and STOP.
    assert_eq!(
        counts(&format!("{AB}P = (SKIP ||| a -> SKIP) ; b -> STOP"), "P"),
        (8, 9)
    );
}

#[test]
fn sequential_composition() {
    assert_eq!(
        counts(&format!("{AB}P = (a -> SKIP) ; (b -> SKIP)"), "P"),
        (5, 4)
    );
    let t = transitions(&format!("{AB}P = SKIP ; a -> STOP"), "P");
    assert_eq!(t[0].1, "tau");
    // Recursion through `;` (right side not unfolded until reached).
    assert_eq!(counts(&format!("{AB}P = a -> (SKIP ; P)"), "P"), (2, 2));
}

#[test]
fn interrupt() {
    // P's events keep the interrupt, Q's resolve it, P's ✓ ends it.
    assert_eq!(
        counts(&format!("{AB}P = (a -> SKIP) /\\ (b -> STOP)"), "P"),
        (4, 4)
    );
    let t = transitions(&format!("{AB}P = (a -> SKIP) /\\ (b -> STOP)"), "P");
    assert!(t.iter().any(|x| x.1 == "✓"));
    assert_eq!(
        counts(
            &format!("{AB}P = a -> P\nR = P /\\ (STOP |~| b -> STOP)"),
            "R"
        ),
        (4, 6)
    );
}

#[test]
fn timeout() {
    assert_eq!(
        counts(&format!("{AB}P = (a -> P) [> (b -> STOP)"), "P"),
        (3, 3)
    );
    // P's tau keeps the timeout.
    assert_eq!(
        counts(&format!("{AB}P = (STOP |~| a -> STOP) [> (b -> STOP)"), "P"),
        (5, 7)
    );
}

#[test]
fn hiding_renaming_linking() {
    assert_eq!(
        counts(&format!("{AB}P = a -> b -> P\nQ = P \\ {{a}}"), "Q"),
        (2, 2)
    );
    let t = transitions(&format!("{AB}P = (a -> STOP) [[a <- b, a <- c]]"), "P");
    let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
    assert_eq!(labels, ["b", "c"]);
    // Link: P's a with Q's b as a tau; other events interleave.
    let src = format!("{AB}P = (a -> c -> STOP) [a <-> b] (b -> STOP [] c -> STOP)");
    let t = transitions(&src, "P");
    let labels: Vec<&str> = t.iter().map(|x| x.1.as_str()).collect();
    assert_eq!(labels.iter().filter(|l| **l == "tau").count(), 1);
    assert_eq!(counts(&src, "P"), (4, 3));
    assert_eq!(counts(&format!("{AB}P = SKIP [a <-> b] SKIP"), "P"), (5, 5));
}

/// FDR4's further operators, against the oracle, with their state and transition counts by
/// hand.
#[test]
fn exception_synchronising_priority_div() {
    let ext = "external prioritise, prioritisepo\n";
    // a, then b hands over to d -> STOP: 4 states, 3 transitions (c never happens)
    let e = format!("{AB}channel d\nP = a -> b -> c -> STOP [| {{b}} |> d -> STOP");
    assert_eq!(counts(&e, "P"), (4, 3));
    // P's tau keeps the exception; P's ✓ ends it (SKIP's ✓ then Ω)
    let e = format!("{AB}P = (STOP |~| SKIP) [| {{b}} |> a -> STOP");
    assert_eq!(counts(&e, "P"), (4, 3));
    // a by both keeps the choice; then b or c resolve it
    let s = format!("{AB}P = (a -> b -> STOP) [+ {{a}} +] (a -> c -> STOP)");
    assert_eq!(counts(&s, "P"), (3, 3));
    let i = format!("{AB}P = (a -> b -> STOP) /+ {{a}} +\\ (a -> c -> STOP)");
    assert_eq!(counts(&i, "P"), (4, 4));
    // b beaten by a; c in no set
    let p = format!("{ext}{AB}P = prioritise(a -> STOP [] b -> STOP [] c -> STOP, <{{a}}, {{b}}>)");
    assert_eq!(counts(&p, "P"), (2, 2));
    // the tau of `[>` beats b: only the tau is left, then c
    let p = format!("{ext}{AB}P = prioritise(b -> STOP [> c -> STOP, <{{}}, {{b}}>)");
    assert_eq!(counts(&p, "P"), (3, 2));
    let p = format!(
        "{ext}{AB}P = prioritisepo(a -> STOP [] b -> STOP [] c -> STOP, {{a, b, c}}, {{(a, b), (b, c)}}, {{a}})"
    );
    assert_eq!(counts(&p, "P"), (2, 1));
    assert_eq!(counts(&format!("{AB}P = DIV"), "P"), (1, 1));
    // c$x: a tau to each choice, then its one event
    let n = "channel c : {0..2}\nP = c$x -> STOP";
    assert_eq!(counts(n, "P"), (5, 6));
    // left.0, two hidden links, right.2
    let l = "channel l, r : {0..2}\nC(i) = l.i -> r.i -> STOP\n\
             P = [r.i <-> l.(i+1)] i : <0..2> @ C(i)";
    assert_eq!(counts(l, "P"), (5, 4));
}

#[test]
fn recursion_through_hiding_is_finite() {
    // P = (a -> P) \ {a}: nested hidings merge, so the process is one divergent state.
    assert_eq!(counts(&format!("{AB}P = (a -> P) \\ {{a}}"), "P"), (1, 1));
    assert_eq!(
        counts(&format!("{AB}P = (a -> b -> P) \\ {{a}}"), "P"),
        (2, 2)
    );
    assert_eq!(
        counts(&format!("{AB}P = (a -> (P \\ {{b}})) \\ {{a}}"), "P"),
        (2, 2)
    );
}

#[test]
fn recursion_through_renaming_is_finite() {
    // Nested renamings merge into their composition, so each process is finite.
    let src = "channel a, b, c\n\
               P = a -> (P [[a <- b]])\n\
               Q = a -> ((Q [[a <- b]]) [[b <- c, a <- a]])\n\
               R = (a -> R [[a <- b, a <- c]]) [] c -> STOP\n";
    // P -a-> P[[a <- b]], which does b back to itself.
    assert_eq!(transitions(src, "P").len(), 2);
    assert!(transitions(src, "P")
        .iter()
        .any(|t| t.1 == "b" && t.0 == t.2));
    // (Q[[a <- b]])[[b <- c, a <- a]] is Q[[a <- c]]: a then c for ever.
    let q = transitions(src, "Q");
    assert_eq!(q.len(), 2);
    assert!(q.iter().any(|t| t.1 == "a" && t.0 != t.2));
    assert!(q.iter().any(|t| t.1 == "c" && t.0 == t.2));
    // R[[a <- b, a <- c]] composed with itself is itself: b and c loop, c also stops.
    let r = transitions(src, "R");
    let labels: Vec<&str> = r.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(r.len(), 5, "{r:?}");
    assert_eq!(labels.iter().filter(|l| **l == "c").count(), 3, "{r:?}");
}

#[test]
fn nested_renamings_are_merged_by_the_oracle_too() {
    // Found by `csp_semantics_props` in CI: after the link fires, `P1`'s renaming is applied
    // twice; weft merges `R` composed with `R` into `R` (the same state as before), and the
    // oracle must count states the same way: 25 states, 41 transitions.
    let src = "channel a, b, c\nchannel d : {0..1}\n\
               P0 = ((d?x -> c -> SKIP) [> (STOP)) [d.0 <-> b] ((d.0 -> P1) |~| (STOP))\n\
               P1 = (c -> (b -> P1)) [[a <- a, a <- c]]\n";
    assert_eq!(counts(src, "P0"), (25, 41));
    // Here weft keeps the outer renaming as a network node and the inner one in its leaf, so
    // it counts two states where the oracle's merged term is one: bisimilar, not counted.
    let src = "channel a, b, c\nP0 = (a -> P0) [[a <- a, a <- c]]\n";
    let script = script_of(src);
    let p = script.process("P0", &[]).unwrap();
    assert!(compare(&script, &p, src), "{src}: too big");
}

#[test]
fn unguarded_recursion_is_an_error() {
    let script = script_of(&format!(
        "{AB}P(n) = a -> Q(n)\nQ(n) = R(n) [] b -> STOP\nR(n) = Q(n) |~| STOP"
    ));
    let p = script.process("P", &[weft::csp::Value::Int(1)]).unwrap();
    let sys = CspSystem::new(&script, &p).unwrap();
    let r = explore(&sys, &ExploreOptions::default());
    let e = sys.take_error().expect("an error");
    assert!(
        e.message.contains("unguarded") || e.message.contains("itself"),
        "{e}"
    );
    assert_eq!(r.stats.states, 1);
}

#[test]
fn evaluation_errors_are_kept_and_the_state_has_no_transitions() {
    let script = script_of("channel c : {0..2}\nP(x) = c!x -> P(x+1)");
    let p = script.process("P", &[weft::csp::Value::Int(0)]).unwrap();
    let sys = CspSystem::new(&script, &p).unwrap();
    let r = explore(&sys, &ExploreOptions::default());
    let e = sys.take_error().expect("an error");
    assert!(e.location.is_some(), "{e}");
    assert_eq!(r.stats.states, 4);
    assert!(sys.take_error().is_none());
}

fn scripts_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scripts_under(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("csp" | "cspm")) {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_process_matches_the_oracle() {
    let root = common::corpus_dir().join("csp");
    let mut files = Vec::new();
    for sub in [
        "itdojp_cspx",
        "cspmf_parser_inputs",
        "libcspm_tests/tests/evaluator/should_pass",
    ] {
        scripts_under(&root.join(sub), &mut files);
    }
    assert!(
        files.len() > 60,
        "corpus not found under {}",
        root.display()
    );
    let (mut compared, mut skipped) = (0, 0);
    for file in &files {
        let Ok(script) = load_script(file) else {
            continue;
        };
        let script = Arc::new(script);
        if script.events().is_err() {
            continue;
        }
        for name in script.definition_names() {
            let Ok(p) = script.process(name, &[]) else {
                continue;
            };
            let what = format!("{}: {name}", file.display());
            if compare(&script, &p, &what) {
                compared += 1;
            } else {
                skipped += 1;
            }
        }
    }
    eprintln!("compared {compared} processes, skipped {skipped} (over {ORACLE_LIMIT} states)");
    assert!(compared > 100, "only {compared} processes compared");
}

/// `stats: states: eq: N` and `transitions: eq: M` (or `min:`) of an itdojp `expect.yaml`.
fn expected_stats(text: &str) -> Option<[(String, u64); 2]> {
    let at = text.find("stats:")?;
    let mut found = Vec::new();
    let mut key = "";
    for line in text[at..].lines().skip(1) {
        let l = line.trim();
        if l == "states:" || l == "transitions:" {
            key = if l == "states:" {
                "states"
            } else {
                "transitions"
            };
        } else if let Some((op, n)) = l.split_once(": ") {
            if (op == "eq" || op == "min") && !key.is_empty() {
                found.push((format!("{key} {op}"), n.trim().parse().ok()?));
                key = "";
            }
        }
        if found.len() == 2 {
            break;
        }
    }
    found.try_into().ok()
}

#[test]
fn itdojp_state_counts() {
    let dir = common::corpus_dir().join("csp/itdojp_cspx/problems");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for problem in entries {
        let Ok(text) = std::fs::read_to_string(problem.join("expect.yaml")) else {
            continue;
        };
        let Some(expected) = expected_stats(&text) else {
            continue;
        };
        let (file, process) = if problem.join("model.cspm").exists() {
            (problem.join("model.cspm"), None)
        } else {
            (problem.join("impl.cspm"), Some("IMPL"))
        };
        let script = Arc::new(load_script(&file).unwrap());
        let p = match process {
            Some(name) => script.process(name, &[]).unwrap(),
            None => {
                // The stats are those of the last check.
                let a = script.assertions().last().unwrap();
                (*a.check
                    .as_ref()
                    .expect("an assertion")
                    .processes()
                    .last()
                    .unwrap())
                .clone()
            }
        };
        let sys = CspSystem::new(&script, &p).unwrap();
        let r = explore(&sys, &ExploreOptions::default());
        assert!(sys.take_error().is_none());
        for (what, n) in &expected {
            let got = if what.starts_with("states") {
                r.stats.states
            } else {
                r.stats.transitions
            };
            if what.ends_with("eq") {
                assert_eq!(got, *n, "{}: {what}", problem.display());
            } else {
                assert!(got >= *n, "{}: {what} {n}, got {got}", problem.display());
            }
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} problems with stats");
}

#[test]
fn garbage_collection_during_exploration_keeps_every_state() {
    // Six philosophers: 46656 states, 246612 transitions (a direct model of the 7 x 3 local
    // states gives the same); the term table collects after every level.
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/csp/dining.csp"))
            .unwrap()
            .replace("N = 5", "N = 6");
    let script = script_of(&text);
    let p = script.process("SYSTEM", &[]).unwrap();
    let before = weft::term::global().stats().collections;
    for threads in [1, 2] {
        let sys = CspSystem::new(&script, &p).unwrap();
        // Between two levels no worker is in a section: collect there.
        let collect: weft::explore::LevelObserver =
            std::sync::Arc::new(|_: &weft::explore::LevelReport| {
                weft::term::global().register_thread().collect_garbage();
            });
        let opts = ExploreOptions {
            threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
            record_transitions: true,
            on_level: Some(collect),
            ..Default::default()
        };
        let r = explore(&sys, &opts);
        assert!(sys.take_error().is_none());
        assert_eq!((r.stats.states, r.stats.transitions), (46656, 246612));
        // The states survived the collections: firing each again gives known states and the
        // same number of transitions.
        let known: std::collections::HashSet<_> = r.states.iter().copied().collect();
        let mut again = 0u64;
        for s in &r.states {
            weft::ts::TransitionSystem::for_each_successor(&sys, s, &mut |_, t| {
                assert!(known.contains(&t));
                again += 1;
            });
        }
        assert_eq!(again, r.stats.transitions);
        let lts = r.to_lts(&sys);
        assert_eq!(lts.num_transitions() as u64, r.stats.transitions);
    }
    let after = weft::term::global().stats().collections;
    assert!(after > before, "no collection ran ({before} -> {after})");
}
