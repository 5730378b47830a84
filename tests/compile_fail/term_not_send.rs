// A `Term` handle cannot cross to another thread, even one that ends before its `TermThread`:
// dropping it writes to the owner's protection set, which only the owner may touch.
use weft::term::{Symbol, TermTable};

fn main() {
    let table = TermTable::new();
    let thread = table.register_thread();
    let term = thread.constant(Symbol::new("a", 0));
    std::thread::scope(|s| {
        s.spawn(move || drop(term));
    });
}
