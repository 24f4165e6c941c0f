//! An experiment's independent simulations at once, on up to `--threads` threads, with each
//! one's progress line passed on as it ends: at paper scale one simulation takes half an hour,
//! so a user sees each as it finishes rather than all at the end.

use crate::ReproError;
use std::sync::mpsc;

/// Runs `f` on every item on up to `threads` threads and returns what it made, in item order.
/// Each finished item's line goes to `progress` on the calling thread as the item ends (in the
/// order they end). After an error no further item starts, and the first error in item order
/// is returned. The results do not depend on `threads`: `f` must be a pure function of its item.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> Result<(R, String), ReproError> + Sync,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<R>, ReproError> {
    let (tx, rx) = mpsc::channel::<String>();
    let f = &f;
    let results = std::thread::scope(|s| {
        let worker = s.spawn(move || {
            shoal_base::par::map(
                items,
                threads,
                |_, item| {
                    let r = f(item);
                    if let Ok((_, line)) = &r {
                        // The receiver lives until every worker is done.
                        let _ = tx.send(line.clone());
                    }
                    r
                },
                Result::is_err,
            )
        });
        for line in rx {
            progress(&line);
        }
        worker
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    results
        .into_iter()
        .map(|r| match r {
            Some(Ok((made, _))) => Ok(made),
            Some(Err(e)) => Err(e),
            None => Err(ReproError("not run after an earlier failure".into())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_item_order_and_every_line_passed_on() {
        let items: Vec<u64> = (0..20).collect();
        for threads in [1, 2, 5] {
            let mut lines = Vec::new();
            let got = map(
                &items,
                threads,
                |&x| Ok((x * x, format!("item {x}"))),
                &mut |l| lines.push(l.to_owned()),
            )
            .unwrap();
            assert_eq!(got, items.iter().map(|x| x * x).collect::<Vec<_>>());
            lines.sort_by_key(|l| l[5..].parse::<u64>().unwrap());
            assert_eq!(
                lines,
                items
                    .iter()
                    .map(|x| format!("item {x}"))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_first_error_in_item_order_is_returned() {
        let items: Vec<u64> = (0..10).collect();
        let e = map(
            &items,
            1,
            |&x| {
                if x >= 4 {
                    Err(ReproError(format!("bad {x}")))
                } else {
                    Ok((x, String::new()))
                }
            },
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(e.0, "bad 4");
    }
}
