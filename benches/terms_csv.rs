//! Runs the term-library micro-benchmarks outside criterion and prints CSV:
//! `workload,variant,threads,seconds,ns_per_op` (median of `--runs` runs).
//!
//! Usage: `cargo bench --bench terms_csv -- [--quick] [--threads 1,2,4] [--runs 3]
//!         [--workloads a,b] [--variants bf,sequential]`

mod term_workloads;

use term_workloads::{median, run, Sizes, VARIANTS, WORKLOADS};

fn list(value: &str) -> Vec<String> {
    value.split(',').map(|s| s.trim().to_string()).collect()
}

fn main() {
    let mut quick = false;
    let mut threads: Vec<usize> = (0..)
        .map(|k| 1usize << k)
        .take_while(|&t| t <= num_cpus::get())
        .collect();
    let mut runs = 3usize;
    let mut workloads: Vec<String> = WORKLOADS.iter().map(|s| s.to_string()).collect();
    let mut variants: Vec<String> = VARIANTS.iter().map(|s| s.to_string()).collect();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => quick = true,
            "--threads" => {
                threads = list(&value())
                    .iter()
                    .map(|t| t.parse().expect("--threads takes numbers"))
                    .collect()
            }
            "--runs" => runs = value().parse().expect("--runs takes a number"),
            "--workloads" => workloads = list(&value()),
            "--variants" => variants = list(&value()),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let sizes = if quick {
        Sizes {
            depth: 50_000,
            create_reps: 8,
            traverse_depth: 18,
            traverse_reps: 4,
        }
    } else {
        Sizes {
            depth: 200_000,
            create_reps: 32,
            traverse_depth: 20,
            traverse_reps: 64,
        }
    };
    println!("workload,variant,threads,seconds,ns_per_op");
    for workload in &workloads {
        for variant in &variants {
            for &t in &threads {
                if variant == "sequential" && t != 1 {
                    continue;
                }
                let m = median(
                    (0..runs)
                        .map(|_| run(variant, workload, t, sizes))
                        .collect(),
                );
                println!(
                    "{workload},{variant},{t},{:.6},{:.2}",
                    m.seconds,
                    m.ns_per_op()
                );
            }
        }
    }
}
