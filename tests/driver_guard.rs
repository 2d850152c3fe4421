//! The driver shuts its wheel down however it ends, even unpolled.

use std::time::Duration;

/// A runtime dropped before the driver's first poll still shuts the wheel
/// down: the driver's guard exists from the spawn, not from the first poll.
#[test]
fn runtime_dropped_before_the_driver_ran() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let wheel = rt.block_on(async { hashwheel::Wheel::new() });
    assert!(!wheel.is_shutdown());
    drop(rt);
    assert!(wheel.is_shutdown());
}

/// A runtime that has shut down refuses the driver: the wheel is built shut
/// down, and its timers complete at once instead of waiting forever.
#[test]
fn built_on_a_runtime_that_has_shut_down() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    drop(rt);
    let _entered = handle.enter();
    let wheel = hashwheel::Wheel::new();
    assert!(wheel.is_shutdown());
    let delay = wheel.delay(Duration::from_secs(1));
    let got = futures::executor::block_on(delay);
    assert!(got.unwrap_err().is_shutdown());
}

/// On a multi-thread runtime the driver can run on another worker at once:
/// it must already see the wheel's handle, or it takes the wheel for
/// abandoned and shuts it down under its owner.
#[test]
fn a_new_wheel_is_not_taken_for_abandoned() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..500 {
            let wheel = hashwheel::Wheel::new();
            // Let the driver run, on whichever worker takes it.
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            assert!(!wheel.is_shutdown());
        }
    });
}
