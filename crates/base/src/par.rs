//! Independent runs at once: the points of a sweep, the fabrics of a comparison, the
//! simulations of one experiment, each on its own thread with its results in item order.
//!
//! Every run must be a pure function of its item, so the number of threads changes the wall
//! time and nothing else (DESIGN.md, principles 5 and 9).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Applies `f` to every item on up to `threads` threads, starting the items in order, and
/// returns the results in item order. Once `stop` holds for a result, no further item starts;
/// those left out are `None` (all of them come after the one that stopped the batch).
pub fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> R + Sync,
    stop: impl Fn(&R) -> bool + Sync,
) -> Vec<Option<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while !stopped.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else {
                        return;
                    };
                    let result = f(i, item);
                    if stop(&result) {
                        stopped.store(true, Ordering::SeqCst);
                    }
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let items: Vec<u64> = (0..50).collect();
        for threads in [1, 2, 7, 64] {
            // Uneven work, so that items finish out of order.
            let got = map(
                &items,
                threads,
                |i, &x| (i, (0..(x % 7) * 20_000).sum::<u64>() + x),
                |_| false,
            );
            let want: Vec<Option<(usize, u64)>> = items
                .iter()
                .map(|&x| Some((x as usize, (0..(x % 7) * 20_000).sum::<u64>() + x)))
                .collect();
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn nothing_starts_after_a_stop() {
        let items: Vec<usize> = (0..40).collect();
        // One thread: exactly the items up to the stopping one.
        let got = map(&items, 1, |i, _| i, |&i| i == 10);
        assert_eq!(got.iter().filter(|r| r.is_some()).count(), 11);
        // Several: items start in order, so the ones that ran are a prefix that includes the
        // stopping one (others may have started beside it before it stopped the batch).
        let got = map(&items, 3, |i, _| i, |&i| i == 10);
        let ran = got.iter().take_while(|r| r.is_some()).count();
        assert!(ran >= 11, "{ran}");
        assert!(got[ran..].iter().all(Option::is_none));
    }
}
