//! Refinement benchmarks: the L(n,k) family of thesis Example 2.3.4 (seed 000 Example 3),
//! checked against itself with the antichain algorithm (BFS and DFS) in the traces and
//! failures models. Only the check is timed; L(n,k) is built once per point, outside the
//! measurement.
//!
//! The group `refine_L_n_k_threads` checks L(250,250) and L(500,500) against themselves with
//! the breadth-first search at 1 and 2 worker threads (`CheckOptions::threads`): the speedup
//! of the parallel search on the thesis's family.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use weft::lts::Lts;
use weft::refine::{check, CheckOptions, Model, Search};

/// L(n,k): states s_1..s_n (s_i is id i-1), s_i --e_j--> s_{i-1} for j = 1..k, initial s_n.
fn l_n_k(n: u32, k: u32) -> Lts {
    let mut names = vec!["tau".to_string()];
    names.extend((1..=k).map(|j| format!("e{j}")));
    let mut transitions = Vec::with_capacity(((n - 1) * k) as usize);
    for i in 2..=n {
        for j in 1..=k {
            transitions.push((i - 1, j, i - 2));
        }
    }
    Lts::from_transitions(n - 1, n, names, &transitions)
}

fn bench_lnk(c: &mut Criterion) {
    let mut group = c.benchmark_group("refine_L_n_k");
    group.sample_size(10);
    for &(n, k) in &[(100, 100), (250, 250), (500, 100), (100, 500), (500, 500)] {
        let l = l_n_k(n, k);
        for model in [Model::Traces, Model::Failures] {
            for search in [Search::Bfs, Search::Dfs] {
                let opts = CheckOptions {
                    model,
                    search,
                    no_antichain: false,
                    threads: weft::threads::Threads::ONE,
                };
                let id =
                    BenchmarkId::new(format!("{}/{search:?}", model.name()), format!("{n}x{k}"));
                group.bench_with_input(id, &l, |b, l| {
                    b.iter(|| {
                        let r = check(black_box(l), black_box(l), &opts).expect("check");
                        assert!(r.holds());
                        r.stats.pairs_explored
                    })
                });
            }
        }
    }
    group.finish();
}

fn bench_lnk_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("refine_L_n_k_threads");
    group.sample_size(10);
    for &(n, k) in &[(250, 250), (500, 500)] {
        let l = l_n_k(n, k);
        for model in [Model::Traces, Model::Failures] {
            for threads in [1, 2] {
                let opts = CheckOptions {
                    model,
                    search: Search::Bfs,
                    no_antichain: false,
                    threads: weft::threads::Threads::new(threads)
                        .expect("a thread count from 1 to 1024"),
                };
                let id = BenchmarkId::new(
                    format!("{}/threads{threads}", model.name()),
                    format!("{n}x{k}"),
                );
                group.bench_with_input(id, &l, |b, l| {
                    b.iter(|| {
                        let r = check(black_box(l), black_box(l), &opts).expect("check");
                        assert!(r.holds());
                        r.stats.pairs_explored
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_lnk, bench_lnk_threads);
criterion_main!(benches);
