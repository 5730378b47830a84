// A `TermRef` may be shared with threads that end while it is protected (scoped threads), but
// not with a thread that may outlive the protecting `Term`.
use weft::term::{Symbol, TermTable};

fn main() {
    let table = TermTable::new();
    let thread = table.register_thread();
    let term = thread.constant(Symbol::new("a", 0));
    let r = term.as_ref();
    std::thread::spawn(move || println!("{r}"));
}
