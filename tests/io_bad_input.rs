//! `hashwheel::io` given what it could choke on: `Duration::ZERO` and
//! `Duration::MAX`, a timeout set while an operation waits, a wheel that
//! shut down, a full wheel, no runtime. Each gets a documented outcome on
//! tokio's paused clock: never a hang, a panic or an early timeout.

mod io_common;

use std::io::ErrorKind;
use std::time::Duration;

use hashwheel::io::{TimeoutReader, TimeoutStream};
use hashwheel::Wheel;
use io_common::{advance, ms, poll_read, Clock, Imp, Never, Ours, Outcome, Theirs, TIMED_OUT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The `hashwheel::error::Error` inside an `io::Error` of kind `Other`.
fn wheel_error(e: &std::io::Error) -> hashwheel::error::Error {
    assert_eq!(e.kind(), ErrorKind::Other, "{e}");
    *e.get_ref()
        .and_then(|e| e.downcast_ref::<hashwheel::error::Error>())
        .unwrap_or_else(|| panic!("not a wheel error: {e:?}"))
}

/// Polls `io`'s read until it ends, for at most `limit` ms: when, and how.
async fn end_of_read<T: tokio::io::AsyncRead + Unpin>(io: &mut T, limit: u64) -> (u64, Outcome) {
    let clock = Clock::start();
    loop {
        let r = poll_read(io);
        if r != Outcome::Pending || clock.ms() == limit {
            return (clock.ms(), r);
        }
        advance(ms(1)).await;
    }
}

// ===== Duration::ZERO =====

/// A zero timeout: a read that would wait fails without waiting; a read
/// that has data succeeds.
async fn zero<I: Imp>() -> Vec<(u64, Outcome)> {
    let (mut peer, socket) = tokio::io::duplex(64);
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(Duration::ZERO));
    let waits = end_of_read(&mut s, 10).await;
    peer.write_all(b"x").await.unwrap();
    let has_data = end_of_read(&mut s, 10).await;
    vec![waits, has_data]
}

#[tokio::test(start_paused = true)]
async fn a_zero_timeout_fails_a_read_that_would_wait_at_once() {
    let ours = zero::<Ours>().await;
    assert_eq!(
        ours,
        zero::<Theirs>().await,
        "hashwheel and tokio-io-timeout"
    );
    assert_eq!(ours, vec![(0, TIMED_OUT), (0, Outcome::Ok(1))]);
}

/// The wrappers a zero timeout is tried on: a reader, a stream's read
/// timeout and its idle timeout on the default wheel (a wrapper with one
/// timeout), and a stream's read timeout on `wheel` (with a held wheel).
fn zero_timeouts(wheel: &Wheel) -> Vec<(&'static str, Box<dyn tokio::io::AsyncRead + Unpin>)> {
    let zero = Some(Duration::ZERO);
    let mut reader = TimeoutReader::new(Never);
    reader.set_timeout(zero);
    let mut read = TimeoutStream::new(Never);
    read.set_read_timeout(zero);
    let mut idle = TimeoutStream::new(Never);
    idle.set_idle_timeout(zero);
    let mut held = TimeoutStream::with_wheel(wheel, Never);
    held.set_read_timeout(zero);
    vec![
        ("reader", Box::new(reader)),
        ("read timeout", Box::new(read)),
        ("idle timeout", Box::new(idle)),
        ("held wheel", Box::new(held)),
    ]
}

/// A zero timeout fails the first poll that would wait, with no timer, on
/// the real clock with a coarse tick (100 ms) and two workers: no wait for
/// the end of the tick.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_timeout_fails_the_first_poll_on_a_coarse_tick() {
    let tick = Duration::from_millis(100);
    let default = Wheel::builder().tick(tick).build_default().unwrap();
    let wheel = Wheel::builder().tick(tick).build().unwrap();
    for (what, mut io) in zero_timeouts(&wheel) {
        for _ in 0..3 {
            assert_eq!(poll_read(&mut io), TIMED_OUT, "{what}");
        }
        let entries = (
            default.metrics().num_entries(),
            wheel.metrics().num_entries(),
        );
        assert_eq!(entries, (0, 0), "{what}: no timer");
    }
}

/// On the paused clock too, off a millisecond boundary (where tokio's
/// timer, and so tokio-io-timeout, waits for the next millisecond).
#[tokio::test(start_paused = true)]
async fn a_zero_timeout_fails_the_first_poll_between_two_ticks() {
    advance(Duration::from_micros(300)).await;
    let wheel = Wheel::new();
    for (what, mut io) in zero_timeouts(&wheel) {
        assert_eq!(poll_read(&mut io), TIMED_OUT, "{what}");
        assert_eq!(wheel.metrics().num_entries(), 0, "{what}: no timer");
    }
    assert_eq!(Wheel::current().metrics().num_entries(), 0);
}

// ===== Duration::MAX =====

/// `Duration::MAX` overflows an `Instant`: the countdown lands 30 years on
/// instead (tokio-io-timeout panics there), for a read timeout and an idle
/// timeout alike.
#[tokio::test(start_paused = true)]
async fn a_max_timeout_waits_30_years_and_does_not_panic() {
    let year = Duration::from_secs(365 * 86_400);
    for idle in [false, true] {
        let (_peer, socket) = tokio::io::duplex(64);
        let mut s = TimeoutStream::new(socket);
        if idle {
            s.set_idle_timeout(Some(Duration::MAX));
        } else {
            s.set_read_timeout(Some(Duration::MAX));
        }
        let clock = Clock::start();
        assert_eq!(poll_read(&mut s), Outcome::Pending);
        advance(year * 29).await;
        assert_eq!(poll_read(&mut s), Outcome::Pending);
        let e = s.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert_eq!(clock.ms(), 86_400_000 * 365 * 30, "idle: {idle}");
    }
}

#[tokio::test(start_paused = true)]
async fn tokio_io_timeout_panics_on_a_max_timeout() {
    let (_peer, socket) = tokio::io::duplex(64);
    let mut theirs = Theirs::wrap(socket);
    Theirs::set_read(&mut theirs, Some(Duration::MAX));
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        poll_read(&mut theirs);
    }));
    assert!(
        panicked.is_err(),
        "tokio-io-timeout adds Duration::MAX to now"
    );
}

// ===== a timeout set while a read waits =====

/// A read that waits with no timeout, given one at 30 ms without being
/// polled: its countdown starts at its next poll, as tokio-io-timeout's
/// does (neither has a waker to start it with before).
async fn set_on_a_waiting_read<I: Imp>() -> (u64, Outcome) {
    let (_peer, socket) = tokio::io::duplex(64);
    let mut s = I::wrap(socket);
    let clock = Clock::start();
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(ms(30)).await;
    I::set_read(&mut s, Some(ms(50)));
    advance(ms(170)).await;
    let (after, r) = end_of_read(&mut s, 500).await;
    assert_eq!(after + 200, clock.ms());
    (clock.ms(), r)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_given_to_a_waiting_read_counts_from_its_next_poll() {
    let ours = set_on_a_waiting_read::<Ours>().await;
    assert_eq!(ours, set_on_a_waiting_read::<Theirs>().await);
    assert_eq!(ours, (250, TIMED_OUT));
}

/// Removing every timeout lets the timer go: nothing is left on the wheel.
#[tokio::test(start_paused = true)]
async fn removing_the_timeouts_lets_the_timer_go() {
    let wheel = Wheel::new();
    let (_peer, socket) = tokio::io::duplex(64);
    let mut s = TimeoutStream::with_wheel(&wheel, socket);
    s.set_read_timeout(Some(ms(100)));
    s.set_idle_timeout(Some(ms(100)));
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    assert_eq!(wheel.metrics().num_pending(), 1);
    s.set_read_timeout(None);
    assert_eq!(wheel.metrics().num_pending(), 1, "the idle timeout is left");
    s.set_idle_timeout(None);
    assert_eq!(wheel.metrics().num_pending(), 0);
    assert_eq!(end_of_read(&mut s, 1000).await, (1000, Outcome::Pending));
}

// ===== a wheel that shut down =====

/// The wheel shuts down while a read waits: the read fails at once with an
/// error that says so (not `TimedOut`, which would be early); a read with
/// data still succeeds; every later read that waits fails alike.
#[tokio::test(start_paused = true)]
async fn a_shut_down_wheel_fails_waiting_reads_with_a_clear_error() {
    let wheel = Wheel::new();
    let (mut peer, socket) = tokio::io::duplex(64);
    let mut s = TimeoutStream::with_wheel(&wheel, socket);
    s.set_read_timeout(Some(ms(100)));
    let clock = Clock::start();
    let reader = tokio::spawn(async move {
        let e = s.read(&mut [0; 8]).await.unwrap_err();
        (clock.ms(), e, s)
    });
    advance(ms(10)).await;
    assert_eq!(wheel.shutdown(), 1);
    let (at, e, mut s) = reader.await.unwrap();
    assert_eq!(at, 10);
    assert!(wheel_error(&e).is_shutdown());
    assert_eq!(e.to_string(), "the timer wheel has shut down");

    peer.write_all(b"x").await.unwrap();
    assert_eq!(s.read(&mut [0; 8]).await.unwrap(), 1);
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert!(wheel_error(&e).is_shutdown());
    assert_eq!(clock.ms(), 10);
}

#[tokio::test(start_paused = true)]
async fn a_wheel_shut_down_before_the_first_wait_fails_it() {
    let wheel = Wheel::new();
    wheel.shutdown();
    let mut s = TimeoutReader::with_wheel(&wheel, Never);
    s.set_timeout(Some(ms(100)));
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert!(wheel_error(&e).is_shutdown());
}

/// A wrapper on the default wheel moves to the runtime's new default wheel
/// when the old one shuts down, and keeps its deadline.
#[tokio::test(start_paused = true)]
async fn the_default_wheel_shut_down_hands_over_to_the_next() {
    let (_peer, socket) = tokio::io::duplex(64);
    let mut s = TimeoutReader::new(socket);
    s.set_timeout(Some(ms(100)));
    let clock = Clock::start();
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(ms(10)).await;
    let old = Wheel::current();
    assert_eq!(old.shutdown(), 1);
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    assert!(!Wheel::current().is_shutdown(), "a new default wheel");
    assert_eq!(Wheel::current().metrics().num_pending(), 1);
    assert_eq!(end_of_read(&mut s, 500).await.1, TIMED_OUT);
    assert_eq!(clock.ms(), 100);
}

// ===== a full wheel, no runtime =====

/// A wheel at its `max_timers` bound cannot give a read its timer: the
/// read fails with an error that says so, and works once there is room.
#[tokio::test(start_paused = true)]
async fn a_full_wheel_fails_the_read_until_there_is_room() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let held = wheel.sleep(Duration::from_secs(60));
    let mut s = TimeoutReader::with_wheel(&wheel, Never);
    s.set_timeout(Some(ms(100)));
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert!(wheel_error(&e).is_at_capacity());
    drop(held);
    let clock = Clock::start();
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (100, ErrorKind::TimedOut));
}

/// Polled outside a tokio runtime, a wrapper on the default wheel has no
/// wheel to time a read with: an error, not a panic. With no timeout set
/// it needs none.
#[test]
fn outside_a_runtime_a_read_that_needs_a_timer_fails() {
    let mut s = TimeoutStream::new(Never);
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    s.set_read_timeout(Some(ms(100)));
    let mut bytes = [0; 8];
    let mut buf = tokio::io::ReadBuf::new(&mut bytes);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let r = tokio::io::AsyncRead::poll_read(std::pin::Pin::new(&mut s), &mut cx, &mut buf);
    let std::task::Poll::Ready(Err(e)) = r else {
        panic!("{r:?}");
    };
    assert_eq!(e.kind(), ErrorKind::Other);
    let inner = e
        .get_ref()
        .and_then(|e| e.downcast_ref::<hashwheel::error::Error>())
        .expect("a hashwheel Error");
    assert!(inner.is_no_runtime());
}

/// `new` needs no runtime: it makes no timer (tokio-io-timeout's makes a
/// tokio `Sleep`, which panics outside a runtime).
#[test]
fn new_needs_no_runtime_where_tokio_io_timeout_panics() {
    let mut ours = TimeoutStream::new(Never);
    ours.set_idle_timeout(Some(ms(100)));
    assert_eq!(ours.idle_timeout(), Some(ms(100)));
    let theirs = std::panic::catch_unwind(|| tokio_io_timeout::TimeoutStream::new(Never));
    assert!(theirs.is_err(), "tokio-io-timeout needs a runtime");
}
