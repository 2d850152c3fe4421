//! Building a wheel on a multi-threaded runtime, from outside its workers.

use std::time::Duration;

/// The driver task is spawned while the wheel is built. A worker may poll
/// it at once, before `build` has made the first `Wheel` handle: the driver
/// must not take that moment for "every handle and every timer is gone"
/// and shut the new wheel down.
#[test]
fn a_new_wheel_is_never_shut_down_by_its_own_driver() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _in = rt.enter();
    for _ in 0..200 {
        let wheel = hashwheel::Wheel::new();
        // Give the driver time for its first run.
        std::thread::sleep(Duration::from_millis(2));
        assert!(!wheel.is_shutdown());
    }
}
