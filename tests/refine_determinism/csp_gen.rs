//! Random small CSPm scripts whose assertions mostly fail.
//!
//! Sequential processes `P0..` are recursive, built from prefixes (plain, output, input and
//! dotted events), external and internal choice, `STOP` and `SKIP`; every recursive call is
//! guarded by a prefix. Composite processes `Q0..` combine them without recursion (so every
//! state space is finite): generalised parallel, interleaving, hiding (which can make tau
//! cycles) and choice. The assertions are refinements in the three models and the
//! deadlock- and divergence-freedom, determinism and "has trace" properties.

use std::fmt::Write as _;

use super::rng::Rng;

const PREFIXES: [&str; 12] = [
    "a", "d", "b!0", "b!1", "b.1", "b?x", "c.0", "c!1", "c.2", "c?y", "a", "d",
];
const SETS: [&str; 7] = [
    "{| a |}",
    "{| b |}",
    "{| c |}",
    "{| a, b |}",
    "{| b, c |}",
    "{a, b.1, c.0}",
    "{d}",
];

fn sequential(rng: &mut Rng, depth: usize, procs: usize) -> String {
    let call = |rng: &mut Rng| format!("P{}", rng.below(procs));
    match if depth == 0 {
        rng.below(2)
    } else {
        rng.below(7)
    } {
        0 => {
            let rest = if rng.chance(85) {
                call(rng)
            } else if rng.chance(60) {
                "STOP".to_string()
            } else {
                "SKIP".to_string()
            };
            format!("{} -> {rest}", rng.pick(&PREFIXES))
        }
        1 if depth == 0 => format!("{} -> {}", rng.pick(&PREFIXES), call(rng)),
        1 | 2 => format!(
            "{} -> {}",
            rng.pick(&PREFIXES),
            sequential(rng, depth - 1, procs)
        ),
        3 | 4 => format!(
            "({}) [] ({})",
            sequential(rng, depth - 1, procs),
            sequential(rng, depth - 1, procs)
        ),
        5 => format!(
            "({}) |~| ({})",
            sequential(rng, depth - 1, procs),
            sequential(rng, depth - 1, procs)
        ),
        _ => {
            if rng.chance(50) {
                "STOP".to_string()
            } else {
                "SKIP".to_string()
            }
        }
    }
}

fn composite(rng: &mut Rng, depth: usize, procs: usize) -> String {
    if depth == 0 {
        return format!("P{}", rng.below(procs));
    }
    let sub = |rng: &mut Rng| {
        let depth = rng.below(depth);
        composite(rng, depth, procs)
    };
    match rng.below(6) {
        0 => format!("({}) [| {} |] ({})", sub(rng), rng.pick(&SETS), sub(rng)),
        1 => format!("({}) ||| ({})", sub(rng), sub(rng)),
        2 => format!("({}) \\ {}", sub(rng), rng.pick(&SETS)),
        3 => format!("({}) [] ({})", sub(rng), sub(rng)),
        4 => format!("({}) |~| ({})", sub(rng), sub(rng)),
        _ => format!("P{}", rng.below(procs)),
    }
}

/// A script with 2 to 4 sequential processes, 2 or 3 composite ones and 5 to 8 assertions
/// (at least one in each refinement model).
pub fn random_script(rng: &mut Rng) -> String {
    let mut text = String::from("channel a, d\nchannel b : {0..1}\nchannel c : {0..2}\n\n");
    let procs = rng.range(2, 4);
    for i in 0..procs {
        let depth = rng.range(1, 3);
        let _ = writeln!(text, "P{i} = {}", sequential(rng, depth, procs));
    }
    let composites = rng.range(2, 3);
    for i in 0..composites {
        let depth = rng.range(1, 3);
        let _ = writeln!(text, "Q{i} = {}", composite(rng, depth, procs));
    }
    text.push('\n');
    let name = |rng: &mut Rng| {
        if rng.chance(50) {
            format!("P{}", rng.below(procs))
        } else {
            format!("Q{}", rng.below(composites))
        }
    };
    for model in ["[T=", "[F=", "[FD="] {
        let (spec, implementation) = (name(rng), name(rng));
        let _ = writeln!(text, "assert {spec} {model} {implementation}");
    }
    for _ in 0..rng.range(2, 5) {
        let line = match rng.below(10) {
            0 => format!("{} [T= {}", name(rng), name(rng)),
            1 => format!("{} [F= {}", name(rng), name(rng)),
            2 => format!("{} [FD= {}", name(rng), name(rng)),
            3 => format!("{} :[deadlock free]", name(rng)),
            4 => format!("{} :[deadlock free [F]]", name(rng)),
            5 => format!("{} :[divergence free]", name(rng)),
            6 => format!("{} :[deterministic [F]]", name(rng)),
            7 => format!("{} :[deterministic [FD]]", name(rng)),
            8 => {
                let events = ["a", "d", "b.0", "b.1", "c.2"];
                let trace: Vec<&str> = (0..rng.range(1, 3))
                    .map(|_| events[rng.below(events.len())])
                    .collect();
                format!("{} :[has trace]: <{}>", name(rng), trace.join(", "))
            }
            _ => format!("{} :[deadlock free [FD]]", name(rng)),
        };
        let _ = writeln!(text, "assert {line}");
    }
    text
}
