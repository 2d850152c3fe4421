use super::*;

/// The slot is no larger than an `Option<Sleep>`: niche filling finds
/// room for its other variants. With a 32-byte `Sleep`, a wrapper keeps
/// 56 bytes for its timeouts.
#[test]
fn the_slot_is_the_size_of_an_optional_sleep() {
    assert_eq!(size_of::<Slot>(), size_of::<Option<Sleep>>());
    assert_eq!(size_of::<Option<Sleep>>(), 32);
    assert_eq!(size_of::<State<1>>(), 56);
    assert_eq!(size_of::<State<2>>(), 56);
}

/// Every timeout reads back as it was set, in the word or in `More`;
/// the word holds one timeout of at most `NS_MAX` nanoseconds, of any
/// kind, and a second one moves both to `More`.
#[test]
fn every_timeout_reads_back_as_set() {
    let ms = Duration::from_millis;
    for (t, in_word) in [
        (Duration::ZERO, true),
        (Duration::from_nanos(1), true),
        (Duration::new(5, 7), true),
        (ms(60_000), true),
        (Duration::from_nanos(NS_MAX), true),
        (Duration::from_nanos(NS_MAX + 1), false),
        (Duration::MAX, false),
    ] {
        for which in [IDLE, 0, 1] {
            let mut s = Timeouts::<2>::new();
            s.set(which, Some(t));
            assert_eq!(s.get(which), Some(t));
            let more = s.state.more().is_some();
            assert_eq!(more, !in_word, "{t:?} {which:?} in More");
            let other = if which == IDLE { 1 } else { IDLE };
            assert_eq!(s.get(other), None);
            s.set(other, Some(ms(7)));
            assert_eq!((s.get(which), s.get(other)), (Some(t), Some(ms(7))));
            s.set(which, None);
            assert_eq!((s.get(which), s.get(other)), (None, Some(ms(7))));
        }
        let mut r = Timeouts::<1>::new();
        r.set(0, Some(t));
        assert_eq!(r.get(0), Some(t));
        r.set(0, None);
        assert_eq!(r.get(0), None);
    }
}
