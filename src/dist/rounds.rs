//! [`Rounds`]: a channel between all workers of a timely computation, used in rounds.
//!
//! Every worker takes part in every round of a channel: it sends any number of batches (each
//! a vector of `u32` words addressed to one worker), then waits until the round's timestamp
//! has passed the channel's probe. Timely's progress tracking is the barrier: once the probe
//! has passed round `r`, every batch that any worker sent in round `r` has been received, and
//! handed to the receiver, by its addressee.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

/// A batch in flight: the index of the worker it is for, and its words.
type Addressed = (u32, Vec<u32>);

/// Batches received, each with its round, shared by a worker and its inbox operator.
type Inbox = Rc<RefCell<Vec<(u64, Vec<u32>)>>>;

/// Words a batch collects before it is handed to timely (so that sending overlaps the work
/// that makes the next batches).
pub const BATCH_WORDS: usize = 1 << 14;

/// How long a waiting worker sleeps at most between looks at its channels.
const PARK: Duration = Duration::from_millis(1);

/// A channel used in rounds (see the module documentation).
pub struct Rounds {
    input: InputHandle<u64, CapacityContainerBuilder<Vec<Addressed>>>,
    probe: ProbeHandle<u64>,
    /// Batches received, with their rounds (a faster worker may already send batches of the
    /// next round while this one still waits for the end of the present one).
    inbox: Inbox,
    /// Per addressee: the words not yet handed to timely.
    outbox: Vec<Vec<u32>>,
    round: u64,
}

impl Rounds {
    /// A channel among the workers of `worker`'s computation (every worker makes its channels
    /// in the same order).
    pub fn new(worker: &mut Worker) -> Rounds {
        let inbox: Inbox = Rc::default();
        let mut input = InputHandle::new();
        let receiver = inbox.clone();
        let probe = worker.dataflow::<u64, _, _>(|scope| {
            let (probe, _) = scope
                .input_from(&mut input)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Exchange::new(|batch: &Addressed| batch.0 as u64),
                    "Inbox",
                    move |_capability, _info| {
                        move |input, _output| {
                            input.for_each(|time, batches| {
                                let round = time.least().copied().unwrap_or_default();
                                receiver
                                    .borrow_mut()
                                    .extend(batches.drain(..).map(|(_, words)| (round, words)));
                            });
                        }
                    },
                )
                .probe();
            probe
        });
        let peers = worker.peers();
        Rounds {
            input,
            probe,
            inbox,
            outbox: vec![Vec::new(); peers],
            round: 0,
        }
    }

    /// Appends `words` to the batch for worker `to`, handing the batch to timely when it is
    /// full.
    #[inline]
    pub fn push(&mut self, to: usize, words: &[u32]) {
        let out = &mut self.outbox[to];
        out.extend_from_slice(words);
        if out.len() >= BATCH_WORDS {
            let full = std::mem::take(out);
            self.input.send((to as u32, full));
        }
    }

    /// Sends `words` to every worker.
    pub fn push_to_all(&mut self, words: &[u32]) {
        for to in 0..self.outbox.len() {
            self.push(to, words);
        }
    }

    /// Ends this worker's part of the round: sends what is left, then steps the computation
    /// until every worker's batches of the round have arrived, handing each batch received to
    /// `receive` as it comes (also while the other workers are still sending).
    pub fn finish_round(&mut self, worker: &mut Worker, mut receive: impl FnMut(Vec<u32>)) {
        for (to, out) in self.outbox.iter_mut().enumerate() {
            if !out.is_empty() {
                self.input.send((to as u32, std::mem::take(out)));
            }
        }
        let this_round = self.round;
        self.round += 1;
        self.input.advance_to(self.round);
        loop {
            self.drain(this_round, &mut receive);
            if !self.probe.less_than(&self.round) {
                break;
            }
            worker.step_or_park(Some(PARK));
        }
        self.drain(this_round, &mut receive);
    }

    /// Steps the computation once, without waiting, and hands what has arrived to `receive`
    /// (batches of the round in progress, sent by faster workers).
    pub fn poll(&mut self, worker: &mut Worker, mut receive: impl FnMut(Vec<u32>)) {
        worker.step();
        self.drain(self.round, &mut receive);
    }

    /// Hands the batches of `round` received so far to `receive`; keeps later ones.
    fn drain(&mut self, round: u64, receive: &mut impl FnMut(Vec<u32>)) {
        let mut inbox = self.inbox.borrow_mut();
        if inbox.iter().all(|(r, _)| *r == round) {
            let batches = std::mem::take(&mut *inbox);
            drop(inbox);
            for (_, batch) in batches {
                receive(batch);
            }
            return;
        }
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut *inbox)
            .into_iter()
            .partition(|(r, _)| *r == round);
        *inbox = later;
        drop(inbox);
        for (_, batch) in now {
            receive(batch);
        }
    }
}
