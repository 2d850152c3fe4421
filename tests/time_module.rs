//! A paused-clock suite written once against a `time` module, the way a
//! test suite for `tokio::time` is written (`time::sleep`,
//! `time::Instant`, `time::Duration`, `time::advance`, ...), and compiled
//! twice: with `use tokio::time;` and with `use hashwheel as time;`. Both
//! must compile from the same text and log the same observations after
//! every step: what is ready, what was woken, and when.
//!
//! Needs the `test-util` feature, which re-exports tokio's clock controls.

macro_rules! suite {
    () => {
        use std::fmt::Write;
        use std::future::{pending, poll_fn};
        use std::task::Poll;
        use tokio_test::task;

        /// Sleeps, timeouts and intervals of every kind, stepped 1 ms at a
        /// time for 30 ms; one line per step.
        pub async fn steps() -> Vec<String> {
            let ms = time::Duration::from_millis;
            let start = time::Instant::now();
            let mut sleep = task::spawn(time::sleep(ms(10)));
            let mut until = task::spawn(time::sleep_until(
                start + ms(7) + time::Duration::from_nanos(1),
            ));
            let mut zero = task::spawn(time::sleep(time::Duration::ZERO));
            let mut timeout = task::spawn(time::timeout(ms(15), pending::<()>()));
            let mut timeout_at = task::spawn(time::timeout_at(start + ms(12), pending::<()>()));
            let mut moved = task::spawn(time::sleep(ms(4)));
            let mut burst = time::interval(ms(4));
            let mut skip = time::interval_at(start + ms(3), ms(5));
            skip.set_missed_tick_behavior(time::MissedTickBehavior::Skip);
            let mut log = Vec::new();
            for step in 0..30 {
                if step == 2 {
                    // A deadline moved later before it fires: no wake-up at
                    // the old one.
                    moved.enter(|_, mut s| s.as_mut().reset(start + ms(9)));
                }
                if step == 20 {
                    // Ticks missed while nobody polled: `Burst` catches up,
                    // `Skip` does not.
                    time::advance(ms(11)).await;
                }
                let ticked = |p: Poll<time::Instant>| match p {
                    Poll::Ready(at) => format!("tick@{:?}", at - start),
                    Poll::Pending => "-".to_string(),
                };
                let burst_tick = poll_fn(|cx| Poll::Ready(burst.poll_tick(cx))).await;
                let skip_tick = poll_fn(|cx| Poll::Ready(skip.poll_tick(cx))).await;
                let mut line = format!("{:?}:", start.elapsed());
                for (name, woken, ready) in [
                    ("sleep", sleep.is_woken(), sleep.poll().is_ready()),
                    ("until", until.is_woken(), until.poll().is_ready()),
                    ("zero", zero.is_woken(), zero.poll().is_ready()),
                    ("timeout", timeout.is_woken(), timeout.poll().is_ready()),
                    (
                        "timeout_at",
                        timeout_at.is_woken(),
                        timeout_at.poll().is_ready(),
                    ),
                    ("moved", moved.is_woken(), moved.poll().is_ready()),
                ] {
                    write!(line, " {name} woken={woken} ready={ready};").unwrap();
                }
                write!(
                    line,
                    " burst {} skip {} elapsed={}",
                    ticked(burst_tick),
                    ticked(skip_tick),
                    sleep.enter(|_, s| s.is_elapsed())
                )
                .unwrap();
                log.push(line);
                time::advance(ms(1)).await;
            }
            log
        }

        /// The error a timeout gives, and what it converts into.
        pub async fn elapsed() -> Vec<String> {
            let e: time::error::Elapsed =
                time::timeout(time::Duration::from_millis(1), pending::<()>())
                    .await
                    .unwrap_err();
            let shown = e.to_string();
            let io: std::io::Error = e.into();
            vec![shown, format!("{:?}", io.kind())]
        }

        /// `pause`, `advance` and `resume` from the same module.
        pub async fn clock() -> Vec<String> {
            time::pause();
            let start = time::Instant::now();
            time::advance(time::Duration::from_millis(5)).await;
            let mut sleep = task::spawn(time::sleep(time::Duration::from_millis(3)));
            assert!(sleep.poll().is_pending());
            let mut log = Vec::new();
            // 3 ms, then 1 more: the first stops short of the sleep's
            // tick, as the clock was paused inside a millisecond.
            for step in [3, 1] {
                time::advance(time::Duration::from_millis(step)).await;
                log.push(format!("{:?} woken={}", start.elapsed(), sleep.is_woken()));
            }
            time::resume();
            log
        }
    };
}

mod tokio_time {
    use tokio::time;
    suite!();
}

mod hashwheel_time {
    use hashwheel as time;
    suite!();
}

#[tokio::test(start_paused = true)]
async fn the_same_steps_with_either_module() {
    let theirs = tokio_time::steps().await;
    let ours = hashwheel_time::steps().await;
    for (step, (t, h)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(t, h, "step {step}");
    }
    assert_eq!(theirs.len(), ours.len());
}

#[tokio::test(start_paused = true)]
async fn the_same_error_with_either_module() {
    let theirs = tokio_time::elapsed().await;
    assert_eq!(theirs, hashwheel_time::elapsed().await);
    assert_eq!(theirs, ["deadline has elapsed", "TimedOut"]);
}

#[tokio::test]
async fn the_same_clock_controls_with_either_module() {
    let theirs = tokio_time::clock().await;
    assert_eq!(theirs, hashwheel_time::clock().await);
    assert_eq!(theirs[1], "9ms woken=true");
}
