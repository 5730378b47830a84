// A `TermRef` borrowed from a `Term` handle cannot be used after the handle is dropped: the
// handle's protection is what keeps the term alive.
use weft::term::{Symbol, TermRef, TermTable};

fn main() {
    let table = TermTable::new();
    let thread = table.register_thread();
    let r: TermRef<'_>;
    {
        let t = thread.constant(Symbol::new("a", 0));
        r = t.as_ref();
    }
    println!("{r}");
}
