//! The `weft` command.

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

mod cli;

fn main() {
    std::process::exit(cli::run());
}
