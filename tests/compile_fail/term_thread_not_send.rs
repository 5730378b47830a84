// A `TermThread` stays on the thread that registered it, whatever the table's lock (here
// parking_lot's, whose membership alone could move).
use std::sync::Arc;

use weft::sync::ParkingLotRwLock;
use weft::term::{Symbol, TermTable};

fn main() {
    let table = Arc::new(TermTable::<ParkingLotRwLock>::default());
    let thread = table.register_thread();
    std::thread::spawn(move || {
        let _ = thread.constant(Symbol::new("a", 0));
    });
}
