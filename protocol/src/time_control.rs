//! Time controls as people write them: `BASE+INCREMENT`, the base in minutes
//! and the increment in seconds unless a unit says otherwise (`5+2`, `1.5+0`,
//! `90s+1`, `3m+2`, `1h+30`). One reading for every command that takes a
//! `--clock`, so `5+2` means the same everywhere.

use crate::wire::Clock;

/// The longest bank and increment the protocol allows (docs/protocol.md).
pub const MAX_BANK_MS: u64 = 86_400_000;
pub const MAX_INCREMENT_MS: u64 = 3_600_000;

const HOW: &str = "write minutes+seconds, e.g. 5+2 (5 minutes, 2 seconds a move), \
                   1.5+0, 90s+1 or 1h+30";

/// Checks a clock given on the wire; the error names the field, its range
/// and the value given.
pub fn check_clock(clock: &Clock) -> Result<(), String> {
    if !(1..=MAX_BANK_MS).contains(&clock.initial_ms) {
        return Err(format!(
            "clock.initial_ms: must be 1 to {MAX_BANK_MS} (24 hours), got {}",
            clock.initial_ms
        ));
    }
    if clock.increment_ms > MAX_INCREMENT_MS {
        return Err(format!(
            "clock.increment_ms: must be at most {MAX_INCREMENT_MS} (1 hour), got {}",
            clock.increment_ms
        ));
    }
    Ok(())
}

/// Reads a time control; the error says what is wrong and how to write it.
pub fn parse_time_control(text: &str) -> Result<Clock, String> {
    let (base, increment) = match text.split_once('+') {
        Some((base, increment)) => (base, Some(increment)),
        None => (text, None),
    };
    let initial_ms = duration_ms(base, 60_000).map_err(|e| format!("the time {e}; {HOW}"))?;
    let increment_ms = match increment {
        Some(inc) => duration_ms(inc, 1_000).map_err(|e| format!("the increment {e}; {HOW}"))?,
        None => 0,
    };
    if initial_ms == 0 {
        return Err(format!("the time must be more than 0; {HOW}"));
    }
    if initial_ms > MAX_BANK_MS {
        return Err("the time may be at most 24 hours".to_string());
    }
    if increment_ms > MAX_INCREMENT_MS {
        return Err("the increment may be at most 1 hour".to_string());
    }
    Ok(Clock {
        initial_ms,
        increment_ms,
    })
}

/// A number with an optional unit (`s`, `m`, `h`), `unit_ms` when there is
/// none, in milliseconds.
fn duration_ms(text: &str, unit_ms: u64) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit_ms) = match text.char_indices().last() {
        Some((i, 's' | 'S')) => (&text[..i], 1_000),
        Some((i, 'm' | 'M')) => (&text[..i], 60_000),
        Some((i, 'h' | 'H')) => (&text[..i], 3_600_000),
        _ => (text, unit_ms),
    };
    let number = number.trim();
    let well_formed = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().filter(|&c| c == '.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    if !well_formed {
        return Err(format!(
            "{text:?} is not a number (with s, m or h after it if you like)"
        ));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    let ms = value * unit_ms as f64;
    // Past a day nothing is allowed anyway; this keeps the cast exact.
    if ms > 1e12 {
        return Err(format!("{text:?} is far too long"));
    }
    Ok(ms.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> (u64, u64) {
        let c = parse_time_control(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        (c.initial_ms, c.increment_ms)
    }

    #[test]
    fn minutes_and_seconds_unless_a_unit_says_otherwise() {
        assert_eq!(ms("5+2"), (300_000, 2_000));
        // The same reading on both sides of 60: no guessing.
        assert_eq!(ms("59+0"), (3_540_000, 0));
        assert_eq!(ms("60+0"), (3_600_000, 0));
        assert_eq!(ms("2+1"), (120_000, 1_000));
        assert_eq!(ms("1.5+0"), (90_000, 0));
        assert_eq!(ms("3m+2"), (180_000, 2_000));
        assert_eq!(ms("300s+2"), (300_000, 2_000));
        assert_eq!(ms("90s"), (90_000, 0));
        assert_eq!(ms("1h+30"), (3_600_000, 30_000));
        assert_eq!(ms(" 10 + 0.5s "), (600_000, 500));
        assert_eq!(ms("1+1m"), (60_000, 60_000));
    }

    #[test]
    fn what_is_wrong_is_named() {
        for (text, says) in [
            ("", "the time \"\" is not a number"),
            ("abc", "the time \"abc\" is not a number"),
            ("1,5+0", "the time \"1,5\" is not a number"),
            ("5+x", "the increment \"x\" is not a number"),
            ("-5+0", "the time \"-5\" is not a number"),
            ("0+2", "the time must be more than 0"),
            ("25h", "at most 24 hours"),
            ("5+2h", "at most 1 hour"),
            ("1.2.3", "is not a number"),
            ("99999999999999999999999", "far too long"),
            ("5++2", "the increment \"+2\" is not a number"),
        ] {
            let e = parse_time_control(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
