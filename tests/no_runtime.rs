//! Outside any runtime the `try_` forms answer `is_no_runtime` without a
//! panic: none is raised and caught on the way (under `panic = "abort"` one
//! would abort the process). Its own test binary: the panic hook it sets is
//! the process's.

use std::future::pending;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hashwheel::delay_queue::DelayQueue;
use hashwheel::{Builder, Wheel};
use tokio::time::Instant;

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn no_runtime_is_told_without_a_panic() {
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
    let d = Duration::from_millis(10);
    let at = Instant::now() + d;
    let errors = [
        hashwheel::try_sleep(d).err(),
        hashwheel::try_sleep_until(at).err(),
        hashwheel::try_timeout(d, pending::<()>()).err(),
        hashwheel::try_timeout_at(at, pending::<()>()).err(),
        hashwheel::try_lazy_timeout(d, pending::<()>()).err(),
        hashwheel::try_delay(d).err(),
        hashwheel::try_delay_at(at).err(),
        hashwheel::try_interval(d).err(),
        hashwheel::try_interval_at(at, d).err(),
        hashwheel::try_spawn_after(d, async {}).err(),
        hashwheel::try_spawn_at(at, async {}).err(),
        DelayQueue::<u8>::try_new().err(),
        DelayQueue::<u8>::try_with_capacity(4).err(),
        Wheel::try_current().err(),
    ];
    let built = Builder::new().build().err();
    let built_default = Builder::new().build_default().err();
    // A queue made outside a runtime finds its wheel later: no panic either.
    drop(DelayQueue::<u8>::new());
    // The default hook again, so that a failed assertion shows.
    let _ = std::panic::take_hook();
    for (i, e) in errors.iter().enumerate() {
        assert!(e.is_some_and(|e| e.is_no_runtime()), "form {i}: {e:?}");
    }
    assert!(built.is_some_and(|e| e.is_no_runtime()));
    assert!(built_default.is_some_and(|e| e.is_no_runtime()));
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic was raised");
}
