//! Workloads measured side by side: a workload runs on many connections at
//! once for a given time, the contenders of one comparison take turns in
//! interleaved rounds, and latencies are read as percentiles.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Rounds each comparison is split into. The contenders take turns, a
/// slice of the comparison's time each per round, in an order that rotates,
/// so a change in the machine's load falls on all of them alike.
pub const ROUNDS: usize = 5;

/// Runs each worker on a thread of its own for `secs`. The workers are made
/// before the clock starts (what they set up then, such as a connection, is
/// not timed); each is then called until the time is up, a call answering
/// the messages it handled, and a call that handled none is followed by a
/// 1 ms pause. Answers the messages handled and the seconds it took.
pub fn run<W>(workers: Vec<W>, secs: f64) -> (u64, f64)
where
    W: FnMut() -> u64 + Send,
{
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let total = thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut work| {
                let stop = &stop;
                scope.spawn(move || {
                    let mut handled = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let n = work();
                        handled += n;
                        if n == 0 {
                            thread::sleep(Duration::from_millis(1));
                        }
                    }
                    handled
                })
            })
            .collect();
        thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .sum::<u64>()
    });
    (total, start.elapsed().as_secs_f64())
}

/// One contender of a comparison: given the seconds of its slice, it runs
/// and answers the messages it handled and the seconds it took.
pub type Cell<'a> = Box<dyn Fn(f64) -> (u64, f64) + 'a>;

/// Messages per second of each contender, measured over `secs` in
/// [`ROUNDS`] interleaved rounds: in round `r` the contenders run one after
/// another starting with contender `r` (modulo their number), each for a
/// [`ROUNDS`]th of `secs`.
pub fn interleave(secs: f64, cells: &[Cell<'_>]) -> Vec<f64> {
    let slice = secs / ROUNDS as f64;
    let mut msgs = vec![0u64; cells.len()];
    let mut took = vec![0f64; cells.len()];
    for round in 0..ROUNDS {
        for k in 0..cells.len() {
            let i = (k + round) % cells.len();
            let (m, s) = cells[i](slice);
            msgs[i] += m;
            took[i] += s;
        }
    }
    msgs.iter().zip(&took).map(|(m, s)| *m as f64 / s).collect()
}

/// The `p` percentile (0 to 1) of `sorted`, which is sorted and not empty:
/// the value at the nearest rank to `p` of the way from its first to its
/// last.
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> T {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
