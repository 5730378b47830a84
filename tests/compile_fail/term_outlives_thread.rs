// A `Term` handle lives in its thread's protection set: it cannot outlive the `TermThread`.
use weft::term::{Symbol, TermTable};

fn main() {
    let table = TermTable::new();
    let term = {
        let thread = table.register_thread();
        thread.constant(Symbol::new("a", 0))
    };
    println!("{term}");
}
