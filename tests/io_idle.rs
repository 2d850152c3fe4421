//! `TimeoutStream`'s idle timeout, on tokio's paused clock: checked against
//! its rule written by hand (a tokio `Sleep` beside the stream, raced with
//! the read, and moved after activity), and for the cases that pattern does
//! not cover (writes as activity, a read and a write timeout beside it, a
//! stream split in two tasks).
//!
//! The rule: the idle time counts from the instant a successful read or
//! write completes when it waited, or when another operation of the stream
//! was waiting; from a ready one (it did not wait, and nothing else did),
//! it counts from the stream's next wait. Never from before the last
//! success.

mod io_common;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use hashwheel::io::TimeoutStream;
use io_common::{advance, ms, poll_read, send_at, Clock, Outcome, TIMED_OUT};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};
use tokio::time::Instant;

/// How a connection reads with an idle timeout: the wrapper, or by hand.
trait Reads {
    /// One read of up to `buf.len()` bytes.
    async fn read_into(&mut self, buf: &mut [u8]) -> Outcome;

    /// One read of up to 16 bytes.
    async fn read_once(&mut self) -> Outcome {
        self.read_into(&mut [0; 16]).await
    }
}

impl<S: AsyncRead + tokio::io::AsyncWrite + Unpin> Reads for TimeoutStream<S> {
    async fn read_into(&mut self, buf: &mut [u8]) -> Outcome {
        self.read(buf).await.into()
    }
}

/// The rule by hand, with tokio's timer: the read polled first, and a
/// `Sleep` polled while it waits. A successful read that waited moves the
/// sleep to `idle` from then; one that was ready only marks the stream
/// active, and the next read that waits moves the sleep to `idle` from its
/// first pending poll. The sleep moves on by `idle` when it fires.
struct ByHand<S> {
    stream: S,
    idle: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// A ready read since the sleep was last moved.
    active: bool,
}

impl<S> ByHand<S> {
    fn new(stream: S, idle: Duration) -> ByHand<S> {
        let sleep = Box::pin(tokio::time::sleep(idle));
        ByHand {
            stream,
            idle,
            sleep,
            active: false,
        }
    }
}

impl<S: AsyncRead + Unpin> Reads for ByHand<S> {
    async fn read_into(&mut self, buf: &mut [u8]) -> Outcome {
        let mut waited = false;
        poll_fn(|cx| {
            let mut b = ReadBuf::new(buf);
            match Pin::new(&mut self.stream).poll_read(cx, &mut b) {
                Poll::Ready(r) => {
                    if r.is_ok() {
                        if waited {
                            self.sleep.as_mut().reset(Instant::now() + self.idle);
                        } else {
                            self.active = true;
                        }
                    }
                    Poll::Ready(r.map(|()| b.filled().len()).into())
                }
                Poll::Pending => {
                    if !waited && self.active {
                        self.active = false;
                        self.sleep.as_mut().reset(Instant::now() + self.idle);
                    }
                    waited = true;
                    match self.sleep.as_mut().poll(cx) {
                        Poll::Ready(()) => {
                            self.sleep.as_mut().reset(Instant::now() + self.idle);
                            Poll::Ready(TIMED_OUT)
                        }
                        Poll::Pending => Poll::Pending,
                    }
                }
            }
        })
        .await
    }
}

/// A 100 ms idle timeout; the peer sends at 30, 80 and 300 ms. The
/// connection reads, works 50 ms after its second message, and reads on.
async fn idle_script<R: Reads>(
    make: impl FnOnce(tokio::io::DuplexStream) -> R,
) -> Vec<(u64, Outcome)> {
    let (peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let sender = send_at(clock, peer, &[30, 80, 300]);
    let mut conn = make(socket);
    let mut seen = Vec::new();
    for i in 0..6 {
        let r = conn.read_once().await;
        seen.push((clock.ms(), r));
        if i == 1 {
            tokio::time::sleep(ms(50)).await;
        }
    }
    sender.abort();
    seen
}

#[tokio::test(start_paused = true)]
async fn the_idle_timeout_fires_where_the_hand_written_sleep_does() {
    let ours = idle_script(|s| {
        let mut s = TimeoutStream::new(s);
        s.set_idle_timeout(Some(ms(100)));
        s
    })
    .await;
    let by_hand = idle_script(|s| ByHand::new(s, ms(100))).await;
    assert_eq!(
        ours, by_hand,
        "hashwheel (left) and by hand with tokio (right)"
    );
    assert_eq!(
        ours,
        vec![
            (30, Outcome::Ok(1)),
            (80, Outcome::Ok(1)),
            // Idle since the read at 80, though the read waits from 130.
            (180, TIMED_OUT),
            // The idle time counts again from the timeout.
            (280, TIMED_OUT),
            (300, Outcome::Ok(1)),
            (400, TIMED_OUT),
        ]
    );
}

/// A 100 ms idle timeout; the peer sends two bytes at 30 ms. The connection
/// reads one (it waited for it), works 20 ms, reads the other (ready, no
/// wait), works `work` ms and reads on.
async fn ready_read_script<R: Reads>(
    make: impl FnOnce(tokio::io::DuplexStream) -> R,
    work: u64,
) -> Vec<(u64, Outcome)> {
    let (mut peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let mut conn = make(socket);
    let sender = tokio::spawn(async move {
        tokio::time::sleep_until(clock.at(30)).await;
        peer.write_all(b"x").await.unwrap();
        // The second byte is in the pipe before the first read returns.
        peer.write_all(b"y").await.unwrap();
        std::future::pending::<()>().await;
    });
    let mut seen = Vec::new();
    for work in [20, work, 0] {
        let r = conn.read_into(&mut [0; 1]).await;
        seen.push((clock.ms(), r));
        tokio::time::sleep(ms(work)).await;
    }
    sender.abort();
    seen
}

fn idle_100(s: tokio::io::DuplexStream) -> TimeoutStream<tokio::io::DuplexStream> {
    let mut s = TimeoutStream::new(s);
    s.set_idle_timeout(Some(ms(100)));
    s
}

/// After the ready read at 50 and 50 ms of work, the idle time counts from
/// the wait at 100: the stream times out at 200, as the rule by hand does.
/// (A `Sleep` reset after every read would end at 150, 100 ms after the
/// ready read itself: the work between a ready read and the next wait is
/// not idle time here, as it is not in tokio-io-timeout's countdowns,
/// which start at the first poll that is pending.)
#[tokio::test(start_paused = true)]
async fn the_idle_time_counts_from_the_wait_after_a_ready_read() {
    let ours = ready_read_script(idle_100, 50).await;
    let by_hand = ready_read_script(|s| ByHand::new(s, ms(100)), 50).await;
    assert_eq!(
        ours, by_hand,
        "hashwheel (left) and by hand with tokio (right)"
    );
    assert_eq!(
        ours,
        vec![(30, Outcome::Ok(1)), (50, Outcome::Ok(1)), (200, TIMED_OUT)]
    );
}

/// Never early: after the ready read at 50, whatever the work before the
/// next wait (none, less than the idle timeout, as long, longer), the
/// stream times out 100 ms after that wait, so never less than 100 ms
/// after its last read; the wrapper's sleep, due at 100 from the first
/// wait, has fired by then in the longer cases and is moved on.
#[tokio::test(start_paused = true)]
async fn a_ready_read_then_work_never_ends_early() {
    for work in [0, 1, 30, 49, 50, 99, 100, 101, 150, 250] {
        let ours = ready_read_script(idle_100, work).await;
        let by_hand = ready_read_script(|s| ByHand::new(s, ms(100)), work).await;
        assert_eq!(ours, by_hand, "work {work} ms: hashwheel and by hand");
        let (ended, outcome) = ours[2];
        assert_eq!(outcome, TIMED_OUT, "work {work} ms");
        assert!(ended >= 50 + 100, "work {work} ms: ended at {ended}, early");
        assert_eq!(ended, 50 + work + 100, "work {work} ms");
    }
}

/// A 100 ms idle timeout: the first read waits from 0 (the wrapper's sleep
/// is due at 100) and gets the peer's byte at 10; then the connection works
/// 40 ms before each read, each finding a byte the peer sent at 5 ms
/// before it: `ready` ready reads, at 50, 90, 130, ..., none of which
/// waits. The read after them waits.
async fn ready_reads_script<R: Reads>(
    make: impl FnOnce(tokio::io::DuplexStream) -> R,
    ready: u64,
) -> Vec<(u64, Outcome)> {
    let (mut peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let mut conn = make(socket);
    let sender = tokio::spawn(async move {
        for at in std::iter::once(10).chain((1..=ready).map(|i| 10 + 40 * i - 5)) {
            tokio::time::sleep_until(clock.at(at)).await;
            peer.write_all(b"x").await.unwrap();
        }
        std::future::pending::<()>().await;
    });
    let mut seen = vec![];
    let r = conn.read_once().await;
    seen.push((clock.ms(), r));
    for _ in 0..ready {
        tokio::time::sleep(ms(40)).await;
        let r = conn.read_once().await;
        seen.push((clock.ms(), r));
    }
    let r = conn.read_once().await;
    seen.push((clock.ms(), r));
    sender.abort();
    seen
}

/// Ready reads keep the stream alive past the deadline its sleep was set
/// for (100, from the first wait): with one or two of them (the last at 50
/// or 90) the next read waits before that sleep fires, which finds nothing
/// due and moves on; with more (the last at 130 or later) the sleep has
/// fired before the wait, which finds it done and moves it on. Each time
/// the stream times out 100 ms after its last read, not at 100 nor 100 ms
/// after the first.
#[tokio::test(start_paused = true)]
async fn ready_reads_past_the_sleeps_deadline_keep_the_stream_alive() {
    for ready in [1, 2, 3, 5] {
        let ours = ready_reads_script(idle_100, ready).await;
        let by_hand = ready_reads_script(|s| ByHand::new(s, ms(100)), ready).await;
        assert_eq!(ours, by_hand, "{ready} ready reads: hashwheel and by hand");
        let mut expected: Vec<(u64, Outcome)> =
            (0..=ready).map(|i| (10 + 40 * i, Outcome::Ok(1))).collect();
        expected.push((10 + 40 * ready + 100, TIMED_OUT));
        assert_eq!(ours, expected, "{ready} ready reads");
    }
}

/// A stream with an idle timeout of `idle` and a read (or write) timeout of
/// `own`: when does a read (or a write) that waits from 0 end?
async fn first_of(own: u64, idle: u64, write: bool) -> u64 {
    let (_peer, socket) = tokio::io::duplex(4);
    let clock = Clock::start();
    let mut s = TimeoutStream::new(socket);
    s.set_idle_timeout(Some(ms(idle)));
    let e = if write {
        s.set_write_timeout(Some(ms(own)));
        s.write_all(&[0; 8]).await.unwrap_err()
    } else {
        s.set_read_timeout(Some(ms(own)));
        s.read(&mut [0; 8]).await.unwrap_err()
    };
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    clock.ms()
}

#[tokio::test(start_paused = true)]
async fn the_earlier_of_the_idle_and_the_own_timeout_wins() {
    assert_eq!(first_of(50, 200, false).await, 50);
    assert_eq!(first_of(300, 100, false).await, 100);
    assert_eq!(first_of(50, 200, true).await, 50);
    assert_eq!(first_of(300, 100, true).await, 100);
}

/// A read waits on one task while another writes every 50 ms (from 25 to
/// 275 ms) through the other half of the same stream: each write is
/// activity, so the read times out 100 ms after the last one, not before.
#[tokio::test(start_paused = true)]
async fn a_write_keeps_a_read_on_another_task_alive() {
    let (_peer, socket) = tokio::io::duplex(1024);
    let mut s = TimeoutStream::new(socket);
    s.set_idle_timeout(Some(ms(100)));
    let (mut rd, mut wr) = tokio::io::split(s);
    let clock = Clock::start();
    let writer = tokio::spawn(async move {
        for at in (25..=275).step_by(50) {
            tokio::time::sleep_until(clock.at(at)).await;
            wr.write_all(b"tick").await.unwrap();
        }
        wr
    });
    let e = rd.read(&mut [0; 16]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (375, std::io::ErrorKind::TimedOut));
    drop(writer.await.unwrap());
}

/// The other way round: a write waits on one task (the peer never reads)
/// while another reads, every 50 ms (from 26 to 276 ms), a byte the peer
/// sent a millisecond before: each read is ready, and is activity from its
/// own instant, since the write waits meanwhile. The write times out
/// 100 ms after the last read, neither before nor at its sleep's first
/// deadline (100), nor later.
#[tokio::test(start_paused = true)]
async fn a_ready_read_keeps_a_write_on_another_task_alive() {
    let (mut peer, socket) = tokio::io::duplex(4);
    let mut s = TimeoutStream::new(socket);
    s.set_idle_timeout(Some(ms(100)));
    let (mut rd, mut wr) = tokio::io::split(s);
    let clock = Clock::start();
    let sender = tokio::spawn(async move {
        for at in (25..=275).step_by(50) {
            tokio::time::sleep_until(clock.at(at)).await;
            peer.write_all(b"x").await.unwrap();
        }
        std::future::pending::<()>().await;
    });
    let reader = tokio::spawn(async move {
        for at in (26..=276).step_by(50) {
            tokio::time::sleep_until(clock.at(at)).await;
            let mut buf = [0; 16];
            let mut b = ReadBuf::new(&mut buf);
            // Ready, without a wait.
            let r = poll_fn(|cx| Poll::Ready(Pin::new(&mut rd).poll_read(cx, &mut b))).await;
            assert!(matches!(r, Poll::Ready(Ok(()))), "the read at {at} ms");
            assert_eq!(b.filled(), b"x");
        }
        rd
    });
    let e = wr.write_all(&[0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (376, std::io::ErrorKind::TimedOut));
    drop(reader.await.unwrap());
    sender.abort();
}

/// Idle time counts from the last success or from the setting of the
/// timeout, whether or not an operation waits: a read that first waits
/// after the idle deadline times out at once; before it, at the deadline.
#[tokio::test(start_paused = true)]
async fn idle_time_counts_whether_or_not_a_read_waits() {
    for (work, ends) in [(60, 100), (150, 150)] {
        let (_peer, socket) = tokio::io::duplex(64);
        let clock = Clock::start();
        let mut s = TimeoutStream::new(socket);
        s.set_idle_timeout(Some(ms(100)));
        tokio::time::sleep(ms(work)).await;
        let e = s.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!((clock.ms(), e.kind()), (ends, std::io::ErrorKind::TimedOut));
    }
}

/// A read that fails with the stream's own error is no activity (as it
/// ends a read countdown, it does not move the idle deadline).
#[tokio::test(start_paused = true)]
async fn a_failed_read_is_no_activity() {
    let mock = tokio_test::io::Builder::new()
        .wait(ms(50))
        .read_error(std::io::Error::other("reset"))
        .wait(ms(80))
        .read(b"x")
        .build();
    let clock = Clock::start();
    let mut s = TimeoutStream::new(mock);
    s.set_idle_timeout(Some(ms(100)));
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (50, std::io::ErrorKind::Other));
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (100, std::io::ErrorKind::TimedOut));
    // The script's data, read to its end.
    assert_eq!(s.read(&mut [0; 8]).await.unwrap(), 1);
}

/// The idle timeout set again while a read waits: the idle time counts
/// from then, with the new timeout; removed, nothing times the read.
#[tokio::test(start_paused = true)]
async fn an_idle_timeout_set_while_a_read_waits_counts_from_then() {
    for (new, ends) in [(Some(100), Some(140)), (Some(20), Some(60)), (None, None)] {
        let (_peer, socket) = tokio::io::duplex(64);
        let clock = Clock::start();
        let mut s = TimeoutStream::new(socket);
        s.set_idle_timeout(Some(ms(100)));
        assert_eq!(poll_read(&mut s), Outcome::Pending);
        advance(ms(40)).await;
        s.set_idle_timeout(new.map(ms));
        assert_eq!(s.idle_timeout(), new.map(ms));
        let mut ended = None;
        while clock.ms() < 500 {
            if poll_read(&mut s) != Outcome::Pending {
                ended = Some(clock.ms());
                break;
            }
            advance(ms(1)).await;
        }
        assert_eq!(ended, ends, "set to {new:?} ms at 40 ms");
    }
}

/// The idle timeout set again after a ready read, before the next wait:
/// the idle time counts from the setting (40), not from that wait (60).
#[tokio::test(start_paused = true)]
async fn an_idle_timeout_set_after_a_ready_read_counts_from_then() {
    let (mut peer, socket) = tokio::io::duplex(64);
    peer.write_all(b"x").await.unwrap();
    let clock = Clock::start();
    let mut s = idle_100(socket);
    assert_eq!(poll_read(&mut s), Outcome::Ok(1));
    tokio::time::sleep(ms(40)).await;
    s.set_idle_timeout(Some(ms(100)));
    tokio::time::sleep(ms(20)).await;
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (140, std::io::ErrorKind::TimedOut));
}
