//! FDR's compression functions (`normal`, `sbisim`, `tau_loop_factor`, ...) on random CSPm
//! processes: a compressed process is equivalent to its argument in every model the
//! compression is valid for (it refines and is refined by it), alone and as a component of a
//! parallel composition; `chase(P)` refines `P`, alone and in a network; a compression used in a model it is not valid
//! for is refused. The refinement checks themselves are tested against independent oracles
//! (`verify_oracle.rs`, `refine_props.rs`).
//!
//! `WEFT_COMPRESS_CASES` sets the number of scripts (default 12), `WEFT_COMPRESS_SEED` the
//! seed.

#[path = "refine_determinism/csp_gen.rs"]
mod csp_gen;
#[path = "refine_determinism/rng.rs"]
#[allow(dead_code)]
mod rng;

use std::path::Path;
use std::sync::Arc;

use rng::Rng;
use weft::csp::load_str;
use weft::reduce::Compression;
use weft::verify::{AssertionRun, Verdict, VerifyOptions};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The definitions of a random script (its assertions dropped) and its process names.
fn random_definitions(rng: &mut Rng) -> (String, Vec<String>) {
    let script = csp_gen::random_script(rng);
    let definitions: String = script
        .lines()
        .filter(|l| !l.starts_with("assert"))
        .map(|l| format!("{l}\n"))
        .collect();
    let names = definitions
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(n, _)| n.trim().to_string()))
        .filter(|n| n.starts_with('P') || n.starts_with('Q'))
        .collect();
    (definitions, names)
}

/// Runs `assertions` after `definitions`: the verdict names, in order.
fn verdicts(definitions: &str, assertions: &[String]) -> Vec<String> {
    let mut text = definitions.to_string();
    for a in assertions {
        text.push_str(&format!("assert {a}\n"));
    }
    let script =
        Arc::new(load_str("compress.csp", &text, Path::new(".")).expect("the script loads"));
    let mut run = AssertionRun::new(script, VerifyOptions::default());
    run.run_all(|_| {})
        .iter()
        .map(|r| match &r.verdict {
            Verdict::Error(e) => format!("error: {e}"),
            v => v.name().to_string(),
        })
        .collect()
}

const EQUIVALENCES: [Compression; 8] = [
    Compression::Explicate,
    Compression::Sbisim,
    Compression::Wbisim,
    Compression::Dbisim,
    Compression::Diamond,
    Compression::Normal,
    Compression::ModelCompress,
    Compression::TauLoopFactor,
];

const MODELS: [(&str, weft::refine::Model); 5] = [
    ("T", weft::refine::Model::Traces),
    ("F", weft::refine::Model::Failures),
    ("FD", weft::refine::Model::FailuresDivergences),
    ("V", weft::refine::Model::Revivals),
    ("R", weft::refine::Model::RefusalTesting),
];

#[test]
fn compressed_processes_are_equivalent_to_their_arguments_where_valid() {
    let scripts = env_number("WEFT_COMPRESS_CASES", 12);
    let mut rng = Rng::new(env_number("WEFT_COMPRESS_SEED", 0xC0_4E55));
    let mut failures = Vec::new();
    for _ in 0..scripts {
        let (definitions, names) = random_definitions(&mut rng);
        let x = names[rng.below(names.len())].clone();
        let y = names[rng.below(names.len())].clone();
        let mut assertions = Vec::new();
        let mut expected = Vec::new();
        for c in EQUIVALENCES {
            let compressed = format!("{}({x})", c.name());
            // in a network: the compressed process as one component
            let network = format!("({}({x})) [| {{| a, b |}} |] ({y})", c.name());
            let plain_network = format!("({x}) [| {{| a, b |}} |] ({y})");
            for (letters, model) in MODELS {
                let want = if c.valid_in(model) { "holds" } else { "error" };
                for (spec, imp) in [
                    (&x, &compressed),
                    (&compressed, &x),
                    (&plain_network, &network),
                    (&network, &plain_network),
                ] {
                    assertions.push(format!("{spec} [{letters}= {imp}"));
                    expected.push(want);
                }
            }
        }
        for (letters, _) in &MODELS[..3] {
            assertions.push(format!("{x} [{letters}= chase({x})"));
            expected.push("holds");
            // `chase` is applied on the fly: inside a network too, and refinement is
            // compositional.
            let chased_network = format!("(chase({x})) [| {{| a, b |}} |] ({y})");
            let plain_network = format!("({x}) [| {{| a, b |}} |] ({y})");
            assertions.push(format!("{plain_network} [{letters}= {chased_network}"));
            expected.push("holds");
        }
        let got = verdicts(&definitions, &assertions);
        for ((a, want), got) in assertions.iter().zip(&expected).zip(&got) {
            if !got.starts_with(want) {
                failures.push(format!(
                    "{definitions}assert {a}\n  expected {want}, got {got}\n"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_compression_outside_its_models_is_refused_with_a_message() {
    let text = "channel a, b\nP = a -> P |~| b -> P\nassert normal(P) [V= P\nassert P [R= normal(P)\nassert normal(P) [FD= P\n";
    let got = verdicts(text, &[]);
    assert!(
        got[0].contains("`normal` is valid only in the models T, F, FD"),
        "{got:?}"
    );
    assert!(got[0].contains("revivals"), "{got:?}");
    assert!(got[1].starts_with("error"), "{got:?}");
    assert_eq!(got[2], "holds");
}

/// A compression nested inside others (made while their arguments were explored) counts as
/// applied: `normal`, two `sbisim`s deep, still keeps the check out of the revivals and
/// refusal-testing models, whether the system fires the outer compression directly or inside
/// a network.
#[test]
fn a_compression_nested_in_others_is_refused_outside_its_models() {
    let text = "channel a, b\nP = a -> P |~| b -> P\nQ = sbisim(sbisim(normal(P) ||| STOP))\n\
                assert Q [V= P\nassert P [R= Q [| {a} |] P\nassert Q [FD= P\n";
    let got = verdicts(text, &[]);
    assert!(
        got[0].contains("`normal` is valid only in the models T, F, FD"),
        "{got:?}"
    );
    assert!(
        got[1].contains("`normal` is valid only in the models T, F, FD"),
        "{got:?}"
    );
    assert_eq!(got[2], "holds");
}

#[test]
fn compressions_without_a_declaration_are_built_in_and_a_self_compression_is_an_error() {
    let text = "channel a\nP = normal(a -> P)\nassert P :[deadlock free]\nassert sbisim(a -> STOP) [T= a -> STOP\n";
    let got = verdicts(text, &[]);
    assert!(got[0].contains("needed to compute itself"), "{got:?}");
    assert_eq!(got[1], "holds");
}
