//! How long the sweeper sleeps: a pure function of four bands, with no clock
//! and no randomness inside (the jitter comes in as an argument), so both
//! ends of every band can be asserted.

/// Work is genuinely available: come back almost at once.
pub const FLOOR_MS: i64 = 5;
/// Work is due but the claim came back empty (another sweeper is draining
/// it): a jittered band, so several sweepers do not probe in lockstep.
pub const EMPTY_CLAIM_MIN_MS: i64 = 25;
pub const EMPTY_CLAIM_MAX_MS: i64 = 200;

/// The sleep before the next cycle.
///
/// 1. due and claimed something: [`FLOOR_MS`];
/// 2. due but the claim was empty, or the next timer is already late but in
///    someone else's hands: `EMPTY_CLAIM_MIN_MS + jitter x (MAX - MIN)`;
/// 3. the next timer is in the future: until it is due;
/// 4. nothing scheduled: `max_sleep_ms`.
///
/// Always clamped to `FLOOR_MS..=max_sleep_ms`; `jitter` is clamped to 0..=1.
pub fn sleep_ms(
    next_in_ms: Option<i64>,
    due: i64,
    empty_claim: bool,
    jitter: f64,
    max_sleep_ms: i64,
) -> i64 {
    let max = max_sleep_ms.max(FLOOR_MS);
    let jitter = if jitter.is_nan() {
        0.0
    } else {
        jitter.clamp(0.0, 1.0)
    };
    let band = |ms: i64| ms.clamp(FLOOR_MS, max);
    let jittered = || {
        band(
            EMPTY_CLAIM_MIN_MS
                + ((EMPTY_CLAIM_MAX_MS - EMPTY_CLAIM_MIN_MS) as f64 * jitter).round() as i64,
        )
    };
    match next_in_ms {
        _ if due > 0 && !empty_claim => band(FLOOR_MS),
        _ if due > 0 => jittered(),
        Some(n) if n <= 0 => jittered(),
        Some(n) => band(n),
        None => max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_one_work_available() {
        assert_eq!(sleep_ms(Some(-5), 10, false, 0.0, 1000), FLOOR_MS);
        assert_eq!(sleep_ms(None, 1, false, 1.0, 1000), FLOOR_MS);
    }

    #[test]
    fn band_two_empty_claim_is_jittered_between_its_ends() {
        assert_eq!(sleep_ms(Some(-5), 10, true, 0.0, 1000), EMPTY_CLAIM_MIN_MS);
        assert_eq!(sleep_ms(Some(-5), 10, true, 1.0, 1000), EMPTY_CLAIM_MAX_MS);
        assert_eq!(
            sleep_ms(Some(-1), 0, false, 0.0, 1000),
            EMPTY_CLAIM_MIN_MS,
            "late but claimed elsewhere"
        );
        assert_eq!(sleep_ms(Some(0), 0, false, 1.0, 1000), EMPTY_CLAIM_MAX_MS);
        assert_eq!(
            sleep_ms(Some(-5), 10, true, 7.0, 1000),
            EMPTY_CLAIM_MAX_MS,
            "jitter is clamped"
        );
        assert_eq!(
            sleep_ms(Some(-5), 10, true, 1.0, 100),
            100,
            "the ceiling still clamps"
        );
    }

    #[test]
    fn band_three_sleeps_until_the_next_timer() {
        assert_eq!(
            sleep_ms(Some(1), 0, false, 0.5, 1000),
            FLOOR_MS,
            "floor at the near end"
        );
        assert_eq!(sleep_ms(Some(300), 0, false, 0.5, 1000), 300);
        assert_eq!(sleep_ms(Some(1000), 0, false, 0.5, 1000), 1000);
        assert_eq!(
            sleep_ms(Some(86_400_000), 0, false, 0.5, 1000),
            1000,
            "clamped at the far end"
        );
    }

    #[test]
    fn band_four_nothing_scheduled() {
        assert_eq!(sleep_ms(None, 0, false, 0.0, 1000), 1000);
        assert_eq!(sleep_ms(None, 0, true, 1.0, 250), 250);
        assert_eq!(
            sleep_ms(None, 0, false, 0.0, 0),
            FLOOR_MS,
            "never a zero-sleep spin"
        );
    }
}
