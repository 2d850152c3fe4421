//! `TimeoutStream`'s idle timeout, on tokio's paused clock: checked against
//! what a server writes by hand today (a tokio `Sleep` beside the stream,
//! reset after every successful read, raced with the read), and for the
//! cases that pattern does not cover (writes as activity, a read and a
//! write timeout beside it, a stream split in two tasks).

mod io_common;

use std::time::Duration;

use hashwheel::io::TimeoutStream;
use io_common::{advance, ms, poll_read, send_at, Clock, Outcome, TIMED_OUT};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
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

/// The hand-written pattern, with tokio's timer: the read raced against a
/// `Sleep` that every successful read moves to `idle` from then, and that
/// moves on by `idle` when it fires.
struct ByHand<S> {
    stream: S,
    idle: Duration,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<S> ByHand<S> {
    fn new(stream: S, idle: Duration) -> ByHand<S> {
        let sleep = Box::pin(tokio::time::sleep(idle));
        ByHand {
            stream,
            idle,
            sleep,
        }
    }
}

impl<S: AsyncRead + Unpin> Reads for ByHand<S> {
    async fn read_into(&mut self, buf: &mut [u8]) -> Outcome {
        tokio::select! {
            biased;
            r = self.stream.read(buf) => {
                if r.is_ok() {
                    self.sleep.as_mut().reset(Instant::now() + self.idle);
                }
                r.into()
            }
            () = self.sleep.as_mut() => {
                self.sleep.as_mut().reset(Instant::now() + self.idle);
                TIMED_OUT
            }
        }
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
/// wait), works 50 ms and reads on: idle since the ready read at 50, not
/// since the read at 30 nor since the wait at 100.
async fn ready_read_script<R: Reads>(
    make: impl FnOnce(tokio::io::DuplexStream) -> R,
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
    for work in [20, 50, 0] {
        let r = conn.read_into(&mut [0; 1]).await;
        seen.push((clock.ms(), r));
        tokio::time::sleep(ms(work)).await;
    }
    sender.abort();
    seen
}

#[tokio::test(start_paused = true)]
async fn the_idle_time_counts_from_a_ready_read_too() {
    let ours = ready_read_script(|s| {
        let mut s = TimeoutStream::new(s);
        s.set_idle_timeout(Some(ms(100)));
        s
    })
    .await;
    let by_hand = ready_read_script(|s| ByHand::new(s, ms(100))).await;
    assert_eq!(
        ours, by_hand,
        "hashwheel (left) and by hand with tokio (right)"
    );
    assert_eq!(
        ours,
        vec![(30, Outcome::Ok(1)), (50, Outcome::Ok(1)), (150, TIMED_OUT)]
    );
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
