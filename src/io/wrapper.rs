//! What [`TimeoutReader`], [`TimeoutWriter`] and [`TimeoutStream`] share,
//! written once as macros over a wrapper whose fields are `inner` (the
//! wrapped stream, pinned) and `timeouts` (its `Timeouts`): the
//! constructors and accessors, the timeout getters and setters, and the
//! `AsyncRead`, `AsyncBufRead` and `AsyncWrite` impls, each of which times
//! its direction (`Some(index)`) or passes it straight through (`None`).
//! `AsyncSeek` always passes through.
//!
//! [`TimeoutReader`]: super::TimeoutReader
//! [`TimeoutWriter`]: super::TimeoutWriter
//! [`TimeoutStream`]: super::TimeoutStream

/// `new`, `with_wheel`, `get_ref`, `get_mut`, `get_pin_mut`, `into_inner`
/// for `$ty<$p>`, which wraps a `$noun`; its `AsyncRead` and
/// `AsyncBufRead` (reads and `poll_fill_buf`) timed as direction `$read`,
/// its `AsyncWrite` (writes, flushes and shutdowns, one countdown for all)
/// as direction `$write` (`None`: untimed), and a pass-through
/// `AsyncSeek`.
macro_rules! wrapper {
    ($ty:ident<$p:ident>, $noun:literal, reads $read:expr, writes $write:expr) => {
        impl<$p> $ty<$p> {
            #[doc = concat!("Wraps a ", $noun, ", with no timeout. Its timer, when one")]
            /// is needed, is made on the default wheel of the runtime that
            /// polls it, as tokio-io-timeout's is made on tokio's timer.
            ///
            /// It allocates nothing for its first timeout (a second one
            /// takes one allocation), and needs no runtime until an
            /// operation waits with one.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::io::Cursor;
            /// use tokio::io::AsyncReadExt;
            ///
            /// // No timeout yet: the wrapper passes everything through.
            #[doc = concat!("let mut io = ", "hashwheel::io::", stringify!($ty), "::new(Cursor::new(b\"hello\".to_vec()));")]
            /// let mut text = String::new();
            /// io.read_to_string(&mut text).await.unwrap();
            /// assert_eq!(text, "hello");
            /// # }
            /// ```
            pub fn new(inner: $p) -> $ty<$p> {
                $ty {
                    inner,
                    timeouts: $crate::io::state::Timeouts::new(),
                }
            }

            #[doc = concat!("Wraps a ", $noun, ", with no timeout; its timer is made")]
            /// on `wheel`.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// let wheel = hashwheel::Wheel::new();
            /// let (_peer, socket) = tokio::io::duplex(64);
            #[doc = concat!("let io = hashwheel::io::", stringify!($ty), "::with_wheel(&wheel, socket);")]
            /// # drop(io);
            /// # }
            /// ```
            pub fn with_wheel(wheel: &$crate::wheel::Wheel, inner: $p) -> $ty<$p> {
                $ty {
                    inner,
                    timeouts: $crate::io::state::Timeouts::with_wheel(wheel),
                }
            }

            #[doc = concat!("A shared reference to the inner ", $noun, ".")]
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::io::Cursor;
            ///
            #[doc = concat!("let io = ", "hashwheel::io::", stringify!($ty), "::new(Cursor::new(vec![1, 2, 3]));")]
            /// assert_eq!(io.get_ref().position(), 0);
            /// # }
            /// ```
            pub fn get_ref(&self) -> &$p {
                &self.inner
            }

            #[doc = concat!("A mutable reference to the inner ", $noun, ".")]
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::io::Cursor;
            ///
            #[doc = concat!("let mut io = ", "hashwheel::io::", stringify!($ty), "::new(Cursor::new(vec![1, 2, 3]));")]
            /// io.get_mut().set_position(2);
            /// assert_eq!(io.get_ref().position(), 2);
            /// # }
            /// ```
            pub fn get_mut(&mut self) -> &mut $p {
                &mut self.inner
            }

            #[doc = concat!("A pinned mutable reference to the inner ", $noun, ".")]
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::io::Cursor;
            ///
            #[doc = concat!("let mut io = Box::pin(", "hashwheel::io::", stringify!($ty), "::new(Cursor::new(vec![1, 2, 3])));")]
            /// io.as_mut().get_pin_mut().set_position(1);
            /// assert_eq!(io.get_ref().position(), 1);
            /// # }
            /// ```
            pub fn get_pin_mut(self: ::std::pin::Pin<&mut Self>) -> ::std::pin::Pin<&mut $p> {
                self.project().inner
            }

            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::io::Cursor;
            ///
            #[doc = concat!("let io = ", "hashwheel::io::", stringify!($ty), "::new(Cursor::new(vec![1, 2, 3]));")]
            /// let cursor: Cursor<Vec<u8>> = io.into_inner();
            /// assert_eq!(cursor.into_inner(), [1, 2, 3]);
            /// # }
            /// ```
            pub fn into_inner(self) -> $p {
                self.inner
            }
        }

        impl<$p: ::tokio::io::AsyncSeek> ::tokio::io::AsyncSeek for $ty<$p> {
            fn start_seek(
                self: ::std::pin::Pin<&mut Self>,
                position: ::std::io::SeekFrom,
            ) -> ::std::io::Result<()> {
                self.project().inner.start_seek(position)
            }

            timed!(None, poll_complete() -> u64);
        }

        impl<$p: ::tokio::io::AsyncRead> ::tokio::io::AsyncRead for $ty<$p> {
            timed!($read, poll_read(buf: &mut ::tokio::io::ReadBuf<'_>) -> ());
        }

        impl<$p: ::tokio::io::AsyncBufRead> ::tokio::io::AsyncBufRead for $ty<$p> {
            timed!($read, poll_fill_buf() -> &[u8]);

            fn consume(self: ::std::pin::Pin<&mut Self>, amt: usize) {
                self.project().inner.consume(amt);
            }
        }

        impl<$p: ::tokio::io::AsyncWrite> ::tokio::io::AsyncWrite for $ty<$p> {
            timed!($write, poll_write(buf: &[u8]) -> usize);
            timed!($write, poll_write_vectored(bufs: &[::std::io::IoSlice<'_>]) -> usize);
            timed!($write, poll_flush() -> ());
            timed!($write, poll_shutdown() -> ());

            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
        }
    };
}

/// The getter `$get` and the setters `$set` and `$pinned` of the `$noun`
/// timeout of `$ty<$p>`, the timeout `$which` (see `Timeouts`); the doc
/// comments given say what setting it does to an operation.
macro_rules! timeout {
    ($ty:ident<$p:ident>, $which:expr, $noun:literal, $get:ident, $set:ident, $pinned:ident, $(#[$doc:meta])*) => {
        impl<$p> $ty<$p> {
            #[doc = concat!("The ", $noun, " timeout; `None` (no timeout) until one is set.")]
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// let (_peer, socket) = tokio::io::duplex(64);
            #[doc = concat!("let io = hashwheel::io::", stringify!($ty), "::new(socket);")]
            #[doc = concat!("assert_eq!(io.", stringify!($get), "(), None);")]
            /// # }
            /// ```
            pub fn $get(&self) -> Option<::std::time::Duration> {
                self.timeouts.get($which)
            }

            #[doc = concat!("Sets the ", $noun, " timeout; `None` removes it.")]
            ///
            $(#[$doc])*
            ///
            /// `Duration::ZERO` fails every operation it times that would
            /// wait, without waiting. A timeout too large for an `Instant`
            /// (`Duration::MAX`) ends 30 years on, where tokio puts such a
            /// deadline, instead of panicking.
            ///
            /// The wrapper is [`Unpin`] when what it wraps is, so this takes
            /// `&mut self` at any time, and does what
            #[doc = concat!("[`", stringify!($pinned), "`](", stringify!($ty), "::", stringify!($pinned), ") does.")]
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::time::Duration;
            ///
            /// let (_peer, socket) = tokio::io::duplex(64);
            #[doc = concat!("let mut io = ", "hashwheel::io::", stringify!($ty), "::new(socket);")]
            #[doc = concat!("io.", stringify!($set), "(Some(Duration::from_secs(5)));")]
            #[doc = concat!("assert_eq!(io.", stringify!($get), "(), Some(Duration::from_secs(5)));")]
            #[doc = concat!("io.", stringify!($set), "(None); // no timeout again")]
            #[doc = concat!("assert_eq!(io.", stringify!($get), "(), None);")]
            /// # }
            /// ```
            pub fn $set(&mut self, timeout: Option<::std::time::Duration>) {
                self.timeouts.set($which, timeout);
            }

            #[doc = concat!("Sets the ", $noun, " timeout of a pinned wrapper: the same as")]
            #[doc = concat!("[`", stringify!($set), "`](", stringify!($ty), "::", stringify!($set), "),")]
            /// for a wrapped type that is not [`Unpin`] (and for
            /// tokio-io-timeout's callers).
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
            /// # async fn main() {
            /// use std::time::Duration;
            ///
            /// let (_peer, socket) = tokio::io::duplex(64);
            #[doc = concat!("let mut io = Box::pin(", "hashwheel::io::", stringify!($ty), "::new(socket));")]
            #[doc = concat!("io.as_mut().", stringify!($pinned), "(Some(Duration::from_secs(5)));")]
            #[doc = concat!("assert_eq!(io.", stringify!($get), "(), Some(Duration::from_secs(5)));")]
            /// # }
            /// ```
            pub fn $pinned(
                self: ::std::pin::Pin<&mut Self>,
                timeout: Option<::std::time::Duration>,
            ) {
                self.project().timeouts.set($which, timeout);
            }
        }
    };
}

/// One `poll_*` method of a wrapper: the inner stream's, its result passed
/// through the wrapper's timeouts as an operation of direction `$dir`.
macro_rules! timed {
    ($dir:expr, $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(
            self: ::std::pin::Pin<&mut Self>,
            cx: &mut ::std::task::Context<'_>,
            $($arg: $ty),*
        ) -> ::std::task::Poll<::std::io::Result<$out>> {
            let this = self.project();
            let r = this.inner.$name(cx, $($arg),*);
            this.timeouts.check($dir, cx, r)
        }
    };
}
