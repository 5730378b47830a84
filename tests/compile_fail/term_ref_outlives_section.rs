// An unprotected `TermRef` made in a shared section cannot be used after the section ends: a
// garbage collection may then free the term.
use weft::term::{Symbol, TermTable};

fn main() {
    let table = TermTable::new();
    let thread = table.register_thread();
    let section = thread.shared_section();
    let (r, _) = section.create(Symbol::new("a", 0), &[]);
    drop(section);
    thread.collect_garbage();
    println!("{r}");
}
