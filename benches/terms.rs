//! Criterion benchmarks of the term library: the six workloads of Figure 5.4 for each lock
//! variant at 1 and 2 threads (and the machine's core count), on small sizes.

mod term_workloads;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use term_workloads::{duration, run, Sizes, VARIANTS, WORKLOADS};

fn figure_5_4(c: &mut Criterion) {
    let sizes = Sizes {
        depth: 20_000,
        create_reps: 4,
        traverse_depth: 16,
        traverse_reps: 4,
    };
    let mut threads = vec![1, 2];
    if num_cpus::get() > 2 {
        threads.push(num_cpus::get());
    }
    for workload in WORKLOADS {
        let mut group = c.benchmark_group(workload);
        group.sample_size(10);
        for variant in VARIANTS {
            for &t in &threads {
                if variant == "sequential" && t != 1 {
                    continue;
                }
                group.bench_with_input(BenchmarkId::new(variant, t), &t, |b, &t| {
                    b.iter_custom(|iters| {
                        (0..iters)
                            .map(|_| duration(run(variant, workload, t, sizes)))
                            .sum()
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, figure_5_4);
criterion_main!(benches);
